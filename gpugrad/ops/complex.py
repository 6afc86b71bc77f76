"""Complex numbers on gpugrad's real tensors: ``conj``, ``real``, ``imag``, the conjugate
transposes (``mH``, ``H``, ``adjoint``) and the conjugation queries, which a real tensor answers
trivially; and their ``torch.*`` forms."""
from __future__ import annotations

from .._exports import export, method_as_function, tensor_method
from ..tensor import Tensor
from ..tensor_inplace import inplace
from .shape import views


@tensor_method("conj", "conj_physical")
def _conj(self):
    if self._data.dtype.kind != "c":
        return self
    return Tensor._make(self._data.conj())


@tensor_method("real")
@property
def _real(self):
    return self if self._data.dtype.kind != "c" else Tensor._make(self._data.real)


@tensor_method("imag")
@property
def _imag(self):
    if self._data.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return Tensor._make(self._data.imag)


@tensor_method("mH")
@property
def _mH(self):  # noqa: N802  (PyTorch's name)
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. "
                           f"Got {self.ndim}-D tensor.")
    return _conj(views.transpose(self, -2, -1))


@tensor_method("H")
@property
def _H(self):  # noqa: N802  (PyTorch's name)
    if self.ndim != 2:
        hint = " For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.ndim}-D tensor.{hint}")
    return _conj(views.transpose(self, 0, 1))


@tensor_method("adjoint")
def _adjoint(self):
    if self.ndim < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {self.ndim}-D tensor.")
    return _conj(views.transpose(self, -2, -1))


tensor_method("resolve_conj")(lambda s: s)
tensor_method("resolve_neg")(lambda s: s)
tensor_method("conj_physical_")(lambda s: s if s._data.dtype.kind != "c" else inplace(s, _conj))
tensor_method("is_conj", "is_neg")(lambda s: False)
tensor_method("is_complex")(lambda s: s._data.dtype.kind == "c")
method_as_function("conj_physical_")


@export("conj")
def conj(input):
    return input.conj()


@export("resolve_conj")
def resolve_conj(input):
    return input.resolve_conj()


@export("resolve_neg")
def resolve_neg(input):
    return input.resolve_neg()


@export("real")
def real(input):
    return input.real


@export("imag")
def imag(input):
    return input.imag


@export("is_conj")
def is_conj(input) -> bool:
    return input.is_conj()


@export("is_neg")
def is_neg(input) -> bool:
    return input.is_neg()


@export("conj_physical")
def conj_physical(input):
    return input.conj_physical()


@export("adjoint")
def adjoint(input):
    return input.adjoint()
