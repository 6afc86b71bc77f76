"""``Tensor``: an array (numpy or CuPy) plus what autograd needs to know about it.

Only graph state lives here; every computation is an op in ``gpugrad.ops`` (the methods that
call ops are declared next to them, ``gpugrad/_exports.py``, and installed by ``gpugrad.ops``).
"""
from __future__ import annotations

import operator
import sys
import warnings
import weakref

import numpy as np

from . import _backend
from ._bfloat16 import is_float, is_inexact
from .autograd.grad_mode import state as grad_state

NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead.")


class _Defaults:
    float = np.dtype(np.float32)


DEFAULT = _Defaults()


class Size(tuple):
    """A tensor's shape: a tuple that prints as ``gpugrad.Size([2, 3])``."""

    def __repr__(self):
        return f"gpugrad.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


class Version:
    """Version counter shared by a tensor, its views and its detached aliases; ``last``: a weak
    reference to the node of the last recorded in-place write, and the array written (named in
    the modified-value error; weak, so a long-lived tensor does not keep an old graph alive)."""
    __slots__ = ("v", "last")

    def __init__(self, v=0):
        self.v = v
        self.last = None


_SCALAR_NAMES = {"float32": "float", "float64": "double", "float16": "half", "int64": "long",
                 "int32": "int", "int16": "short", "int8": "char", "uint8": "byte",
                 "bool": "bool"}
_TYPE_NAMES = {k: v.capitalize() + "Tensor" for k, v in _SCALAR_NAMES.items()}
_TYPE_NAMES["bfloat16"] = "BFloat16Tensor"


def as_dim(dim) -> int:
    """A dim given as a numpy integer as an int; a bool, float, string, None or tuple is
    PyTorch's TypeError (a float dim is not truncated)."""
    if not isinstance(dim, bool):
        try:
            return operator.index(dim)
        except TypeError:
            pass
    t = type(dim)
    name = t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
    raise TypeError(f"argument 'dim' must be int, not {name}")


def scalar_name(dtype) -> str:
    """PyTorch's scalar type name of a dtype, as its messages spell it: 'float' for float32,
    'long' for int64 (capitalize() gives 'Float', 'Long')."""
    name = np.dtype(dtype).name
    return _SCALAR_NAMES.get(name, name)


def describe(a) -> str:
    """'gpugrad.FloatTensor [3]' for an array (the form PyTorch prints in autograd errors)."""
    cuda = "" if isinstance(a, np.ndarray) else "cuda."
    return f"gpugrad.{cuda}{_TYPE_NAMES.get(a.dtype.name, a.dtype.name)} {list(a.shape)}"


_new = object.__new__


