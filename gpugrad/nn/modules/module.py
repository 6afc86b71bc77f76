"""``Module``: the base of every layer. Assigning a ``Parameter``, a ``Module`` or a registered
buffer as an attribute registers it, so ``parameters()``, ``state_dict()``, ``to()`` and ``repr``
see the whole tree. Also the hooks every module runs (``register_module_forward_hook`` ...),
where PyTorch keeps them; their machinery is in ``_hooks.py``, the state dict in
``_state_dict.py``."""
from __future__ import annotations

from ... import _backend
from ..._bfloat16 import is_inexact
from ...autograd.grad_mode import no_grad
from ...autograd.graph import RemovableHandle
from ...tensor import Tensor, describe, zero_grads
from ..parameter import Buffer, Parameter
from . import _hooks
from ._hooks import (
    register_module_backward_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
)
from ._state_dict import StateDictMixin, _IncompatibleKeys  # noqa: F401  (re-exported)

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_backward_hook", "register_module_full_backward_pre_hook",
           "register_module_full_backward_hook"]

# Bumped whenever any module's parameters or children change, so a module's cached parameter
# list (the per-step hot path: zero_grad, optimizers) is rebuilt only after a change.
_structure = [0]


class _Registry(dict):
    """``_parameters`` / ``_modules``: a dict whose every mutation invalidates cached lists."""
    __slots__ = ()


def _invalidating(method):
    def mutate(self, *args, **kwargs):
        _structure[0] += 1
        return method(self, *args, **kwargs)
    return mutate


for _name in ("__setitem__", "__delitem__", "__ior__", "pop", "popitem", "clear", "update",
              "setdefault"):
    setattr(_Registry, _name, _invalidating(getattr(dict, _name)))


def _typename(obj) -> str:
    if isinstance(obj, Tensor):
        return describe(obj._data).split(" ")[0]
    t = type(obj)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _addindent(s, n):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + line for line in lines[1:])


def _check_name(module, kind, name, store):
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
    if "." in name:
        raise KeyError(f"{kind} name can't contain \".\"")
    if name == "":
        raise KeyError(f"{kind} name can't be empty string \"\"")
    if hasattr(module, name) and name not in store:
        raise KeyError(f"attribute '{name}' already exists")


_STATE_HOOK_LISTS = ("_state_dict_pre_hooks", "_state_dict_hooks", "_load_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks")


