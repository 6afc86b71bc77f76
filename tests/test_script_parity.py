"""What everyday PyTorch scripts reach for beyond the math: f-strings of losses, print
profiles, the backend switches, memory formats, data loaders driven by a batch sampler, and the
names modules print under. Expected values are PyTorch's."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
from gpugrad import nn
from gpugrad.utils.data import BatchSampler, DataLoader, SequentialSampler, TensorDataset


def test_zero_dim_tensors_format_as_their_value():
    loss = gpugrad.tensor(1.4731, requires_grad=True) * 2
    assert f"{loss}" == str(np.float32(2.9462).item()) == "2.946199893951416"
    assert f"{loss:.3f}" == "2.946" and f"{gpugrad.tensor(5)}" == "5"
    assert f"{gpugrad.tensor(True)}" == "True" and "{}".format(gpugrad.tensor(3.0)) == "3.0"
    assert f"{gpugrad.tensor([1.0, 2.0])}" == "tensor([1., 2.])"
    with pytest.raises(TypeError, match=r"^unsupported format string passed to "
                                        r"Tensor\.__format__$"):
        f"{gpugrad.tensor([1.0, 2.0]):.2f}"


def test_print_profiles():
    x = gpugrad.arange(2000.0) / 3
    try:
        gpugrad.set_printoptions(profile="short")
        assert repr(x[:3]) == "tensor([0.00, 0.33, 0.67])"
        assert repr(x) == "tensor([0.00e+00, 3.33e-01,  ..., 6.66e+02, 6.66e+02])"
        gpugrad.set_printoptions(profile="full")
        assert "..." not in repr(x)
        gpugrad.set_printoptions(profile="default", precision=2)
        assert repr(x[:2]) == "tensor([0.00, 0.33])"
    finally:
        gpugrad.set_printoptions(profile="default")
    assert repr(x[:2]) == "tensor([0.0000, 0.3333])"


def test_backend_switches_are_kept():
    import gpugrad.backends.cudnn as cudnn
    assert gpugrad.backends.cudnn is cudnn and not cudnn.is_available()
    before = cudnn.benchmark
    cudnn.benchmark = True
    try:
        assert gpugrad.backends.cudnn.benchmark is True
    finally:
        cudnn.benchmark = before
    assert gpugrad.backends.cuda.matmul.allow_tf32 is False
    assert not gpugrad.backends.mps.is_available() and not gpugrad.backends.mps.is_built()
    gpugrad.backends.cuda.enable_flash_sdp(False)
    assert not gpugrad.backends.cuda.flash_sdp_enabled()
    gpugrad.backends.cuda.enable_flash_sdp(True)


def test_channels_last(device):
    x = gpugrad.randn(2, 3, 4, 5, device=device, requires_grad=True)
    y = x.contiguous(memory_format=gpugrad.channels_last)
    assert y.stride() == (60, 1, 15, 3) and y.shape == x.shape
    assert y.is_contiguous(memory_format=gpugrad.channels_last) and not y.is_contiguous()
    assert x.is_contiguous(memory_format=gpugrad.contiguous_format)
    np.testing.assert_array_equal(to_numpy(y.detach()), to_numpy(x.detach()))
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), np.ones((2, 3, 4, 5)))
    assert x.to(memory_format=gpugrad.channels_last).shape == (2, 3, 4, 5)
    assert not gpugrad.ones(2, 3).is_contiguous(memory_format=gpugrad.channels_last)
    with pytest.raises(RuntimeError, match="^required rank 4 tensor to use channels_last "
                                           "format$"):
        gpugrad.ones(2, 3).contiguous(memory_format=gpugrad.channels_last)
    assert repr(gpugrad.channels_last) == "gpugrad.channels_last"


def test_a_batch_sampler_the_user_passes_is_followed():
    ds = TensorDataset(gpugrad.arange(10.0), gpugrad.arange(10))
    dl = DataLoader(ds, batch_sampler=BatchSampler(SequentialSampler(range(10)), 4, False))
    assert [b[1].tolist() for b in dl] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] and len(dl) == 3
    assert [b[1].tolist() for b in DataLoader(ds, batch_sampler=[[0, 9], [3]])] == [[0, 9], [3]]


def test_attention_output_projection_prints_under_pytorchs_name():
    assert repr(nn.MultiheadAttention(4, 2)) == (
        "MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear(in_features=4, "
        "out_features=4, bias=True)\n)")
    assert isinstance(nn.MultiheadAttention(4, 2).out_proj, nn.Linear)


def test_a_range_indexes_like_a_list(device):
    """input[range(n), target]: the negative log-likelihood of 'What is torch.nn really?'."""
    x = gpugrad.arange(12.0, device=device).reshape(3, 4).requires_grad_()
    picked = x[range(3), gpugrad.tensor([0, 1, 2], device=device)]
    assert picked.tolist() == [0.0, 5.0, 10.0]
    picked.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), np.eye(3, 4))
    assert x[range(1, 3)].shape == (2, 4)