class Tensor:
    """A multi-dimensional array that records the operations applied to it."""
    __slots__ = ("_data", "_rg", "grad_fn", "_out_nr", "_vbox", "_grad", "_acc", "_meta",
                 "__weakref__")
    __array_priority__ = 1000  # ndarray (op) Tensor defers to Tensor's reflected operator

    def __init__(self, *args, requires_grad=False):
        """PyTorch's legacy constructor: ``Tensor([1, 2])`` (data, in the default float dtype),
        ``Tensor(2, 3)`` / ``Tensor(size)`` (uninitialised), ``Tensor(tensor)`` (shares it)."""
        from ._creation import legacy_array
        Tensor._init(self, legacy_array(args), bool(requires_grad))

    # -- construction (hot path: no validation) -------------------------------------------------
    def _init(self, data, rg=False, grad_fn=None, out_nr=0):
        self._data = data
        self._rg = rg
        self.grad_fn = grad_fn
        self._out_nr = out_nr
        self._vbox = self._grad = self._acc = self._meta = None

    @staticmethod
    def _make(data, rg=False):
        t = _new(Tensor)
        t._init(data, rg)
        return t

    @staticmethod
    def _make_result(data, node, nr=0):
        t = _new(Tensor)
        t._init(data, True, node, nr)
        return t

    def _m(self) -> dict:
        if self._meta is None:
            self._meta = {}
        return self._meta

    def _version_box(self) -> Version:
        if self._vbox is None:
            self._vbox = Version()
        return self._vbox

    # -- plain attributes -------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[self._dim(dim)]

    @property
    def dtype(self):
        return self._data.dtype

    @property
    def device(self):
        return _backend.device_of(self._data)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return int(self._data.nbytes)

    def is_floating_point(self) -> bool:
        return is_float(self._data.dtype)

    def is_complex(self) -> bool:
        return self._data.dtype.kind == "c"

    def is_contiguous(self, memory_format=None) -> bool:
        """Dense in row-major order, or in the order ``memory_format`` asks for."""
        from ._memory_format import channels_last_axes, contiguous_format, preserve_format
        if memory_format in (None, contiguous_format, preserve_format):
            return bool(self._data.flags.c_contiguous)
        try:
            axes = channels_last_axes(memory_format, self.ndim)
        except RuntimeError:   # the wrong rank for that layout
            return False
        if axes is None:
            return bool(self._data.flags.c_contiguous)
        return bool(self._data.transpose(axes).flags.c_contiguous)

    def is_inference(self) -> bool:
        return bool(self._meta and self._meta.get("inference"))

    def _dim(self, dim: int) -> int:
        n = self._data.ndim
        if dim.__class__ is not int:
            dim = as_dim(dim)
        if not -max(n, 1) <= dim < max(n, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-max(n, 1)}, {max(n, 1) - 1}], but got {dim})")
        return dim % max(n, 1)

    @property
    def _version(self) -> int:
        if self._meta and self._meta.get("inference"):
            raise RuntimeError("Inference tensors do not track version counter.")
        return 0 if self._vbox is None else self._vbox.v

    @property
    def _base(self):
        return self._meta.get("base") if self._meta else None

    @property
    def output_nr(self) -> int:
        return self._out_nr

    @property
    def name(self):
        return self._meta.get("name") if self._meta else None

    # -- autograd attributes ----------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value):
        if self.grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if value and not is_inexact(self._data.dtype):
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        if value and not grad_state.inference and self.is_inference():
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self._rg = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if requires_grad and not is_inexact(self._data.dtype):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if not (requires_grad and self.grad_fn is not None):  # True on a non-leaf: a no-op
            self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad(self):
        if self.grad_fn is not None and self._grad is None and not self.retains_grad:
            warnings.warn(NONLEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._data.shape)}' to a "
                    f"tensor of size '{list(self._data.shape)}'. Please ensure that the gradient "
                    "and the tensor are the same size")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{value._data.dtype.name}' to a "
                    f"tensor with dtype '{self._data.dtype.name}'. Please ensure that the "
                    "gradient and the tensor have the same dtype")
            if value.device != self.device:
                raise RuntimeError(
                    f"attempting to assign a gradient with device type '{value.device}' to a "
                    f"tensor with device type '{self.device}'. Please ensure that the gradient "
                    "and the tensor are on the same device")
        self._grad = value

    @property
    def retains_grad(self) -> bool:
        if self.grad_fn is None or self.grad_fn._extra is None:
            return False
        ref = self.grad_fn._extra.get("retain", {}).get(self._out_nr)
        return ref is not None and ref() is self

    def retain_grad(self) -> None:
        """Keep this non-leaf's gradient in ``.grad`` after backward (a no-op on leaves)."""
        if not self._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None:
            return
        self.grad_fn._x().setdefault("retain", {})[self._out_nr] = weakref.ref(self)

    def register_hook(self, hook):
        """``hook(grad) -> None | Tensor``: called with this tensor's gradient during backward;
        a returned tensor replaces the gradient. Returns a handle with ``remove()``."""
        from .utils.hooks import RemovableHandle
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is None:
            hooks = self._m().setdefault("hooks", [])
        else:
            hooks = self.grad_fn._x().setdefault("tensor_hooks", {}).setdefault(self._out_nr, [])
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)``: called on a leaf after its ``.grad`` has been accumulated."""
        from .utils.hooks import RemovableHandle
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        hooks = self._m().setdefault("post_acc_hooks", [])
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    @property
    def _hooks(self):
        return self._meta.get("hooks") if self._meta else None

    @property
    def _post_acc_hooks(self):
        return self._meta.get("post_acc_hooks") if self._meta else None

    def _accumulate(self, g, create_graph):
        """AccumulateGrad's work: ``self.grad += g`` (in place unless building a graph)."""
        cur = self._grad
        if isinstance(g, Tensor):
            if cur is None:  # a private copy: a later plain backward accumulates into it in place
                self._grad = g.clone() if create_graph else Tensor._make(g._data.copy())
            elif create_graph or grad_state.enabled:
                self._grad = cur + g
            else:
                from . import kernels
                kernels.accumulate_grad(cur._data, g._data)
                cur._version_box().v += 1
            return
        if cur is None:
            self._grad = Tensor._make(g if _sole_owner(g, self._data) else _copy(g, self._data))
        else:
            from . import kernels
            kernels.accumulate_grad(cur._data, g)
            cur._version_box().v += 1

    def _store_grad(self, g):
        """retain_grad's work on a non-leaf."""
        g = g._data if isinstance(g, Tensor) else g
        if self._grad is None:
            self._grad = Tensor._make(_copy(g, self._data))
        else:
            self._grad = Tensor._make(_copy(self._grad._data + g, self._data))

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf) into each leaf's ``.grad``, freeing the graph unless
        ``retain_graph``."""
        from .autograd import backward  # layering: Tensor.backward runs the engine's entry point
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self) -> Tensor:
        """A tensor sharing this one's storage and version counter, cut from the graph."""
        t = Tensor._make(self._data)
        t._vbox = self._version_box()
        return t

    def detach_(self) -> Tensor:
        if self._meta and self._meta.get("base") is not None and self.grad_fn is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self._rg = False
        return self

    @property
    def data(self) -> Tensor:
        """This tensor's values as a tensor outside the graph (no version tracking)."""
        return Tensor._make(self._data)

    @data.setter
    def data(self, value):
        self._data = value._data if isinstance(value, Tensor) else value

    # -- conversion ---------------------------------------------------------------------------
    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               "to Scalar")
        if _backend.captures.count and self._data.__class__ is not np.ndarray:
            _backend.refuse_if_capturing()
        return self._data.item()

    def tolist(self):
        return self._host().tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        if self._rg and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if not isinstance(self._data, np.ndarray):
            if not force:
                raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use "
                                "Tensor.cpu() to copy the tensor to host memory first.")
            return self._host()
        if self._data.dtype.kind == "V":   # bfloat16: numpy has no such dtype, as PyTorch says
            raise TypeError("Got unsupported ScalarType BFloat16")
        return self._data

    def _host(self) -> np.ndarray:
        if isinstance(self._data, np.ndarray):
            return self._data
        _backend.refuse_if_capturing()
        return self._data.get()

    def __array__(self, dtype=None, copy=None):
        if not isinstance(self._data, np.ndarray):
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use "
                            "Tensor.cpu() to copy the tensor to host memory first.")
        a = self._data
        return a if dtype is None else a.astype(dtype, copy=False)

    def __dlpack__(self, stream=None, **kwargs):
        if self._rg:
            raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        if stream is None:
            return self._data.__dlpack__(**kwargs)
        return self._data.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous"
                               if self._data.size else
                               "Boolean value of Tensor with no values is ambiguous")
        return bool(self.item())

    def __float__(self):
        return float(self._scalar())

    def __int__(self):
        return int(self._scalar())

    def _scalar(self):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    def __format__(self, spec):
        """A 0-d tensor formats as its value (``f"{loss}"``, ``f"{loss:.4f}"``), as in PyTorch;
        others print as their repr and take no format spec."""
        if self._data.ndim == 0:
            return format(self.item(), spec)
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return repr(self)

    def __repr__(self):
        from ._format import format_tensor
        return format_tensor(self)

    __hash__ = object.__hash__

    def __reduce_ex__(self, proto):
        return (_rebuild, (self._host(), self._rg))

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                               "the deepcopy protocol at the moment.")
        t = Tensor._make(self._data.copy(), self._rg)
        if self._grad is not None:
            t._grad = Tensor._make(self._grad._data.copy())
        memo[id(self)] = t
        return t