class Module(StateDictMixin):
    """Base class for all neural network modules; subclasses define ``forward``."""

    training: bool
    _version = 1   # bump in a subclass whose state dict layout changes; see ``_metadata``
    call_super_init = False
    dump_patches = False

    def __init__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = _Registry()
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = _Registry()
        d["_forward_hooks"] = []      # (hook, with_kwargs, always_call)
        d["_forward_pre_hooks"] = []  # (hook, with_kwargs)
        d["_backward_hooks"] = []
        d["_backward_pre_hooks"] = []
        d["_is_full_backward_hook"] = None
        d["_param_cache"] = None
        for name in _STATE_HOOK_LISTS:
            d[name] = []

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"Module [{type(self).__name__}] is missing the required "
                                  "\"forward\" function")

    def __call__(self, *args, **kwargs):
        if self._forward_pre_hooks or self._forward_hooks or _hooks.active:
            return _hooks.call(self, args, kwargs)
        return self.forward(*args, **kwargs)

    def __setstate__(self, state):
        self.__dict__.update(state)
        d = self.__dict__
        for name in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks",
                     "_backward_pre_hooks") + _STATE_HOOK_LISTS:
            d.setdefault(name, [])
        d.setdefault("_is_full_backward_hook", None)
        if d["_backward_hooks"] or d["_backward_pre_hooks"]:
            _hooks.note_module_backward_hook()

    # -- hooks --------------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args) -> None | new args`` runs before ``forward``
        (``hook(module, args, kwargs) -> None | (new args, new kwargs)`` with ``with_kwargs``)."""
        return self._add_hook(self._forward_pre_hooks, (hook, with_kwargs), prepend)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """``hook(module, args, output) -> None | new output`` runs after ``forward``
        (``hook(module, args, kwargs, output)`` with ``with_kwargs``). ``always_call``: run it
        even when the call raises, with output None unless forward returned."""
        return self._add_hook(self._forward_hooks, (hook, with_kwargs, always_call), prepend)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output) -> None | new grad_output`` runs when the gradients with
        respect to the module's outputs are known, before those with respect to its inputs are
        computed. Entries are None for outputs that are not tensors or got no gradient."""
        _hooks.note_module_backward_hook()
        return self._add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output) -> None | new grad_input`` runs when the
        gradients with respect to the module's positional inputs are computed (None for
        non-tensor inputs, zeros for tensors that need no grad). If no input requires grad it
        runs with grad_input all None when grad_output is known; if no output requires grad it
        never runs. With these hooks the module's forward sees, and the caller gets, aliases
        of the tensors passed in and returned."""
        if self._is_full_backward_hook is False:
            raise RuntimeError(_hooks.MIXED.format("on a single Module"))
        self.__dict__["_is_full_backward_hook"] = True
        _hooks.note_module_backward_hook()
        return self._add_hook(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        """Deprecated in favour of ``register_full_backward_hook``. ``hook(module, grad_input,
        grad_output)`` runs as a post-hook of the node that made the module's first output
        tensor, with that node's gradients: the module's own only when its forward recorded a
        single node on its inputs (a FutureWarning says so at the call otherwise)."""
        if self._is_full_backward_hook is True:
            raise RuntimeError(_hooks.MIXED.format("on a single Module"))
        self.__dict__["_is_full_backward_hook"] = False
        _hooks.note_module_backward_hook()
        return self._add_hook(self._backward_hooks, hook, False)

    @staticmethod
    def _add_hook(hooks, entry, prepend):
        if prepend:
            hooks.insert(0, entry)
        else:
            hooks.append(entry)
        return RemovableHandle(hooks, entry)

    # -- registration -------------------------------------------------------------------------
    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(self, "parameter", name, self._parameters)
        if param is not None:
            if not isinstance(param, Parameter):
                raise TypeError(f"cannot assign '{_typename(param)}' object to parameter "
                                f"'{name}' (gpugrad.nn.Parameter or None required)")
            if param.grad_fn is not None:
                raise ValueError(
                    f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters "
                    f"must be created explicitly. To express '{name}' as a function of another "
                    "Tensor, compute the value in the forward() method.")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(self, "buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(gpugrad Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f"module name can't contain \".\", got: {name}")
        if name == "":
            raise KeyError("module name can't be empty string \"\"")
        self._modules[name] = module

    def register_module(self, name, module):
        """Alias for ``add_module``."""
        self.add_module(name, module)

    def __setattr__(self, name, value):
        # NOTE: a name already in the store it is assigned to keeps its place there (tied
        # weights keep the state dict's order); only the other stores forget it.
        d = self.__dict__
        params = d.get("_parameters")
        modules = d.get("_modules")
        buffers = d.get("_buffers")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, buffers, modules)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(gpugrad.nn.Parameter or None expected)")
            self.register_parameter(name, None)
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, params, buffers)
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(gpugrad.nn.Module or None expected)")
            modules[name] = None
        elif isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(gpugrad.nn.Buffer, gpugrad.Tensor or None expected)")
            persistent = (value.persistent if isinstance(value, Buffer)
                          else name not in d["_non_persistent_buffers_set"])
            self.register_buffer(name, value, persistent)
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name, *stores):
        """Drop ``name`` from the instance dict and ``stores`` before it is registered in
        another store."""
        d = self.__dict__
        d.pop(name, None)
        for store in stores:
            if name in store:
                del store[name]
        d["_non_persistent_buffers_set"].discard(name)

    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            s = d.get(store)
            if s is not None and name in s:
                return s[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if name in d.get(store, ()):
                del d[store][name]
                d["_non_persistent_buffers_set"].discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = set(super().__dir__())
        for store in ("_parameters", "_buffers", "_modules"):
            keys.update(self.__dict__.get(store, ()))
        return sorted(k for k in keys if not k[0].isdigit())

    # -- traversal ----------------------------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                sub = prefix + ("." if prefix else "") + name
                yield from m.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and m not in seen:
                seen.add(m)
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, store, prefix, recurse, remove_duplicate):
        seen = set()
        mods = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse
                else [(prefix, self)])
        for mod_prefix, m in mods:
            for k, v in getattr(m, store).items():
                if v is None or (remove_duplicate and v in seen):
                    continue
                seen.add(v)
                yield mod_prefix + ("." if mod_prefix else "") + k, v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        if recurse:
            return iter(self._param_list())
        return (p for _, p in self.named_parameters(recurse=False))

    def _param_list(self):
        """All parameters, deduplicated, cached until some module's structure changes."""
        c = self._param_cache
        if c is None or c[0] != _structure[0]:
            c = (_structure[0], [p for _, p in self.named_parameters()])
            self.__dict__["_param_cache"] = c
        return c[1]

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        return (b for _, b in self.named_buffers(recurse=recurse))

    def get_submodule(self, target):
        """The submodule at dotted path ``target`` ('' is the module itself)."""
        if target == "":
            return self
        m = self
        for item in target.split("."):
            if not hasattr(m, item):
                raise AttributeError(f"{m._get_name()} has no attribute `{item}`")
            m = getattr(m, item)
            if not isinstance(m, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return m

    def set_submodule(self, target, module, strict=False):
        """Put ``module`` at dotted path ``target``, whose parent must exist; ``strict``: only
        replace an existing submodule."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def _get_member(self, target):
        path, _, name = target.rpartition(".")
        m = self.get_submodule(path)
        if not hasattr(m, name):
            raise AttributeError(f"{m._get_name()} has no attribute `{name}`")
        return m, name, getattr(m, name)

    def get_parameter(self, target):
        """The parameter at dotted path ``target``."""
        _, name, p = self._get_member(target)
        if not isinstance(p, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return p

    def get_buffer(self, target):
        """The buffer at dotted path ``target``."""
        m, name, b = self._get_member(target)
        if name not in m._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return b

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # -- modes and gradients ------------------------------------------------------------------
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            m.__dict__["training"] = mode
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        zero_grads(self._param_list(), set_to_none)

    # -- device and dtype ---------------------------------------------------------------------
    def _apply(self, fn, recurse=True):
        if recurse:
            for m in self.children():
                m._apply(fn)
        with no_grad():
            for p in self._parameters.values():
                if p is None:
                    continue
                new = fn(p)
                if new is not p:
                    p.data = new   # keep the Parameter object, as PyTorch does by default
                g = p._grad
                if g is not None:
                    new = fn(g)
                    if new is not g:
                        g.data = new
            for k, b in self._buffers.items():
                if b is not None:
                    self._buffers[k] = fn(b)
        return self

    def to(self, *args, **kwargs):
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(tensor)``: moves and casts
        parameters and buffers in place (only floating-point ones change dtype)."""
        from ...ops.conversion import to_args
        device, dtype = to_args(args, kwargs)
        if dtype is not None and not is_inexact(dtype):
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got "
                            f"desired dtype={dtype}")

        def convert(t):
            return t.to(device=device, dtype=dtype if t.is_floating_point() else None)
        return self._apply(convert)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to(_backend.device("cuda", device) if isinstance(device, int) or device is None
                       else device)

    def float(self):
        return self.to("float32")

    def double(self):
        return self.to("float64")

    def half(self):
        return self.to("float16")

    def bfloat16(self):
        return self.to("bfloat16")

    def type(self, dst_type):
        """Cast every parameter and buffer (integer ones too) to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    def to_empty(self, *, device, recurse=True):
        """Give every parameter and buffer fresh storage on ``device`` without copying; the
        values are unspecified (zeros here)."""
        from ..._creation import zeros_like
        return self._apply(lambda t: zeros_like(t, device=device), recurse=recurse)

    def share_memory(self):
        return self._apply(lambda t: t.share_memory_())

    def compile(self, *args, **kwargs):
        """In-place ``gpugrad.compile`` of the module: nothing to do (every op runs eagerly)."""

    # -- printing -----------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({k}): " + _addindent(repr(m), 2) for k, m in self._modules.items()]
        lines = extra_lines + child_lines
        s = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                s += extra_lines[0]
            else:
                s += "\n  " + "\n  ".join(lines) + "\n"
        return s + ")"
