"""Where an op declares its public names: ``torch.<name>``, ``Tensor.<name>`` and the in-place
method ``Tensor.<name>_``, next to the function or Op class it exposes.

A family module declares them with two decorators::

    @export("hypot", method=True, inplace=True)   # torch.hypot, Tensor.hypot, Tensor.hypot_
    def hypot(input, other):
        return HypotBackward0.apply(input, other)

    tensor_method("__add__", "__radd__")(direct(AddBackward0, 2, "__add__"))

``TORCH`` and ``METHODS`` collect the declarations; ``gpugrad/__init__.py`` exports ``TORCH``
and ``gpugrad/ops/__init__.py``, once every family is imported, installs ``METHODS`` on Tensor.
One name declared twice with two different objects is an error at import.
"""
from __future__ import annotations

TORCH: dict = {}     # torch.<name> -> the function (or object) gpugrad exports
METHODS: dict = {}   # Tensor.<name> -> function, property or descriptor


def _declare(table: dict, where: str, name: str, obj) -> None:
    old = table.get(name, obj)
    if old is not obj:
        raise RuntimeError(f"{where}.{name} is declared twice: as {old!r} and as {obj!r}")
    table[name] = obj


def in_place(fn):
    """The generic in-place method of ``fn(self, *args, **kw)``: the op out of place, written
    back into self (version checks, ``CopySlices`` for views)."""
    def method(s, *a, **k):
        from .tensor_inplace import inplace  # layering: the in-place machinery is the ops layer
        return inplace(s, lambda t, *v: fn(t, *v, **k), *a)
    return method


def _names(given, default):
    if given is True:
        return default
    if given is False or given is None:
        return ()
    return (given,) if isinstance(given, str) else tuple(given)


def export(*names, method=(), inplace=(), torch=TORCH, methods=METHODS):
    """Decorator: ``torch.<n>`` for each of ``names`` (default: the function's name); with
    ``method=True`` also ``Tensor.<n>`` under the same names (or the method names given); with
    ``inplace=True`` also the in-place method ``Tensor.<n>_`` for each method name (or the names
    given). ``torch``/``methods`` name the tables (a test builds its own)."""
    def declare(fn):
        public = names or (fn.__name__,)
        for n in public:
            _declare(torch, "torch", n, fn)
        for n in _names(method, public):
            _declare(methods, "Tensor", n, fn)
        for n in _names(inplace, tuple(m + "_" for m in (_names(method, public) or public))):
            _declare(methods, "Tensor", n, in_place(fn))
        return fn
    return declare


def tensor_method(*names, methods=METHODS):
    """Decorator (or plain call on an object): ``Tensor.<n>`` for each of ``names`` is the
    object: a function, an operator, a property or another descriptor."""
    def declare(obj):
        for n in names or (obj.__name__,):
            _declare(methods, "Tensor", n, obj)
        return obj
    return declare


def torch_function(*names, torch=TORCH):
    """Decorator (or plain call on an object): ``torch.<n>`` for each of ``names``."""
    def declare(obj):
        for n in names or (obj.__name__,):
            _declare(torch, "torch", n, obj)
        return obj
    return declare


def _method(name):
    def fn(input, *args, **kw):
        return getattr(input, name)(*args, **kw)
    fn.__name__ = name
    return fn


def method_as_function(*names, torch=TORCH):
    """``torch.<n>(input, ...)`` for each of ``names``: the Tensor method ``input.<n>(...)``
    (PyTorch's top-level in-place functions, ``torch.abs_(x)``)."""
    for name in names:
        _declare(torch, "torch", name, _method(name))
