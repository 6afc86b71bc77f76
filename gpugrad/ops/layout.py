"""What a tensor answers about its layout and kind without computing: gpugrad's tensors are
dense and strided (``is_sparse``, ``is_quantized`` ... are False, ``to_dense`` is the tensor),
on no device but the CPU or a CUDA GPU (``is_xpu``, ``is_mps`` ... are False), ``ndimension``,
whether it is a view; and the top-level forms of Tensor's own ``detach``,
``detach_`` and ``is_inference``."""
from __future__ import annotations

from .._exports import export, method_as_function, tensor_method

for _name in ("is_sparse", "is_sparse_csr", "is_quantized", "is_meta", "is_nested", "is_mkldnn",
              # devices gpugrad has no backend for (``is_cpu``, ``is_cuda``: the tensor's device)
              "is_xpu", "is_mps", "is_mtia", "is_ipu", "is_maia", "is_vulkan", "is_xla"):
    tensor_method(_name)(property(lambda s: False))
tensor_method("to_dense")(
    lambda s, dtype=None, *, masked_grad=None: s if dtype is None else s.to(dtype))
tensor_method("ndimension")(lambda s: s.ndim)
tensor_method("_is_view")(lambda s: s._base is not None)


@export("is_inference")
def is_inference(input) -> bool:
    return input.is_inference()


@export("detach")
def detach(input):
    return input.detach()


method_as_function("detach_")
