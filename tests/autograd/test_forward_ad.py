"""Forward-mode AD (``gpugrad.autograd.forward_ad``): exact JVPs of ops and small models, the
dual-tensor API with PyTorch's errors, forward-over-reverse, in-place ops, and the originals
being back (no cost) outside a level."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.autograd.forward_ad as fwAD
from gpugrad import func, nn, tensor_inplace
from gpugrad.autograd import Function, once_differentiable
from gpugrad.nn import functional as F
from gpugrad.ops._op import Op


def _jvp(f, primals, tangents):
    """(f(*primals), tangent of the output) through dual tensors."""
    with fwAD.dual_level():
        out = f(*[fwAD.make_dual(p, t) for p, t in zip(primals, tangents)])
        p, t = fwAD.unpack_dual(out)
        return p, t


def _close(t, want, rtol=1e-12, atol=1e-12):
    np.testing.assert_allclose(to_numpy(t), want, rtol=rtol, atol=atol)


# -- JVPs of ops ------------------------------------------------------------------------------
def test_elementwise_operators_and_functions(device, rng):
    X, T = rng.uniform(0.5, 2.0, 5), rng.standard_normal(5)
    x, t = tensor(X, device), tensor(T, device)
    cases = [
        (lambda a: a * a + 3 * a - 1, (2 * X + 3) * T),
        (lambda a: gpugrad.exp(a) / a, (np.exp(X) / X - np.exp(X) / X ** 2) * T),
        (lambda a: a.sin() * a.cos(), np.cos(2 * X) * T),
        (lambda a: gpugrad.tanh(a) + gpugrad.sigmoid(a),
         (1 - np.tanh(X) ** 2 + np.exp(-X) / (1 + np.exp(-X)) ** 2) * T),
        (lambda a: a ** 2.5 - gpugrad.log(a) + gpugrad.sqrt(a),
         (2.5 * X ** 1.5 - 1 / X + 0.5 / np.sqrt(X)) * T),
        (lambda a: gpugrad.relu(a - 1.0), (X > 1.0) * T),
        (lambda a: 1 / a, -T / X ** 2),
    ]
    for f, want in cases:
        value, tangent = _jvp(f, [x], [t])
        _close(value, to_numpy(f(x)))
        _close(tangent, want)


def test_broadcasting(device, rng):
    A, TA, B = rng.standard_normal((3, 1)), rng.standard_normal((3, 1)), rng.standard_normal(4)
    a, ta, b = tensor(A, device), tensor(TA, device), tensor(B, device)
    _, t = _jvp(lambda u: u * b + u, [a], [ta])
    assert tuple(t.shape) == (3, 4)
    _close(t, TA * B + TA)
    TB = rng.standard_normal(4)
    _, t = _jvp(lambda u, v: u * v, [a, b], [ta, tensor(TB, device)])
    _close(t, TA * B + A * TB)


def test_reductions(device, rng):
    X, T = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    x, t = tensor(X, device), tensor(T, device)
    _close(_jvp(lambda a: a.sum(), [x], [t])[1], T.sum())
    _close(_jvp(lambda a: a.mean(dim=1), [x], [t])[1], T.mean(1))
    _close(_jvp(lambda a: (a * a).sum(0, keepdim=True), [x], [t])[1],
           (2 * X * T).sum(0, keepdims=True))
    i = X.argmax(1)
    _close(_jvp(lambda a: a.max(dim=1).values, [x], [t])[1], T[np.arange(3), i])
    _close(_jvp(lambda a: a.amax(), [x], [t])[1], T.ravel()[X.argmax()])


def test_matmul(device, rng):
    A, B = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    TA, TB = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    a, b = tensor(A, device), tensor(B, device)
    value, t = _jvp(lambda u, v: u @ v, [a, b], [tensor(TA, device), tensor(TB, device)])
    _close(value, A @ B)
    _close(t, TA @ B + A @ TB)
    _, t = _jvp(lambda u: gpugrad.matmul(u, b), [a], [tensor(TA, device)])
    _close(t, TA @ B)


def test_indexing_and_views(device, rng):
    X, T = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    x, t = tensor(X, device), tensor(T, device)
    idx = gpugrad.tensor([2, 0, 2], device=device)
    cases = [
        (lambda a: a[1:, ::2], T[1:, ::2]),
        (lambda a: a[idx], T[[2, 0, 2]]),
        (lambda a: a.reshape(3, 4), T.reshape(3, 4)),
        (lambda a: a.view(-1), T.reshape(-1)),
        (lambda a: a.t(), T.T),
        (lambda a: a.transpose(0, 1)[0], T.T[0]),
        (lambda a: a.unsqueeze(0).expand(2, 4, 3), np.broadcast_to(T, (2, 4, 3))),
        (lambda a: gpugrad.cat([a, 2 * a], dim=1), np.concatenate([T, 2 * T], 1)),
        (lambda a: gpugrad.stack([a[0], a[1]]), T[:2]),
    ]
    for f, want in cases:
        value, tangent = _jvp(f, [x], [t])
        _close(value, to_numpy(f(x)))
        _close(tangent, want)


def test_softmax_and_log_softmax(device, rng):
    X, T = rng.standard_normal((2, 5)), rng.standard_normal((2, 5))
    x, t = tensor(X, device), tensor(T, device)
    S = np.exp(X) / np.exp(X).sum(1, keepdims=True)
    _close(_jvp(lambda a: F.softmax(a, dim=1), [x], [t])[1],
           S * (T - (S * T).sum(1, keepdims=True)))
    _close(_jvp(lambda a: a.log_softmax(dim=1), [x], [t])[1],
           T - (S * T).sum(1, keepdims=True))


def test_conv2d_is_linear_in_each_argument(device, rng):
    X, W = rng.standard_normal((2, 3, 6, 6)), rng.standard_normal((4, 3, 3, 3))
    TX, TW = rng.standard_normal(X.shape), rng.standard_normal(W.shape)
    x, w, tx, tw = (tensor(v, device) for v in (X, W, TX, TW))
    bias = tensor(rng.standard_normal(4), device)
    value, t = _jvp(lambda a, k: F.conv2d(a, k, bias, padding=1), [x, w], [tx, tw])
    _close(value, to_numpy(F.conv2d(x, w, bias, padding=1)))
    _close(t, to_numpy(F.conv2d(tx, w, padding=1) + F.conv2d(x, tw, padding=1)), rtol=1e-10)


def test_mlp(device, rng):
    gpugrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3)).double().to(device)
    X, T = rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
    value, t = _jvp(model, [tensor(X, device)], [tensor(T, device)])
    W1, b1 = to_numpy(model[0].weight), to_numpy(model[0].bias)
    W2 = to_numpy(model[2].weight)
    H = np.tanh(X @ W1.T + b1)
    _close(value, H @ W2.T + to_numpy(model[2].bias))
    _close(t, ((1 - H ** 2) * (T @ W1.T)) @ W2.T)
    # the same JVP as the reverse-mode transform (double vjp of the whole function)
    _, want = func.jvp(model, (tensor(X, device),), (tensor(T, device),))
    _close(t, to_numpy(want))


def test_multiple_dual_inputs_add_their_tangents(device, rng):
    A, B, TA, TB = (rng.standard_normal(3) for _ in range(4))
    a, b = tensor(A, device), tensor(B, device)
    _, t = _jvp(lambda u, v: u * v + u.sin(), [a, b], [tensor(TA, device), tensor(TB, device)])
    _close(t, TA * B + A * TB + np.cos(A) * TA)
    with fwAD.dual_level():   # the same dual tensor used twice in one op
        d = fwAD.make_dual(a, tensor(TA, device))
        _close(fwAD.unpack_dual(d * d).tangent, 2 * A * TA)


def test_tensors_without_tangent(device):
    x, t = tensor([1.0, 2.0], device), tensor([1.0, 1.0], device)
    plain = tensor([3.0, 4.0], device)
    assert fwAD.unpack_dual(x) == (x, None)   # outside a level
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        for y in (plain * 2, plain.sin(), x, d.detach(), d.argmax(), d > 1):
            out = fwAD.unpack_dual(y)
            assert isinstance(out, fwAD.UnpackedDualTensor) and out.tangent is None
            assert out.primal is y
        p, tangent = fwAD.unpack_dual(d)
        assert tangent is t and p is not d
        _close(p, [1.0, 2.0])
    assert fwAD.unpack_dual(d).tangent is None   # tangents end with their level


def test_forward_over_reverse(device, rng):
    X, T = rng.standard_normal(4), rng.standard_normal(4)
    x = tensor(X, device, requires_grad=True)
    t = tensor(T, device, requires_grad=True)
    with fwAD.dual_level():
        # a dual use of x (tangent t) and a plain one (no tangent)
        y = (fwAD.make_dual(x, t).sin() * x).sum()
        jvp = fwAD.unpack_dual(y).tangent
        _close(jvp, (np.cos(X) * X * T).sum())
        assert jvp.requires_grad
        gx, gt = gpugrad.autograd.grad(jvp, (x, t), retain_graph=True)
    # d/dx and d/dt of sum(cos(x) * x * t): the tangent's graph reaches both
    _close(gx, (-np.sin(X) * X + np.cos(X)) * T)
    _close(gt, np.cos(X) * X)
    y.backward()   # reverse mode through the dual's primal still works
    _close(x.grad, np.cos(X) * X + np.sin(X))


@pytest.mark.parametrize("name", ["cube", "exp_sin", "tanh_mlp", "log_softmax"])
def test_reverse_inside_a_level_carries_tangents(name, device, rng):
    """``autograd.grad(f(dual), dual, create_graph=True)`` inside a level: the gradient's
    tangent is the Hessian-vector product H v (forward-over-reverse), checked against the
    double backward ``grad(v . grad f)``; saved inputs and saved outputs (exp, tanh) both
    carry their tangents into the backward."""
    W = rng.standard_normal((3, 4))
    fs = {"cube": lambda z: (z ** 3).sum(),
          "exp_sin": lambda z: (z.exp() * z.sin()).sum(),
          "tanh_mlp": lambda z: (tensor(W, device) @ z).tanh().pow(2).sum(),
          "log_softmax": lambda z: F.log_softmax(z, 0)[1] * 2.0}
    f = fs[name]
    X, V = rng.standard_normal(4), rng.standard_normal(4)
    x = tensor(X, device, requires_grad=True)
    v = tensor(V, device)
    g, = gpugrad.autograd.grad(f(x), x, create_graph=True)
    want, = gpugrad.autograd.grad((g * v).sum(), x)
    with fwAD.dual_level():
        xd = fwAD.make_dual(x, v)
        gd, = gpugrad.autograd.grad(f(xd), xd, create_graph=True)
        primal, hvp = fwAD.unpack_dual(gd)
    _close(primal, to_numpy(g))
    _close(hvp, to_numpy(want))


def test_reverse_inside_a_level_matches_torch(rng):
    torch = pytest.importorskip("torch")
    X, V = rng.standard_normal(5), rng.standard_normal(5)
    got = []
    for mod, fw in ((gpugrad, fwAD), (torch, torch.autograd.forward_ad)):
        x = mod.tensor(X, requires_grad=True)
        with fw.dual_level():
            xd = fw.make_dual(x, mod.tensor(V))
            y = (xd.sigmoid() * xd.cos()).sum() + (xd ** 2).prod()
            g, = mod.autograd.grad(y, xd, create_graph=True)
            got.append(fw.unpack_dual(g).tangent.detach().numpy())
    np.testing.assert_allclose(got[0], got[1], rtol=1e-12, atol=1e-12)


def test_grad_mode_off_still_gives_tangents(device):
    x, t = tensor([0.5, 1.5], device), tensor([1.0, -1.0], device)
    with gpugrad.no_grad(), fwAD.dual_level():
        y = fwAD.make_dual(x, t).exp()
        tangent = fwAD.unpack_dual(y).tangent
    assert not y.requires_grad and not tangent.requires_grad
    _close(tangent, np.exp([0.5, 1.5]) * [1, -1])


def test_inplace_ops_carry_the_tangent(device):
    x, t = tensor([1.0, 2.0, 3.0], device), tensor([1.0, 0.5, 2.0], device)
    with fwAD.dual_level():
        d = fwAD.make_dual(x.clone(), t)
        d.mul_(d).add_(1)   # nothing requires grad: the in-place fast path is not taken
        _close(fwAD.unpack_dual(d).tangent, 2 * np.array([1.0, 2.0, 3.0]) * [1.0, 0.5, 2.0])
        z = tensor([0.0, 0.0, 0.0], device)
        z[0] = d[2]            # a plain tensor written with a dual value gets a tangent
        _close(fwAD.unpack_dual(z).tangent, [12.0, 0.0, 0.0])
        d.zero_()
        _close(fwAD.unpack_dual(d).tangent, [0.0, 0.0, 0.0])
        v = z[:2]
        with pytest.raises(NotImplementedError, match="in-place operations on a view"):
            v.mul_(2)
        w = tensor([5.0], device)
        w.add_(1)              # no dual involved: the ordinary path
        assert fwAD.unpack_dual(w).tangent is None and w.item() == 6.0


def test_originals_are_back_after_exit_and_after_an_error():
    op_apply = Op.__dict__["apply"]
    fn_apply = Function.__dict__["apply"]
    codes = {f: f.__code__ for f in (gpugrad.exp, gpugrad.Tensor.__mul__, gpugrad.sigmoid,
                                     tensor_inplace.inplace)}
    with fwAD.dual_level():
        assert Op.__dict__["apply"] is not op_apply
        assert gpugrad.exp.__code__ is not codes[gpugrad.exp]
    assert Op.__dict__["apply"] is op_apply and Function.__dict__["apply"] is fn_apply
    assert all(f.__code__ is c for f, c in codes.items())
    with pytest.raises(ZeroDivisionError):
        with fwAD.dual_level():
            fwAD.make_dual(gpugrad.ones(2), gpugrad.ones(2)) * 2
            1 / 0
    assert Op.__dict__["apply"] is op_apply and Function.__dict__["apply"] is fn_apply
    assert all(f.__code__ is c for f, c in codes.items())
    assert "_forward_ad_inplace" not in vars(tensor_inplace)
    assert fwAD._current_level == -1
    with fwAD.dual_level():   # a fresh level works after the error
        assert fwAD.unpack_dual(fwAD.make_dual(gpugrad.ones(1), gpugrad.ones(1)) * 3)[1] == 3


def test_decorator_and_explicit_levels():
    op_apply = Op.__dict__["apply"]

    @fwAD.dual_level()
    def tangent_of_square(x, t):
        return fwAD.unpack_dual(fwAD.make_dual(x, t) ** 2).tangent
    _close(tangent_of_square(gpugrad.tensor([3.0]), gpugrad.tensor([1.0])), [6.0])
    assert fwAD.enter_dual_level() == 0
    try:
        assert fwAD._current_level == 0
    finally:
        fwAD.exit_dual_level()
    assert Op.__dict__["apply"] is op_apply and fwAD._current_level == -1


def test_errors_as_pytorch():
    op_apply = Op.__dict__["apply"]
    x, t = gpugrad.ones(3, dtype=gpugrad.float64), gpugrad.ones(3, dtype=gpugrad.float64)
    with pytest.raises(RuntimeError, match=r"^Trying to create a dual Tensor for forward AD but "
                                           r"no level exists, make sure to enter_dual_level\(\) "
                                           r"first\.$"):
        fwAD.make_dual(x, t)
    with pytest.raises(RuntimeError, match="^Dual level must be a positive number.$"):
        fwAD.exit_dual_level()
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match=r"^Trying to set a forward gradient that has a "
                                               r"different size than that of the original "
                                               r"Tensor, this is not supported\. Tensor is of "
                                               r"size \[3\] while the given forward gradient is "
                                               r"of size \[4\]\.$"):
            fwAD.make_dual(x, gpugrad.ones(4, dtype=gpugrad.float64))
        with pytest.raises(ValueError, match="^Expected primal to be floating point or complex, "
                                             "but got: gpugrad.int64$"):
            fwAD.make_dual(gpugrad.arange(3), t)
        with pytest.raises(ValueError, match="^Expected tangent to be floating point or complex"):
            fwAD.make_dual(x, gpugrad.arange(3))
        d = fwAD.make_dual(x, t)
        with pytest.raises(RuntimeError, match="^Making a dual Tensor based on a Tensor that "
                                               "already has a forward gradient at the same "
                                               "level 0 is not supported.$"):
            fwAD.make_dual(d, t)
        with pytest.raises(RuntimeError, match="^Nested forward mode AD is not supported at the "
                                               "moment$"):
            fwAD.enter_dual_level()
        with pytest.raises(RuntimeError, match="^Nested forward mode AD is not supported"):
            with fwAD.dual_level():
                pass
        with pytest.raises(RuntimeError, match="^Trying to exit a forward AD level that was not "
                                               "the last one that was created. This is not "
                                               "supported.$"):
            fwAD.exit_dual_level(level=1)
        with pytest.raises(RuntimeError, match="^Invalid level given to _make_dual$"):
            fwAD.make_dual(x, t, level=2)
    assert Op.__dict__["apply"] is op_apply and fwAD._current_level == -1


def test_a_backward_that_is_not_differentiable_is_named():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @once_differentiable
        def backward(ctx, gy):
            (x,) = ctx.saved_tensors
            return 3 * x * x * gy
    x = gpugrad.tensor([2.0], dtype=gpugrad.float64)
    with fwAD.dual_level():
        with pytest.raises(NotImplementedError, match="^forward-mode AD through Cube is not "
                                                      "supported: its backward is not "
                                                      "differentiable"):
            Cube.apply(fwAD.make_dual(x, gpugrad.ones_like(x)))
        y = Cube.apply(x)   # without a dual input it runs as usual
        assert fwAD.unpack_dual(y).tangent is None
        _close(y, [8.0])


def test_custom_function_with_a_differentiable_backward():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, gy):
            (x,) = ctx.saved_tensors
            return 2 * x * gy
    _, t = _jvp(Square.apply, [gpugrad.tensor([3.0, -1.0], dtype=gpugrad.float64)],
                [gpugrad.tensor([1.0, 2.0], dtype=gpugrad.float64)])
    _close(t, [6.0, -4.0])


# -- against PyTorch ---------------------------------------------------------------------------
def test_same_jvps_as_torch_forward_ad(rng):
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as tfw
    X, T = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    W, TW = rng.standard_normal((4, 2)), rng.standard_normal((4, 2))
    img, timg = rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((1, 2, 5, 5))
    k = rng.standard_normal((3, 2, 3, 3))
    fns = [
        lambda lib, x, w: (x.tanh() @ w).sum(dim=0),
        lambda lib, x, w: lib.nn.functional.softmax(x * 2, dim=-1)[:, 1:3],
        lambda lib, x, w: (x ** 2).mean() + x.exp().max(),
        lambda lib, x, w: lib.nn.functional.gelu(x) * lib.sigmoid(x).log(),
        lambda lib, x, w: lib.where(x > 0, x, x * w.sum()).norm(),
        lambda lib, x, w: lib.nn.functional.mse_loss(x @ w, lib.ones(3, 2, dtype=x.dtype)),
    ]
    for lib, fw in ((gpugrad, fwAD), (torch, tfw)):
        got = []
        with fw.dual_level():
            x = fw.make_dual(lib.tensor(X), lib.tensor(T))
            w = fw.make_dual(lib.tensor(W), lib.tensor(TW))
            for f in fns:
                got.append(fw.unpack_dual(f(lib, x, w)).tangent.numpy())
            conv = lib.nn.functional.conv2d(fw.make_dual(lib.tensor(img), lib.tensor(timg)),
                                            lib.tensor(k), stride=2, padding=1)
            got.append(fw.unpack_dual(conv).tangent.numpy())
        if lib is gpugrad:
            mine = got
    for a, b in zip(mine, got):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# -- every op of the op database ----------------------------------------------------------------
# entries whose call differentiates inside (reverse over forward is not supported)
_GRAD_INSIDE = {"index_grad", "avg_pool2d_grad", "avg_pool3d_grad"}
# an in-place op on a view of a dual tensor raises NotImplementedError
_ON_VIEW = {"inplace_on_view", "fill_on_view"}


def _op_samples():
    from op_db import OP_DB
    return [pytest.param(e, id=e.name) for e in OP_DB
            if e.double_backward and e.name not in _GRAD_INSIDE]


@pytest.mark.parametrize("entry", _op_samples())
def test_every_op_matches_central_differences(entry):
    """The tangent of each output against (f(x + h t) - f(x - h t)) / 2h, all inputs dual."""
    from tests.ops.test_op_db import _inputs, _outputs
    xs = [x.detach() for x in _inputs(entry, entry.shapes[0], "cpu")]
    rng = np.random.default_rng(1)
    ts = [gpugrad.tensor(rng.standard_normal(tuple(x.shape))) for x in xs]
    with fwAD.dual_level():
        duals = [fwAD.make_dual(x, t) for x, t in zip(xs, ts)]
        if entry.name in _ON_VIEW:
            with pytest.raises(NotImplementedError, match="in-place operations on a view"):
                entry.fn(*duals)
            return
        outs = _outputs(entry.fn(*duals))
        tangents = [fwAD.unpack_dual(o).tangent if isinstance(o, gpugrad.Tensor) else None
                    for o in outs]
    h = entry.eps

    def at(sign):
        return _outputs(entry.fn(*[x + sign * h * t for x, t in zip(xs, ts)]))
    tols = {"atol": 1e-5, "rtol": 1e-3, **entry.grad_tols}
    for o, tangent, hi, lo in zip(outs, tangents, at(1), at(-1)):
        if not (isinstance(o, gpugrad.Tensor) and o.is_floating_point()):
            assert tangent is None
            continue
        assert tangent is not None and tuple(tangent.shape) == tuple(o.shape)
        want = (to_numpy(hi) - to_numpy(lo)) / (2 * h)
        np.testing.assert_allclose(to_numpy(tangent), want, **tols)
