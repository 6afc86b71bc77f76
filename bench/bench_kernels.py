"""Each fused kernel of gpugrad.kernels.REGISTRY against the same math as a chain of numpy (CPU)
or CuPy (GPU) ops and PyTorch's own fused backward where it has one; on a GPU also its achieved
bandwidth against a device-to-device copy (``extra_info['nbytes']`` is the bytes it moves)."""
import pytest


@pytest.mark.cases("kernels")
def test_kernel(run_case, case, impl):
    run_case(case, impl)


@pytest.mark.cases("bandwidth")
def test_kernel_bandwidth(run_case, case, impl):
    run_case(case, impl)
