"""Autocast: which ops autocast lowers to float16 and which it keeps in float32, exact agreement
with the same casts written by hand (values and gradients), nesting and decorators, and custom
Function hooks."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import cuda_available, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad import amp
from tests.amp._autocast import F16, F32, F64, T, autocast
from tests.amp._errors import raises


def test_products_and_convolutions_run_in_float16(device, rng):
    x = T(rng.standard_normal((4, 3)), device)
    w = T(rng.standard_normal((2, 3)), device)
    b = T(rng.standard_normal(2), device)
    img = T(rng.standard_normal((1, 2, 5, 5)), device)
    k = T(rng.standard_normal((3, 2, 3, 3)), device)
    with autocast(device):
        outs = {"linear": F.linear(x, w, b), "matmul": x @ w.t(), "mm": gpugrad.mm(x, w.t()),
                "bmm": gpugrad.bmm(x[None], w.t()[None]), "conv2d": F.conv2d(img, k),
                "addmm": gpugrad.addmm(b, x, w.t())}
    assert {n: o.dtype for n, o in outs.items()} == {n: F16 for n in outs}
    # exactly the float16 computation written out by hand
    expect = F.linear(x.half(), w.half(), b.half())
    assert to_numpy(outs["linear"]).tolist() == to_numpy(expect).tolist()
    assert to_numpy(outs["conv2d"]).tolist() == to_numpy(F.conv2d(img.half(), k.half())).tolist()


def test_float64_and_integer_inputs_are_left_alone(device):
    a = T(np.eye(2), device, F64)
    with autocast(device):
        assert (a @ a).dtype == F64
        assert F.softmax(a, -1).dtype == F64
        assert (T([1, 2], device, gpugrad.int64) * 2).dtype == gpugrad.int64


def test_softmax_losses_and_norms_run_in_float32(device, rng):
    h = T(rng.standard_normal((4, 3)), device, F16)
    target = T([0, 2, 1, 0], device, gpugrad.int64)
    with autocast(device):
        outs = {"softmax": F.softmax(h, -1), "log_softmax": F.log_softmax(h, -1),
                "cross_entropy": F.cross_entropy(h, target), "nll": F.nll_loss(h, target),
                "mse": F.mse_loss(h, h * 0), "l1": F.l1_loss(h, h * 0),
                "layer_norm": F.layer_norm(h, (3,)), "group_norm": F.group_norm(h, 1),
                "bce_logits": F.binary_cross_entropy_with_logits(h, h.sigmoid())}
    assert {n: o.dtype for n, o in outs.items()} == {n: F32 for n in outs}
    ref = F.softmax(h.float(), -1)
    assert to_numpy(outs["softmax"]).tolist() == to_numpy(ref).tolist()


def test_gradients_reach_float32_parameters_in_float32(device, rng):
    gpugrad.manual_seed(0)
    m = nn.Linear(3, 2).to(device)
    x = T(rng.standard_normal((5, 3)), device)
    target = T([0, 1, 1, 0, 1], device, gpugrad.int64)
    with autocast(device):
        loss = F.cross_entropy(m(x), target)
    assert loss.dtype == F32
    loss.backward()
    # the same graph with the casts written out
    w, b = m.weight.detach().requires_grad_(), m.bias.detach().requires_grad_()
    F.cross_entropy(F.linear(x.half(), w.half(), b.half()).float(), target).backward()
    assert m.weight.grad.dtype == F32 and m.bias.grad.dtype == F32
    assert to_numpy(m.weight.grad).tolist() == to_numpy(w.grad).tolist()
    assert to_numpy(m.bias.grad).tolist() == to_numpy(b.grad).tolist()


def test_nesting_disabling_decorator_and_restore_on_error(device):
    x = T(np.ones((2, 2)), device)
    assert not amp.is_autocast_enabled(device)
    with autocast(device):
        assert amp.is_autocast_enabled(device) and (x @ x).dtype == F16
        with amp.autocast(device, enabled=False):
            assert not amp.is_autocast_enabled(device) and (x @ x).dtype == F32
        assert (x @ x).dtype == F16
    with pytest.raises(ValueError, match="boom"):
        with autocast(device):
            raise ValueError("boom")
    assert not amp.is_autocast_enabled(device) and (x @ x).dtype == F32

    @amp.autocast(device, dtype=F16)
    def product(a):
        return a @ a
    assert product(x).dtype == F16 and (x @ x).dtype == F32
    other = "cuda" if device == "cpu" else "cpu"
    with autocast(device):   # autocast on one device type does not touch the other
        assert not amp.is_autocast_enabled(other)


def test_unsupported_requests_warn_and_disable():
    x = gpugrad.ones(2, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with gpugrad.amp.autocast("cpu", dtype=gpugrad.float64):
            assert (x @ x).dtype == F32 and not amp.is_autocast_enabled("cpu")
    assert str(caught[0].message).startswith(
        "In CPU autocast, but the target dtype is not supported. Disabling autocast.")
    if not cuda_available():
        with pytest.warns(UserWarning, match="^User provided device_type of 'cuda', but CUDA "
                                             "is not available. Disabling$"):
            gpugrad.amp.autocast("cuda")
        with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not "
                                             "available.  Disabling."):
            assert not amp.GradScaler("cuda").is_enabled()
    with raises(RuntimeError, "User specified an unsupported autocast device_type 'tpu'"):
        amp.autocast("tpu")
    with raises(ValueError, "Expected `device_type` of type `str`, got: "
                            "`<class 'gpugrad._backend.device'>`"):
        amp.autocast(gpugrad.device("cpu"))


def test_cuda_amp_spellings_are_importable():
    from gpugrad.cuda.amp import GradScaler, autocast
    assert gpugrad.autocast is amp.autocast and gpugrad.amp is amp
    assert gpugrad.is_autocast_enabled is amp.is_autocast_enabled
    assert gpugrad.cuda.amp.autocast is autocast
    assert issubclass(autocast, amp.autocast) and issubclass(GradScaler, amp.GradScaler)
    assert autocast(enabled=False).device_type == "cuda"


def test_custom_function_hooks(device):
    seen = {}

    class Square(gpugrad.autograd.Function):
        @staticmethod
        @amp.custom_fwd(device_type=device, cast_inputs=F32)
        def forward(ctx, a):
            seen["fwd"] = (a.dtype, amp.is_autocast_enabled(device))
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        @amp.custom_bwd(device_type=device)
        def backward(ctx, g):
            seen["bwd"] = amp.is_autocast_enabled(device)
            a, = ctx.saved_tensors
            return 2 * a * g

    x = T([1.0, 2.0], device, F16, requires_grad=True)
    with autocast(device):
        y = Square.apply(x)
    assert seen["fwd"] == (F32, False) and y.dtype == F32
    y.sum().backward()
    assert seen["bwd"] is True   # the backward runs under the state the forward was called in
    assert to_numpy(x.grad).tolist() == [2.0, 4.0] and x.grad.dtype == F16