def _rebuild(a, rg):
    return Tensor._make(a, rg)


def _copy(g, like):
    """A private copy of gradient ``g`` laid out as a plain array of ``like``'s dtype."""
    xp = _backend.xp_of(like)
    if isinstance(g, np.generic) or getattr(g, "shape", None) != like.shape:
        return xp.broadcast_to(xp.asarray(g, dtype=like.dtype), like.shape).copy()
    return g.astype(like.dtype, copy=True)


def _sole_owner(g, like) -> bool:
    """True when the engine's buffer is the only holder of gradient ``g`` (a fresh, writable
    array of ``like``'s type, shape and dtype): then ``.grad`` may take it without a copy, as
    PyTorch's AccumulateGrad steals a gradient nobody else references."""
    if g.__class__ is not like.__class__ or g.shape != like.shape or g.dtype != like.dtype:
        return False
    # references: the engine's grads list, _accumulate's and our argument, getrefcount's own
    if sys.getrefcount(g) > 4 or not getattr(g.flags, "writeable", True) or (
            0 in g.strides and g.size > 1):
        return False
    base = g.base
    # the base: the view's .base, our local and getrefcount's argument
    return base is None or (base.base is None and sys.getrefcount(base) <= 3)


def _wrap_grad(g):
    if g is None or isinstance(g, Tensor):
        return g
    return Tensor._make(np.asarray(g) if isinstance(g, np.generic) else g)


def _unwrap_grad(out, like, hook=None):
    """A hook's return value, back in the form the engine carries (array or tensor), with
    PyTorch's checks: a hook may not change a gradient's shape or dtype."""
    if out is None:
        return None
    if not isinstance(out, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(out).__name__}'")
    if like is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    name = getattr(hook, "__name__", type(hook).__name__)
    if tuple(out._data.shape) != tuple(like.shape):
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    if out._data.dtype != like.dtype:
        was = describe(like._data if isinstance(like, Tensor) else like).split()[0]
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {was} got "
                           f"{describe(out._data).split()[0]})")
    return out if isinstance(like, Tensor) or like is None and grad_state.enabled else out._data


def zero_grads(params, set_to_none=True):
    """Reset the ``.grad`` of ``params``: drop it (None), or zero it in place, cut from any graph
    (Optimizer.zero_grad and Module.zero_grad)."""
    for p in params:
        g = p._grad
        if g is None:
            continue
        if set_to_none:
            p._grad = None
        else:
            if g.grad_fn is not None:
                g.detach_()
            else:
                g.requires_grad_(False)
            g.zero_()
