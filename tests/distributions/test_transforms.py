"""gpugrad.distributions.transforms, the elementwise maps and their composition: numpy closed
forms, finite-difference Jacobians, caching, and PyTorch as an oracle where it is installed."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad import distributions as D
from gpugrad.autograd import gradcheck
from gpugrad.distributions import transforms as T
from tests.distributions._tensors import grad_tensor
from tests.distributions._validation import _default_validation  # noqa: F401 (autouse)


def close(a, b, rtol=1e-12, atol=1e-12):
    np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=rtol, atol=atol)


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


# -- elementwise transforms ---------------------------------------------------------------------
X = np.array([-2.5, -0.7, 0.0, 0.3, 1.9])
XPOS = np.array([0.2, 0.9, 1.0, 2.5, 7.0])

# name -> (make transform, inputs, numpy forward, numpy log|dy/dx|)
ELEMENTWISE = {
    "exp": (T.ExpTransform, X, np.exp, lambda x: x),
    "sigmoid": (T.SigmoidTransform, X, np_sigmoid,
                lambda x: np.log(np_sigmoid(x) * (1 - np_sigmoid(x)))),
    "tanh": (T.TanhTransform, X, np.tanh, lambda x: np.log(1 - np.tanh(x) ** 2)),
    "power": (lambda: T.PowerTransform(tensor(2.5)), XPOS, lambda x: x ** 2.5,
              lambda x: np.log(2.5 * x ** 1.5)),
    "power_neg": (lambda: T.PowerTransform(-0.5), XPOS, lambda x: x ** -0.5,
                  lambda x: np.log(0.5 * x ** -1.5)),
    "affine": (lambda: T.AffineTransform(1.5, -3.0), X, lambda x: 1.5 - 3.0 * x,
               lambda x: np.full_like(x, math.log(3.0))),
}


@pytest.mark.parametrize("name", list(ELEMENTWISE))
def test_elementwise_forward_inverse_and_jacobian(name, device):
    make, x, fwd, ladj = ELEMENTWISE[name]
    t = make()
    xt = tensor(x, device)
    y = t(xt)
    assert y.device.type == device
    close(y, fwd(x))
    close(t.inv(y), x, rtol=1e-10, atol=1e-12)
    close(t.log_abs_det_jacobian(xt, y), ladj(x), rtol=1e-10)
    close(t.inv.log_abs_det_jacobian(y, xt), -ladj(x), rtol=1e-10)
    # finite-difference derivative of the forward map
    h = 1e-6
    fd = (fwd(x + h) - fwd(x - h)) / (2 * h)
    np.testing.assert_allclose(to_numpy(t.log_abs_det_jacobian(xt, y)), np.log(np.abs(fd)),
                               rtol=1e-6, atol=1e-7)
    assert t.bijective and t.event_dim == 0
    assert t.inv.inv is t
    assert t.inv.domain is t.codomain and t.inv.codomain is t.domain
    assert bool(t.codomain.check(y).all()) and bool(t.domain.check(xt).all())


@pytest.mark.parametrize("name", list(ELEMENTWISE))
def test_elementwise_sign_matches_derivative(name):
    make, x, fwd, _ = ELEMENTWISE[name]
    t = make()
    h = 1e-6
    expected = np.sign((fwd(x + h) - fwd(x - h)) / (2 * h))
    sign = t.sign
    np.testing.assert_array_equal(np.broadcast_to(to_numpy(sign), x.shape), expected)
    assert t.inv.sign is sign or bool(np.all(to_numpy(t.inv.sign) == to_numpy(sign)))


def test_elementwise_jacobian_gradients():
    """The value of log|det J| is differentiable and its gradient is the closed form's."""
    x = grad_tensor([-1.2, 0.4, 2.0])
    assert gradcheck(lambda v: T.SigmoidTransform().log_abs_det_jacobian(v, None), (x,))
    assert gradcheck(lambda v: T.TanhTransform().log_abs_det_jacobian(v, None), (x,))
    assert gradcheck(lambda v: T.TanhTransform().inv(v.tanh() * 0.9), (x,))
    p = grad_tensor([0.3, 1.2, 4.0])
    assert gradcheck(lambda v: T.PowerTransform(1.7)(v), (p,))
    assert gradcheck(lambda v: T.PowerTransform(1.7).inv(v), (p,))


def test_tanh_and_sigmoid_are_stable_at_large_inputs():
    x = tensor([-40.0, 40.0])
    ladj = T.TanhTransform().log_abs_det_jacobian(x, x.tanh())
    close(ladj, [2 * (math.log(2) - 40.0)] * 2, rtol=1e-12)
    y = T.SigmoidTransform()(tensor([-800.0, 800.0]))
    fi = np.finfo(np.float64)
    close(y, [fi.tiny, 1 - fi.eps], rtol=0, atol=0)
    assert np.isfinite(to_numpy(T.SigmoidTransform().inv(y))).all()


def test_affine_with_tensor_parameters_and_event_dim(device):
    loc, scale = np.array([0.5, -1.0, 2.0]), np.array([2.0, -0.5, 3.0])
    x = np.arange(6.0).reshape(2, 3) - 2.5
    t = T.AffineTransform(tensor(loc, device), tensor(scale, device))
    xt = tensor(x, device)
    close(t(xt), loc + scale * x)
    close(t.inv(t(xt)), x)
    close(t.log_abs_det_jacobian(xt, t(xt)), np.broadcast_to(np.log(np.abs(scale)), (2, 3)))
    close(t.sign, np.sign(scale))
    t1 = T.AffineTransform(tensor(loc, device), tensor(scale, device), event_dim=1)
    assert t1.event_dim == 1 and t1.domain.event_dim == 1 and t1.codomain.event_dim == 1
    close(t1.log_abs_det_jacobian(xt, t1(xt)), np.full(2, np.log(np.abs(scale)).sum()))
    assert tuple(T.AffineTransform(tensor(loc), 2.0).forward_shape((4, 1))) == (4, 3)


