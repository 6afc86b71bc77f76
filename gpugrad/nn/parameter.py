"""``Parameter``: a leaf tensor that a ``Module`` registers as one of its learnable weights;
``Buffer``; and the ``UninitializedParameter`` / ``UninitializedBuffer`` placeholders of lazy
modules."""
from __future__ import annotations

from .. import _creation
from .._creation import empty
from ..tensor import Tensor


class Parameter(Tensor):
    """A tensor that is a module parameter when assigned as a ``Module`` attribute.

    It shares ``data``'s storage and version counter (as ``data.detach()`` would) and requires
    grad by default. Ops on it return plain tensors.
    """
    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        elif not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): data must be a Tensor, got {type(data).__name__}")
        p = Tensor.__new__(cls)
        Tensor._init(p, data._data)
        p._vbox = data._version_box()
        if requires_grad:
            p.requires_grad = True   # validates the dtype, as PyTorch does
        return p

    def __init__(self, data=None, requires_grad=True):
        pass  # everything happens in __new__ (Tensor.__init__ would re-create the storage)

    def __repr__(self):
        return "Parameter containing:\n" + Tensor.__repr__(self)

    def __deepcopy__(self, memo):
        p = Parameter(Tensor._make(self._data.copy()), self._rg)
        if self._grad is not None:
            p._grad = Tensor._make(self._grad._data.copy())
        memo[id(self)] = p
        return p

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self._host(), self._rg))


def _rebuild_parameter(a, requires_grad):
    return Parameter(Tensor._make(a), requires_grad)


class Buffer(Tensor):
    """A tensor that is a module buffer when assigned as a ``Module`` attribute; ``persistent``
    buffers are part of the state dict. It shares ``data``'s storage and version counter."""
    __slots__ = ()

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty(0)
        elif not isinstance(data, Tensor):
            raise TypeError(f"Buffer(): data must be a Tensor, got {type(data).__name__}")
        b = Tensor.__new__(cls)
        Tensor._init(b, data._data)
        b._vbox = data._version_box()
        if data.requires_grad:
            b.requires_grad = True
        b._m()["persistent"] = bool(persistent)
        return b

    def __init__(self, data=None, *, persistent=True):
        pass  # everything happens in __new__

    @property
    def persistent(self) -> bool:
        return self._m().get("persistent", True)


_NO_SHAPE = ("Can't access the shape of an uninitialized parameter or buffer. This error usually "
             "happens in `load_state_dict` when trying to load an uninitialized parameter into "
             "an initialized one. Call `forward` to initialize the parameters before accessing "
             "their attributes.")


class _Uninitialized:
    """A placeholder with no shape yet; ``materialize`` gives it one (and its plain class)."""
    __slots__ = ()
    cls_to_become: type = Tensor

    def materialize(self, shape, device=None, dtype=None):
        """Become an uninitialised (empty) tensor of ``shape`` of the plain class."""
        data = _creation.empty(tuple(shape), device=device or self.device,
                               dtype=dtype or self.dtype)
        self._data = data._data
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(_NO_SHAPE)

    def size(self, dim=None):
        raise RuntimeError(_NO_SHAPE)

    @property
    def ndim(self):
        raise RuntimeError(_NO_SHAPE)

    def dim(self):
        raise RuntimeError(_NO_SHAPE)

    def numel(self):
        raise RuntimeError(_NO_SHAPE)

    def detach(self):
        return self

    def __repr__(self):
        return f"<{type(self).__name__}>"

    def __deepcopy__(self, memo):
        return type(self)(requires_grad=self._rg)

    def __reduce_ex__(self, proto):
        return (type(self), (self._rg,))


class UninitializedParameter(_Uninitialized, Parameter):
    """A parameter whose shape the first input decides."""
    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Parameter.__new__(cls, _creation.empty(0, device=device, dtype=dtype),
                                 requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass


class UninitializedBuffer(_Uninitialized, Tensor):
    """A buffer whose shape the first input decides."""
    __slots__ = ()

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        b = Tensor.__new__(cls)
        Tensor._init(b, _creation.empty(0, device=device, dtype=dtype)._data)
        if requires_grad:
            b.requires_grad = True
        return b

    def __init__(self, requires_grad=False, device=None, dtype=None):
        pass