def test_abs_and_softmax(device):
    x = np.array([[-1.0, 0.5, 2.0], [3.0, -3.0, 0.0]])
    xt = tensor(x, device)
    a = T.AbsTransform()
    close(a(xt), np.abs(x))
    close(a.inv(a(xt)), np.abs(x))
    assert not a.bijective
    with pytest.raises(NotImplementedError):
        a.log_abs_det_jacobian(xt, a(xt))
    s = T.SoftmaxTransform()
    e = np.exp(x - x.max(-1, keepdims=True))
    probs = e / e.sum(-1, keepdims=True)
    close(s(xt), probs)
    close(s(s.inv(s(xt))), probs)   # inverse up to a shift: log p
    close(s.inv(s(xt)), np.log(probs))
    assert not s.bijective and s.event_dim == 1
    assert bool(s.codomain.check(s(xt)).all())
    with pytest.raises(ValueError):
        s.forward_shape(())


def test_compose_transform_chains_and_sums_jacobians(device):
    x = np.array([-1.0, 0.2, 1.5])
    xt = tensor(x, device)
    t = T.ComposeTransform([T.AffineTransform(0.5, 2.0), T.SigmoidTransform(),
                            T.PowerTransform(tensor(3.0))])
    u = 0.5 + 2.0 * x
    y = np_sigmoid(u) ** 3
    close(t(xt), y)
    close(t.inv(t(xt)), x, rtol=1e-10)
    s = np_sigmoid(u)
    expected = math.log(2.0) + np.log(s * (1 - s)) + np.log(3.0 * s ** 2)
    close(t.log_abs_det_jacobian(xt, t(xt)), expected, rtol=1e-10)
    close(t.inv.log_abs_det_jacobian(t(xt), xt), -expected, rtol=1e-10)
    assert t.bijective and t.sign == 1
    assert t.domain is D.constraints.real and t.codomain is D.constraints.positive
    neg = T.ComposeTransform([T.ExpTransform(), T.AffineTransform(0.0, -1.0)])
    assert neg.sign == -1


def test_compose_event_dims():
    """An elementwise transform after a vector one: log|det J| is summed over the event."""
    x = tensor([[0.1, -0.4, 2.0], [1.0, 1.0, -1.0]])
    t = T.ComposeTransform([T.AffineTransform(0.0, tensor([1.0, 2.0, 3.0]), event_dim=1),
                            T.ExpTransform()])
    assert t.domain.event_dim == 1 and t.codomain.event_dim == 1
    xn = to_numpy(x)
    expected = math.log(6.0) + (xn * [1.0, 2.0, 3.0]).sum(-1)
    close(t.log_abs_det_jacobian(x, t(x)), expected)


def test_identity_transform():
    x = tensor([1.0, -2.0])
    close(T.identity_transform(x), [1.0, -2.0])
    close(T.identity_transform.inv(x), [1.0, -2.0])
    close(T.identity_transform.log_abs_det_jacobian(x, x), [0.0, 0.0])
    assert T.identity_transform.bijective and T.identity_transform.event_dim == 0


def test_cache_and_equality():
    t = T.ExpTransform(cache_size=1)
    x = tensor([0.5])
    y = t(x)
    assert t(x) is y and t.inv(y) is x
    assert T.ExpTransform().inv(y) is not x
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.TanhTransform()
    assert T.ExpTransform().inv == T.ExpTransform().inv
    assert T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0)
    assert T.AffineTransform(1.0, 2.0) != T.AffineTransform(1.0, 3.0)
    assert T.PowerTransform(2.0) == T.PowerTransform(2.0) != T.PowerTransform(3.0)
    assert T.ExpTransform().with_cache(1)._cache_size == 1
    with pytest.raises(ValueError):
        T.ExpTransform(cache_size=2)


# -- PyTorch as the oracle ----------------------------------------------------------------------
def _transform_cases(mod):
    tr = mod.distributions.transforms
    A = lambda a: mod.tensor(np.asarray(a, dtype=np.float64))   # noqa: E731
    return {
        "exp": (tr.ExpTransform(), X),
        "sigmoid": (tr.SigmoidTransform(), X),
        "tanh": (tr.TanhTransform(), X),
        "power": (tr.PowerTransform(A(1.3)), XPOS),
        "affine": (tr.AffineTransform(A([1.0, 2.0, 3.0, 4.0, 5.0]), -2.0), X),
        "compose": (tr.ComposeTransform([tr.AffineTransform(0.2, 0.5), tr.SigmoidTransform(),
                                         tr.PowerTransform(A(2.0))]), X),
    }


@pytest.mark.parametrize("name", list(_transform_cases(gpugrad)))
def test_transforms_match_torch(name):
    torch = pytest.importorskip("torch")
    ours, x = _transform_cases(gpugrad)[name]
    theirs, _ = _transform_cases(torch)[name]
    gx, tx = tensor(x), torch.tensor(x)
    gy, ty = ours(gx), theirs(tx)
    close(gy, ty.numpy(), rtol=1e-13)
    close(ours.inv(gy), theirs.inv(ty).numpy(), rtol=1e-12)
    close(ours.log_abs_det_jacobian(gx, gy), theirs.log_abs_det_jacobian(tx, ty).numpy(),
          rtol=1e-12)
    assert repr(ours) == repr(theirs)
