"""gpugrad.nn: modules, parameters, layers, losses, functional, init."""
from __future__ import annotations

import copy
import math
import re

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradcheck, gradgradcheck


def arr(t):
    return t.detach().numpy()


def f64(a, requires_grad=False):
    return gpugrad.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.register_buffer("running", gpugrad.zeros(4))
        self.register_buffer("scratch", gpugrad.zeros(1), persistent=False)
        self.scale = nn.Parameter(gpugrad.ones(1))
        self.fc2 = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) * self.scale


# -- package and Parameter ----------------------------------------------------------------------
def test_nn_is_a_real_subpackage():
    from gpugrad import nn as nn2
    assert nn2 is nn and gpugrad.nn is nn
    assert F is nn.functional and nn.init.kaiming_uniform_


def test_parameter_is_a_tensor_with_pytorch_repr():
    p = nn.Parameter(gpugrad.tensor([1.0, 2.0]))
    assert isinstance(p, gpugrad.Tensor) and p.requires_grad and p.is_leaf
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert type(p * 2) is gpugrad.Tensor and type(p.detach()) is gpugrad.Tensor
    assert not nn.Parameter(gpugrad.ones(1), requires_grad=False).requires_grad


def test_parameter_shares_storage_with_its_data():
    t = gpugrad.zeros(2)
    p = nn.Parameter(t)
    with gpugrad.no_grad():
        p.add_(1)
    assert t.tolist() == [1.0, 1.0]


# -- Linear -------------------------------------------------------------------------------------
def test_linear_forward_matches_numpy(rng):
    m = nn.Linear(5, 3)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    y = m(gpugrad.tensor(x))
    np.testing.assert_allclose(arr(y), x @ arr(m.weight).T + arr(m.bias), rtol=1e-6, atol=1e-6)
    assert y.shape == (4, 3) and y.dtype == gpugrad.float32


def test_linear_default_init_bounds():
    m = nn.Linear(16, 8)
    bound = 1 / math.sqrt(16)
    assert m.weight.shape == (8, 16) and m.bias.shape == (8,)
    assert np.abs(arr(m.weight)).max() <= bound and np.abs(arr(m.bias)).max() <= bound
    assert np.abs(arr(m.weight)).max() > bound / 2   # filled, not left at zero


def test_linear_graph_is_addmm_like_pytorch():
    m = nn.Linear(2, 3)
    x = gpugrad.randn(4, 2, requires_grad=True)
    y = m(x)
    fn = y.grad_fn
    assert fn.name() == "AddmmBackward0"
    (bias_acc, _), (x_acc, _), (t_node, _) = fn.next_functions
    assert bias_acc.name() == "torch::autograd::AccumulateGrad" and bias_acc.variable is m.bias
    assert x_acc.variable is x
    assert t_node.name() == "TBackward0"
    assert t_node.next_functions[0][0].variable is m.weight
    assert m(gpugrad.randn(4, 2)).grad_fn.next_functions[1] == (None, 0)


def test_linear_without_bias_and_other_ranks():
    m = nn.Linear(3, 2, bias=False)
    assert m.bias is None and [n for n, _ in m.named_parameters()] == ["weight"]
    assert m(gpugrad.randn(3)).shape == (2,)
    assert nn.Linear(3, 2)(gpugrad.randn(5, 4, 3)).shape == (5, 4, 2)
    assert repr(m) == "Linear(in_features=3, out_features=2, bias=False)"


def test_linear_backward_matches_numpy(rng):
    m = nn.Linear(3, 2).double()
    x = rng.standard_normal((5, 3))
    m(f64(x)).sum().backward()
    np.testing.assert_allclose(arr(m.weight.grad), np.ones((5, 2)).T @ x)
    np.testing.assert_allclose(arr(m.bias.grad), [5.0, 5.0])


# -- Module -------------------------------------------------------------------------------------
def test_registration_and_traversal_order():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "fc2"]
    assert list(net.children()) == [net.fc1, net.act, net.fc2]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "fc2"]
    assert list(net.modules())[0] is net
    assert [n for n, _ in net.named_buffers()] == ["running", "scratch"]
    assert list(net.state_dict()) == ["scale", "running", "fc1.weight", "fc1.bias",
                                      "fc2.weight", "fc2.bias"]
    assert [p.shape for p in net.parameters()] == [(1,), (4, 3), (4,), (2, 4), (2,)]
    assert net(gpugrad.randn(2, 3)).shape == (2, 2)


def test_parameters_list_follows_changes():
    net = Net()
    assert len(list(net.parameters())) == 5
    net.fc3 = nn.Linear(2, 2)
    assert len(list(net.parameters())) == 7
    net.fc1.bias = None
    assert len(list(net.parameters())) == 6
    new = nn.Parameter(gpugrad.zeros(2, 4))
    net.fc2.weight = new
    assert any(p is new for p in net.parameters())
    del net.fc3
    assert len(list(net.parameters())) == 4


def test_shared_parameters_are_listed_once():
    a = nn.Linear(2, 2)
    seq = nn.Sequential(a, nn.ReLU(), a)
    assert len(list(seq.parameters())) == 2
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_setattr_errors():
    net = Net()
    with pytest.raises(TypeError, match="cannot assign 'gpugrad.FloatTensor' as parameter 'scale'"):
        net.scale = gpugrad.ones(1)
    with pytest.raises(TypeError, match="as child module 'fc1'"):
        net.fc1 = 3

    class Forgot(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(1, 1)

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Forgot()
    with pytest.raises(KeyError, match="already exists"):
        net.register_parameter("forward", nn.Parameter(gpugrad.ones(1)))
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'nope'"):
        net.nope


def test_train_eval_propagate():
    net = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.Dropout()))
    assert net.training
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())


def test_dropout_eval_is_identity_and_train_scales():
    gpugrad.manual_seed(0)
    d = nn.Dropout(p=0.25)
    x = gpugrad.ones(2000, requires_grad=True)
    y = d(x)
    np.testing.assert_allclose(np.unique(arr(y)), [0.0, 1 / 0.75], rtol=1e-6)
    kept = (arr(y) > 0).mean()
    assert 0.7 < kept < 0.8
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    np.testing.assert_allclose(arr(x.grad), arr(y))   # gradient = the scaled mask
    d.eval()
    assert d(x) is x
    assert F.dropout(x, 1.0).sum().item() == 0
    assert repr(d) == "Dropout(p=0.25, inplace=False)"
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        nn.Dropout(1.5)


def test_zero_grad_set_to_none_both_ways():
    net = Net()
    net(gpugrad.randn(2, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.any().item() for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_state_dict_round_trip():
    gpugrad.manual_seed(0)
    a, b = Net(), Net()
    x = gpugrad.randn(3, 3)
    assert not np.allclose(arr(a(x)), arr(b(x)))
    w = b.fc1.weight
    v = w._version
    assert repr(b.load_state_dict(a.state_dict())) == "<All keys matched successfully>"
    assert b.fc1.weight is w and w._version > v            # copied in place
    np.testing.assert_array_equal(arr(a(x)), arr(b(x)))
    sd = a.state_dict()
    assert not sd["fc1.weight"].requires_grad and sd["fc1.weight"].grad_fn is None
    assert a.state_dict(keep_vars=True)["fc1.weight"] is a.fc1.weight


def test_load_state_dict_strict_errors():
    m = nn.Linear(2, 2)
    sd = m.state_dict()
    sd["extra"] = gpugrad.zeros(1)
    del sd["bias"]
    with pytest.raises(RuntimeError) as e:
        m.load_state_dict(sd)
    assert str(e.value) == ('Error(s) in loading state_dict for Linear:\n\tMissing key(s) in '
                            'state_dict: "bias". \n\tUnexpected key(s) in state_dict: "extra". ')
    result = m.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["extra"]
    sd = m.state_dict()
    sd["weight"] = gpugrad.zeros(3, 2)
    for strict in (True, False):
        with pytest.raises(RuntimeError) as e:
            m.load_state_dict(sd, strict=strict)
        assert str(e.value) == (
            "Error(s) in loading state_dict for Linear:\n\tsize mismatch for weight: copying a "
            "param with shape gpugrad.Size([3, 2]) from checkpoint, the shape in current model "
            "is gpugrad.Size([2, 2]).")


def test_load_state_dict_casts_dtype():
    m = nn.Linear(2, 2)
    src = nn.Linear(2, 2).double()
    m.load_state_dict(src.state_dict())
    assert m.weight.dtype == gpugrad.float32
    np.testing.assert_allclose(arr(m.weight), arr(src.weight), rtol=1e-6)


def test_forward_hooks():
    m = nn.Linear(2, 2)
    seen = []
    h1 = m.register_forward_hook(lambda mod, args, out: seen.append((mod, args[0].shape)))
    h2 = m.register_forward_hook(lambda mod, args, out: out * 0)
    pre = m.register_forward_pre_hook(lambda mod, args: (args[0] + 1,))
    x = gpugrad.zeros(1, 2)
    assert m(x).sum().item() == 0
    assert seen == [(m, (1, 2))]
    h2.remove()
    np.testing.assert_allclose(arr(m(x))[0], arr(m.weight).sum(1) + arr(m.bias), rtol=1e-6)
    pre.remove()
    h1.remove()
    m(x)
    assert len(seen) == 2
    h = m.register_forward_hook(lambda mod, args, kwargs, out: (args, kwargs), with_kwargs=True)
    assert m(x) == ((x,), {})
    h.remove()


def test_sequential_repr_and_container_ops():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 1), nn.Sigmoid()))
    assert repr(seq) == (
        "Sequential(\n"
        "  (0): Linear(in_features=2, out_features=3, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Sequential(\n"
        "    (0): Linear(in_features=3, out_features=1, bias=True)\n"
        "    (1): Sigmoid()\n"
        "  )\n"
        ")")
    assert len(seq) == 3 and isinstance(seq[-1], nn.Sequential)
    assert isinstance(seq[:2], nn.Sequential) and len(seq[:2]) == 2
    seq.append(nn.Tanh())
    del seq[1]
    assert [type(m).__name__ for m in seq] == ["Linear", "Sequential", "Tanh"]
    assert list(dict(seq.named_children())) == ["0", "1", "2"]
    ml = nn.ModuleList([nn.Linear(1, 1) for _ in range(3)])
    assert len(list(ml.parameters())) == 6 and len(ml[1:]) == 2


def test_layer_reprs():
    assert repr(nn.LeakyReLU()) == "LeakyReLU(negative_slope=0.01)"
    assert repr(nn.GELU()) == "GELU(approximate='none')"
    assert repr(nn.Softmax(dim=1)) == "Softmax(dim=1)"
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"
    assert repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()"
    assert repr(nn.MSELoss()) == "MSELoss()"


def test_to_dtype_and_device_keep_parameter_objects():
    net = Net()
    net(gpugrad.randn(2, 3)).sum().backward()
    w = net.fc1.weight
    assert net.to(gpugrad.float64) is net
    assert net.fc1.weight is w and w.dtype == gpugrad.float64 and w.grad.dtype == gpugrad.float64
    assert isinstance(w, nn.Parameter) and w.requires_grad
    assert net.running.dtype == gpugrad.float64
    assert net(gpugrad.randn(2, 3, dtype=gpugrad.float64)).dtype == gpugrad.float64
    net.to("cpu").float()
    assert net.fc1.weight is w and w.dtype == gpugrad.float32 and w.device.type == "cpu"
    with pytest.raises(TypeError, match="only accepts floating point"):
        net.to(gpugrad.int64)


def test_deepcopy_gives_independent_parameters():
    net = Net()
    twin = copy.deepcopy(net)
    assert isinstance(twin.fc1.weight, nn.Parameter)
    with gpugrad.no_grad():
        twin.fc1.weight.zero_()
    assert arr(net.fc1.weight).any()


def test_requires_grad_and_get_submodule():
    net = Net()
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    assert net.get_submodule("fc2") is net.fc2
    assert net.get_parameter("fc2.bias") is net.fc2.bias


# -- activations ----------------------------------------------------------------------------------
@pytest.mark.parametrize("module, ref", [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.LeakyReLU(0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    (nn.GELU(), lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))),
    (nn.GELU("tanh"), lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi)
                                                      * (x + 0.044715 * x ** 3)))),
    (nn.SiLU(), lambda x: x / (1 + np.exp(-x))),
    (nn.Tanh(), np.tanh),
    (nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    (nn.Softmax(dim=1), lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True)),
    (nn.LogSoftmax(dim=1), lambda x: x - np.log(np.exp(x).sum(1, keepdims=True))),
    (nn.Identity(), lambda x: x),
    (nn.Flatten(), lambda x: x.reshape(len(x), -1)),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else "")
def test_activation_matches_numpy(module, ref, rng):
    x = rng.standard_normal((4, 5))
    np.testing.assert_allclose(arr(module(f64(x))), ref(x), rtol=1e-7, atol=1e-10)


def test_softmax_without_dim_warns_and_uses_legacy_dim():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        y = nn.Softmax()(gpugrad.randn(2, 3))
    np.testing.assert_allclose(arr(y).sum(1), [1, 1], rtol=1e-6)


def test_inplace_activations():
    x = gpugrad.tensor([-1.0, 2.0])
    assert nn.ReLU(inplace=True)(x) is x and x.tolist() == [0.0, 2.0]
    y = gpugrad.tensor([-1.0, 2.0])
    nn.LeakyReLU(0.5, inplace=True)(y)
    assert y.tolist() == [-0.5, 2.0]


# -- losses ---------------------------------------------------------------------------------------
def _np_log_softmax(x, axis=1):
    z = x - x.max(axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis, keepdims=True))


def test_cross_entropy_matches_numpy(rng):
    x = rng.standard_normal((6, 4))
    t = np.array([0, 3, 1, 1, 2, 0])
    nll = -_np_log_softmax(x)[np.arange(6), t]
    for reduction, ref in (("mean", nll.mean()), ("sum", nll.sum()), ("none", nll)):
        out = nn.CrossEntropyLoss(reduction=reduction)(f64(x), gpugrad.tensor(t))
        np.testing.assert_allclose(arr(out), ref, rtol=1e-12)


def test_cross_entropy_ignore_index_and_weight(rng):
    x = rng.standard_normal((5, 3))
    t = np.array([0, 2, -100, 1, 2])
    w = np.array([0.5, 2.0, 1.5])
    keep = t != -100
    lp = _np_log_softmax(x)[np.arange(5)[keep], t[keep]]
    wt = w[t[keep]]
    loss = nn.CrossEntropyLoss(weight=f64(w))(f64(x), gpugrad.tensor(t))
    np.testing.assert_allclose(loss.item(), -(wt * lp).sum() / wt.sum(), rtol=1e-12)
    none = nn.CrossEntropyLoss(reduction="none", ignore_index=2)(f64(x[:2]), gpugrad.tensor([0, 2]))
    assert none.tolist()[1] == 0.0 and none.tolist()[0] > 0
    xt = f64(x, requires_grad=True)
    nn.CrossEntropyLoss()(xt, gpugrad.tensor(t)).backward()
    assert arr(xt.grad)[2].tolist() == [0.0, 0.0, 0.0]


def test_cross_entropy_label_smoothing_and_probabilities(rng):
    x = rng.standard_normal((4, 3))
    t = np.array([0, 2, 1, 1])
    lp = _np_log_softmax(x)
    eps = 0.1
    ref = ((1 - eps) * -lp[np.arange(4), t] + eps / 3 * -lp.sum(1)).mean()
    out = F.cross_entropy(f64(x), gpugrad.tensor(t), label_smoothing=eps)
    np.testing.assert_allclose(out.item(), ref, rtol=1e-12)
    probs = np.eye(3)[t] * 0.8 + 0.2 / 3
    out = F.cross_entropy(f64(x), f64(probs))
    np.testing.assert_allclose(out.item(), -(probs * lp).sum(1).mean(), rtol=1e-12)


def test_cross_entropy_spatial_targets(rng):
    x = rng.standard_normal((2, 3, 4))
    t = rng.integers(0, 3, (2, 4))
    lp = _np_log_softmax(x, axis=1)
    ref = -np.take_along_axis(lp, t[:, None], 1)[:, 0]
    out = F.cross_entropy(f64(x), gpugrad.tensor(t), reduction="none")
    np.testing.assert_allclose(arr(out), ref, rtol=1e-12)


def test_loss_graphs_match_pytorch():
    x = gpugrad.randn(3, 4, requires_grad=True)
    ce = F.cross_entropy(x, gpugrad.tensor([0, 1, 3]))
    assert ce.grad_fn.name() == "NllLossBackward0"
    assert len(ce.grad_fn.next_functions) == 1
    assert ce.grad_fn.next_functions[0][0].name() == "LogSoftmaxBackward0"
    mse = F.mse_loss(x, gpugrad.zeros(3, 4))
    assert mse.grad_fn.name() == "MseLossBackward0" and mse.grad_fn.next_functions[1] == (None, 0)
    bce = F.binary_cross_entropy_with_logits(x, gpugrad.rand(3, 4), pos_weight=gpugrad.ones(4))
    assert bce.grad_fn.name() == "BinaryCrossEntropyWithLogitsBackward0"
    assert len(bce.grad_fn.next_functions) == 2


def test_mse_loss_matches_numpy(rng):
    x, t = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    for reduction, ref in (("mean", ((x - t) ** 2).mean()), ("sum", ((x - t) ** 2).sum()),
                           ("none", (x - t) ** 2)):
        out = nn.MSELoss(reduction=reduction)(f64(x), f64(t))
        np.testing.assert_allclose(arr(out), ref, rtol=1e-12)
    xt = f64(x, requires_grad=True)
    F.mse_loss(xt, f64(t)).backward()
    np.testing.assert_allclose(arr(xt.grad), 2 * (x - t) / x.size, rtol=1e-12)


def test_bce_with_logits_matches_numpy(rng):
    x = rng.standard_normal((3, 4)) * 3
    t = rng.uniform(size=(3, 4))
    w, pw = rng.uniform(0.5, 2, 4), rng.uniform(0.5, 2, 4)
    s = 1 / (1 + np.exp(-x))
    ref = -w * (pw * t * np.log(s) + (1 - t) * np.log(1 - s))
    out = nn.BCEWithLogitsLoss(weight=f64(w), pos_weight=f64(pw), reduction="none")(f64(x), f64(t))
    np.testing.assert_allclose(arr(out), ref, rtol=1e-10)
    plain = nn.BCEWithLogitsLoss()(f64(x), f64(t))
    np.testing.assert_allclose(plain.item(), (-(t * np.log(s) + (1 - t) * np.log(1 - s))).mean(),
                               rtol=1e-10)
    big = F.binary_cross_entropy_with_logits(f64([1000.0, -1000.0]), f64([0.0, 1.0]),
                                             reduction="none")
    assert big.tolist() == [1000.0, 1000.0]   # no overflow to inf or nan


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_loss_gradients_gradcheck(reduction, rng):
    x = f64(rng.standard_normal((3, 4)), requires_grad=True)
    t = f64(rng.uniform(size=(3, 4)), requires_grad=True)
    w, pw = f64(rng.uniform(0.5, 2, 4)), f64(rng.uniform(0.5, 2, 4))
    labels = gpugrad.tensor([0, 3, -100])
    assert gradcheck(lambda a, b: F.mse_loss(a, b, reduction=reduction), (x, t))
    assert gradcheck(lambda a: F.cross_entropy(a, labels, reduction=reduction), (x,))
    assert gradcheck(lambda a: F.cross_entropy(a, labels, w, reduction=reduction,
                                               label_smoothing=0.2), (x,))
    assert gradcheck(lambda a, b: F.binary_cross_entropy_with_logits(
        a, b, w, reduction=reduction, pos_weight=pw), (x, t))
    x3 = f64(rng.standard_normal((2, 3, 2)), requires_grad=True)
    assert gradcheck(lambda a: F.cross_entropy(a, gpugrad.tensor([[0, 2], [1, -100]]),
                                               reduction=reduction), (x3,))
    assert gradgradcheck(lambda a: F.cross_entropy(a, labels, reduction=reduction), (x,))
    assert gradgradcheck(lambda a, b: F.mse_loss(a, b, reduction=reduction), (x, t))


def test_loss_errors():
    x = gpugrad.randn(3, 4)
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.mse_loss(x, x, reduction="foo")
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        F.cross_entropy(x, gpugrad.tensor([0, 7, 1]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target "
                                         r"batch_size \(2\)"):
        F.cross_entropy(x, gpugrad.tensor([0, 1]))
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(x, gpugrad.rand(3))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Float"):
        F.nll_loss(x, gpugrad.tensor([0.0, 1.0, 2.0]))


def test_one_hot():
    out = F.one_hot(gpugrad.tensor([0, 2, 1]))
    assert out.dtype == gpugrad.int64 and out.tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    assert F.one_hot(gpugrad.tensor([1]), 4).tolist() == [[0, 1, 0, 0]]


# -- init -----------------------------------------------------------------------------------------
def test_init_functions():
    init = nn.init
    gpugrad.manual_seed(0)
    w = nn.Parameter(gpugrad.empty(200, 300))
    init.xavier_uniform_(w)
    a = math.sqrt(6 / 500)
    assert np.abs(arr(w)).max() <= a and np.abs(arr(w)).max() > 0.95 * a
    init.xavier_normal_(w)
    assert abs(arr(w).std() - math.sqrt(2 / 500)) < 0.05 * math.sqrt(2 / 500)
    init.kaiming_uniform_(w, nonlinearity="relu")
    b = math.sqrt(2) * math.sqrt(3 / 300)
    assert np.abs(arr(w)).max() <= b and np.abs(arr(w)).max() > 0.95 * b
    init.kaiming_normal_(w, mode="fan_out")
    assert abs(arr(w).std() - math.sqrt(2 / 1 / (1 + 0.0 ** 2)) / math.sqrt(200)) < 0.005
    assert w.grad_fn is None and w.requires_grad   # filled in place, still a leaf
    init.zeros_(w)
    assert not arr(w).any()
    init.ones_(w)
    assert (arr(w) == 1).all()
    init.constant_(w, 0.5)
    assert (arr(w) == 0.5).all()
    assert init.calculate_gain("tanh") == 5 / 3
    assert init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2 / 1.04)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(gpugrad.empty(3))


# -- gradient clipping ----------------------------------------------------------------------------
def _params_with_grads(rng, *shapes):
    ps = [nn.Parameter(f64(rng.standard_normal(s))) for s in shapes]
    for p in ps:
        p.grad = f64(rng.standard_normal(p.shape))
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
def test_clip_grad_norm_scales_all_gradients_by_their_joint_norm(rng, norm_type):
    ps = _params_with_grads(rng, (3, 4), (4,), (2,))
    before = [p.grad.numpy().copy() for p in ps]
    flat = np.concatenate([g.ravel() for g in before])
    want = np.abs(flat).max() if norm_type == math.inf else (np.abs(flat) ** norm_type).sum() ** (
        1 / norm_type)
    total = nn.utils.clip_grad_norm_(ps, 0.5, norm_type=norm_type)
    assert total.item() == pytest.approx(want, rel=1e-12)
    scale = min(1.0, 0.5 / (want + 1e-6))
    for p, g in zip(ps, before):
        np.testing.assert_allclose(p.grad.numpy(), g * scale, rtol=1e-12)


def test_clip_grad_norm_leaves_small_gradients_and_takes_one_tensor(rng):
    p = _params_with_grads(rng, (5,))[0]
    g = p.grad.numpy().copy()
    total = nn.utils.clip_grad_norm_(p, 1e6)
    assert total.item() == pytest.approx(np.linalg.norm(g), rel=1e-12)
    np.testing.assert_allclose(p.grad.numpy(), g, rtol=1e-12)   # scale min(1, ...) is 1


def test_clip_grad_norm_without_gradients_is_zero_and_skips_missing_ones(rng):
    a, b = nn.Parameter(f64([1.0, 2.0])), nn.Parameter(f64([3.0]))
    assert nn.utils.clip_grad_norm_([a, b], 1.0).item() == 0.0
    b.grad = f64([4.0])
    assert nn.utils.clip_grad_norm_([a, b], 1.0).item() == 4.0
    assert a.grad is None and b.grad.item() == pytest.approx(1.0 / (4.0 + 1e-6) * 4.0)


def test_clip_grad_norm_non_finite_error(rng):
    p = _params_with_grads(rng, (3,))[0]
    p.grad = f64([1.0, math.inf, 0.0])
    with pytest.raises(RuntimeError, match=re.escape(
            "The total norm of order 2.0 for gradients from `parameters` is non-finite, so it "
            "cannot be clipped. To disable this error and scale the gradients by the non-finite "
            "norm anyway, set `error_if_nonfinite=False`")):
        nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    assert math.isinf(nn.utils.clip_grad_norm_(p, 1.0).item())   # the default scales anyway


def test_clip_grad_value_clamps_in_place(rng):
    a, b = _params_with_grads(rng, (2, 3), (3,))
    ga, gb = a.grad.numpy().copy(), b.grad
    assert nn.utils.clip_grad_value_([a, b], 0.25) is None
    np.testing.assert_array_equal(a.grad.numpy(), np.clip(ga, -0.25, 0.25))
    assert b.grad is gb and np.abs(b.grad.numpy()).max() <= 0.25


# -- LayerNorm ------------------------------------------------------------------------------------
def test_layer_norm_module_normalises_the_last_dims(rng):
    m = nn.LayerNorm((3, 4)).to(gpugrad.float64)
    assert repr(m) == "LayerNorm((3, 4), eps=1e-05, elementwise_affine=True, bias=True)"
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    assert m.weight.shape == (3, 4) and (m.weight.detach().numpy() == 1).all()
    with gpugrad.no_grad():
        m.weight.mul_(2.0)
        m.bias.add_(0.5)
    x = rng.standard_normal((2, 3, 4))
    y = m(f64(x, requires_grad=True))
    d = x - x.mean(axis=(1, 2), keepdims=True)
    want = d / np.sqrt((d ** 2).mean(axis=(1, 2), keepdims=True) + 1e-5) * 2.0 + 0.5
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-12)
    assert y.grad_fn.name() == "NativeLayerNormBackward0"
    bare = nn.LayerNorm(4, elementwise_affine=False)
    assert bare.weight is None and bare.bias is None and list(bare.state_dict()) == []
    assert list(nn.LayerNorm(4, bias=False).state_dict()) == ["weight"]


def test_layer_norm_gradients_and_double_backward(rng):
    x = f64(rng.standard_normal((3, 5)), requires_grad=True)
    w = f64(rng.standard_normal(5), requires_grad=True)
    b = f64(rng.standard_normal(5), requires_grad=True)

    def f(x, w, b):
        return F.layer_norm(x, 5, w, b, eps=1e-3)
    assert gradcheck(f, (x, w, b)) and gradgradcheck(f, (x, w, b))
    # the normalised rows have zero mean, so sum over a row of the output's x-gradient is 0
    y = F.layer_norm(x, 5)
    (g,) = gpugrad.autograd.grad(y, x, f64(rng.standard_normal((3, 5))))
    np.testing.assert_allclose(g.numpy().sum(axis=1), 0.0, atol=1e-12)


def test_layer_norm_shape_errors():
    x = gpugrad.zeros(2, 3)
    with pytest.raises(RuntimeError, match=re.escape(
            "Given normalized_shape=[4], expected input with shape [*, 4], but got input of "
            "size[2, 3]")):
        F.layer_norm(x, [4])
    with pytest.raises(RuntimeError, match=re.escape(
            "Expected weight to be of same shape as normalized_shape, but got weight of shape "
            "[4] and normalized_shape = [3]")):
        F.layer_norm(x, [3], gpugrad.ones(4))
    with pytest.raises(RuntimeError, match=re.escape(
            "Expected bias to be of same shape as normalized_shape, but got bias of shape [4] "
            "and normalized_shape = [3]")):
        F.layer_norm(x, [3], None, gpugrad.ones(4))


# -- BatchNorm ------------------------------------------------------------------------------------
def test_batch_norm_training_updates_running_stats_and_eval_uses_them(rng):
    bn = nn.BatchNorm1d(3).to(gpugrad.float64)
    assert repr(bn) == ("BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, "
                        "track_running_stats=True)")
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                     "num_batches_tracked"]
    x = rng.standard_normal((5, 3)) * 2 + 1
    y = bn(f64(x, requires_grad=True))
    want = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.1 * x.mean(0), rtol=1e-12)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.9 + 0.1 * x.var(0, ddof=1),
                               rtol=1e-12)
    assert bn.num_batches_tracked.item() == 1 and bn.num_batches_tracked.dtype == gpugrad.int64
    bn.eval()
    z = bn(f64(x))
    np.testing.assert_allclose(z.detach().numpy(), (x - bn.running_mean.numpy())
                               / np.sqrt(bn.running_var.numpy() + 1e-5), rtol=1e-12)
    assert bn.num_batches_tracked.item() == 1   # eval leaves the statistics alone


def test_batch_norm_cumulative_average_and_no_tracking(rng):
    bn = nn.BatchNorm1d(2, momentum=None).to(gpugrad.float64)
    xs = [rng.standard_normal((4, 2)) for _ in range(3)]
    for x in xs:
        bn(f64(x))
    np.testing.assert_allclose(bn.running_mean.numpy(), np.mean([x.mean(0) for x in xs], 0),
                               rtol=1e-12)
    free = nn.BatchNorm1d(2, affine=False, track_running_stats=False)
    assert free.running_mean is None and list(free.state_dict()) == []
    free.eval()   # no running statistics: the batch's are used even in eval
    out = free(gpugrad.tensor(np.array([[1.0, 2.0], [3.0, 6.0]], dtype=np.float32)))
    np.testing.assert_allclose(out.numpy(), [[-1, -1], [1, 1]], rtol=1e-4)


def test_batch_norm_gradients_both_modes(rng):
    x = f64(rng.standard_normal((4, 3, 2)), requires_grad=True)
    w = f64(rng.standard_normal(3), requires_grad=True)
    b = f64(rng.standard_normal(3), requires_grad=True)
    rm, rv = f64(rng.standard_normal(3)), f64(rng.uniform(0.5, 2.0, 3))

    def train(x, w, b):
        return F.batch_norm(x, None, None, w, b, training=True)

    def infer(x, w, b):
        return F.batch_norm(x, rm, rv, w, b, training=False)
    for f in (train, infer):
        assert gradcheck(f, (x, w, b)) and gradgradcheck(f, (x, w, b))


def test_batch_norm_errors():
    bn = nn.BatchNorm1d(3)
    with pytest.raises(ValueError, match=re.escape(
            "Expected more than 1 value per channel when training, got input size "
            "gpugrad.Size([1, 3])")):
        bn(gpugrad.zeros(1, 3))
    with pytest.raises(RuntimeError, match="^running_mean should contain 4 elements not 3$"):
        bn(gpugrad.zeros(2, 4))
    with pytest.raises(ValueError, match=re.escape("expected 2D or 3D input (got 1D input)")):
        bn(gpugrad.zeros(2))
    with pytest.raises(ValueError, match=re.escape("expected 4D input (got 2D input)")):
        nn.BatchNorm2d(3)(gpugrad.zeros(2, 3))


# -- Embedding ------------------------------------------------------------------------------------
def test_embedding_looks_up_rows_and_skips_the_padding_row(device):
    gpugrad.manual_seed(0)
    e = nn.Embedding(5, 3, padding_idx=-5).to(device)   # padding row 0
    assert repr(e) == "Embedding(5, 3, padding_idx=0)" and list(e.state_dict()) == ["weight"]
    assert e.weight.detach().cpu().numpy()[0].tolist() == [0.0, 0.0, 0.0]
    idx = gpugrad.tensor(np.array([[0, 2], [4, 4]]), device=device)
    y = e(idx)
    assert y.shape == (2, 2, 3) and y.grad_fn.name() == "EmbeddingBackward0"
    np.testing.assert_array_equal(y.detach().cpu().numpy(),
                                  e.weight.detach().cpu().numpy()[[[0, 2], [4, 4]]])
    (y * 2).sum().backward()
    assert e.weight.grad.cpu().numpy()[:, 0].tolist() == [0.0, 0.0, 2.0, 0.0, 4.0]
    frozen = nn.Embedding.from_pretrained(gpugrad.ones(2, 4))
    assert not frozen.weight.requires_grad and frozen(gpugrad.tensor([1])).shape == (1, 4)


def test_embedding_errors():
    e = nn.Embedding(3, 2)
    with pytest.raises(IndexError, match="^index out of range in self$"):
        e(gpugrad.tensor([3]))
    with pytest.raises(RuntimeError, match=re.escape(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            "types: Long, Int; but got gpugrad.FloatTensor instead (while checking arguments "
            "for embedding)")):
        e(gpugrad.tensor([1.0]))
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)


# -- more losses ----------------------------------------------------------------------------------
def test_regression_and_probability_losses_exact_values():
    x, t = f64([0.2, 0.9, 0.5]), f64([0.0, 1.0, 1.0])
    assert nn.L1Loss()(x, t).item() == pytest.approx((0.2 + 0.1 + 0.5) / 3)
    d = np.array([0.2, -0.1, -0.5])
    want = np.where(np.abs(d) < 0.3, 0.5 * d * d / 0.3, np.abs(d) - 0.15).sum()
    assert nn.SmoothL1Loss(reduction="sum", beta=0.3)(x, t).item() == pytest.approx(want)
    want = np.where(np.abs(d) < 0.3, 0.5 * d * d, 0.3 * (np.abs(d) - 0.15))
    np.testing.assert_allclose(nn.HuberLoss("none", 0.3)(x, t).numpy(), want, rtol=1e-12)
    bce = -(np.log(0.8) + np.log(0.9) + np.log(0.5)) / 3
    assert nn.BCELoss()(x, t).item() == pytest.approx(bce, rel=1e-12)
    # log clamped at -100: a certain wrong answer costs 100, not inf
    assert F.binary_cross_entropy(f64([0.0]), f64([1.0])).item() == 100.0
    l1 = F.smooth_l1_loss(f64([0.2, 0.9, 0.5], requires_grad=True), t, beta=0.0)
    assert l1.grad_fn.name() == "MeanBackward0"   # the L1 loss then, graph included
    assert l1.item() == pytest.approx((0.2 + 0.1 + 0.5) / 3)


def test_bce_and_robust_loss_errors():
    with pytest.raises(RuntimeError, match="^all elements of input should be between 0 and 1$"):
        F.binary_cross_entropy(f64([1.5]), f64([1.0]))
    with pytest.raises(ValueError, match=re.escape(
            "Using a target size (gpugrad.Size([2])) that is different to the input size "
            "(gpugrad.Size([1])) is deprecated. Please ensure they have the same size.")):
        F.binary_cross_entropy(f64([0.5]), f64([1.0, 0.0]))
    with pytest.raises(RuntimeError, match="^huber_loss does not support non-positive values"):
        F.huber_loss(f64([0.5]), f64([1.0]), delta=0)
    with pytest.warns(UserWarning, match="Using a target size"):
        F.l1_loss(f64([[0.5], [1.0]]), f64([1.0]))


def test_more_activation_modules_and_in_place_forms():
    x = f64([-2.0, -0.5, 0.5, 7.0])
    np.testing.assert_allclose(nn.ELU(0.5)(x).numpy(), [0.5 * np.expm1(-2), 0.5 * np.expm1(-0.5),
                                                         0.5, 7.0], rtol=1e-12)
    assert nn.ReLU6()(x).tolist() == [0.0, 0.0, 0.5, 6.0]
    assert nn.Hardtanh(-1.0, 1.0)(x).tolist() == [-1.0, -0.5, 0.5, 1.0]
    np.testing.assert_allclose(nn.Mish()(x).numpy(),
                               x.numpy() * np.tanh(np.log1p(np.exp(x.numpy()))), rtol=1e-12)
    y = f64([-2.0, 3.0], requires_grad=True) * 1
    assert F.elu(y, inplace=True) is y and y.grad_fn.name() == "EluBackward0"
    z = f64([-2.0, 3.0])
    assert F.relu6(z, inplace=True) is z and z.tolist() == [0.0, 3.0]
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(z, 1.0, -1.0)


# -- convolutions ---------------------------------------------------------------------------------
def test_conv_modules_shapes_init_and_repr(device):
    gpugrad.manual_seed(0)
    c = nn.Conv2d(3, 4, 3, stride=2, padding=1).to(device)
    assert repr(c) == "Conv2d(3, 4, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))"
    bound = 1 / np.sqrt(3 * 9)
    assert np.abs(c.weight.detach().cpu().numpy()).max() <= bound   # kaiming_uniform(a=sqrt 5)
    y = c(gpugrad.randn(2, 3, 7, 6, device=device))
    assert y.shape == (2, 4, 4, 3) and y.grad_fn.name() == "ConvolutionBackward0"
    assert c(gpugrad.randn(3, 7, 6, device=device)).shape == (4, 4, 3)   # unbatched
    same = nn.Conv2d(3, 2, 5, padding="same", bias=False).to(device)
    assert repr(same).endswith("padding=same, bias=False)")
    assert same(gpugrad.randn(1, 3, 6, 6, device=device)).shape == (1, 2, 6, 6)
    c1 = nn.Conv1d(2, 3, 3).to(device)
    assert repr(c1) == "Conv1d(2, 3, kernel_size=(3,), stride=(1,))"
    out = c1(gpugrad.randn(4, 2, 9, device=device))
    assert out.shape == (4, 3, 7)
    out.sum().backward()
    assert c1.weight.grad.shape == (3, 2, 3) and c1.bias.grad.shape == (3,)
    np.testing.assert_allclose(c1.bias.grad.cpu().numpy(), [28.0] * 3)   # 4 samples x 7 steps


def test_conv_errors():
    c = nn.Conv2d(3, 4, 3)
    with pytest.raises(RuntimeError, match=re.escape(
            "Given groups=1, weight of size [4, 3, 3, 3], expected input[3, 5, 5, 5] to have 3 "
            "channels, but got 5 channels instead")):
        c(gpugrad.zeros(3, 5, 5, 5))
    with pytest.raises(RuntimeError, match=re.escape(
            "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: "
            "[5, 5]")):
        c(gpugrad.zeros(5, 5))
    with pytest.raises(RuntimeError, match=re.escape(
            "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel "
            "size can't be greater than actual input size")):
        c(gpugrad.zeros(1, 3, 2, 2))
    with pytest.raises(RuntimeError, match=re.escape(
            "Given groups=2, weight of size [2, 2, 3, 3], expected input[1, 6, 5, 5] to have 4 "
            "channels, but got 6 channels instead")):
        F.conv2d(gpugrad.zeros(1, 6, 5, 5), gpugrad.zeros(2, 2, 3, 3), groups=2)
    with pytest.raises(ValueError, match="^in_channels must be divisible by groups$"):
        nn.Conv2d(3, 4, 3, groups=2)
    x = gpugrad.randn(1, 3, 5, 5, requires_grad=True)
    (g,) = gpugrad.autograd.grad(c(x).sum(), x, create_graph=False)
    assert g.shape == (1, 3, 5, 5)
    (gg,) = gpugrad.autograd.grad(c(x).sum(), x, create_graph=True)   # the graph of the backward
    assert gg.requires_grad
    np.testing.assert_allclose(gg.detach().numpy(), g.numpy(), rtol=1e-5, atol=1e-6)


def test_pooling_modules_and_a_small_cnn_trains(device):
    x = gpugrad.tensor(np.arange(16.0).reshape(1, 1, 4, 4), device=device, requires_grad=True)
    y = nn.MaxPool2d(2)(x)
    assert y.detach().cpu().numpy()[0, 0].tolist() == [[5.0, 7.0], [13.0, 15.0]]
    y.sum().backward()
    assert x.grad.cpu().numpy()[0, 0].tolist() == [[0, 0, 0, 0], [0, 1, 0, 1], [0, 0, 0, 0],
                                                     [0, 1, 0, 1]]
    assert nn.AvgPool2d(2)(x).detach().cpu().numpy()[0, 0].tolist() == [[2.5, 4.5],
                                                                          [10.5, 12.5]]
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        F.max_pool2d(x, 3, padding=2)
    # a tiny CNN learns to tell a bright top half from a bright bottom half
    gpugrad.manual_seed(0)
    rng = np.random.default_rng(0)
    imgs = rng.uniform(0, 0.2, (64, 1, 6, 6))
    labels = rng.integers(0, 2, 64)
    imgs[labels == 0, :, :3] += 1.0
    imgs[labels == 1, :, 3:] += 1.0
    xs = gpugrad.tensor(imgs, dtype=gpugrad.float32, device=device)
    ys = gpugrad.tensor(labels, device=device)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(36, 2)).to(device)
    opt = gpugrad.optim.Adam(model.parameters(), lr=0.05)
    for _ in range(30):
        opt.zero_grad()
        loss = F.cross_entropy(model(xs), ys)
        loss.backward()
        opt.step()
    assert loss.item() < 0.05
    assert (model(xs).argmax(1) == ys).all().item()


# -- ModuleDict, ParameterList, ParameterDict -----------------------------------------------------
def test_dict_and_parameter_containers_register_what_they_hold():
    d = nn.ModuleDict({"enc": nn.Linear(2, 3), "act": nn.ReLU()})
    d["dec"] = nn.Linear(3, 1)
    assert list(d) == ["enc", "act", "dec"] and "act" in d and len(d) == 3
    assert [n for n, _ in d.named_parameters()] == ["enc.weight", "enc.bias", "dec.weight",
                                                    "dec.bias"]
    assert repr(d).splitlines()[1] == "  (enc): Linear(in_features=2, out_features=3, bias=True)"
    assert isinstance(d.pop("act"), nn.ReLU) and list(d.keys()) == ["enc", "dec"]
    pl = nn.ParameterList([gpugrad.ones(2, 3), nn.Parameter(gpugrad.zeros(4))])
    assert isinstance(pl[0], nn.Parameter) and pl[0].requires_grad
    pl.append(gpugrad.ones(1))
    assert list(pl.state_dict()) == ["0", "1", "2"] and len(pl) == 3
    assert repr(pl).splitlines()[1] == (
        "    (0): Parameter containing: [gpugrad.float32 of size 2x3]")
    pd = nn.ParameterDict({"w": gpugrad.ones(2)})
    assert repr(pd) == "ParameterDict(  (w): Parameter containing: [gpugrad.FloatTensor of " \
                       "size 2])"   # one entry: PyTorch's one-line layout
    pd["b"] = gpugrad.zeros(1)
    assert list(pd) == ["w", "b"] and repr(pd) == (
        "ParameterDict(\n    (w): Parameter containing: [gpugrad.FloatTensor of size 2]\n"
        "    (b): Parameter containing: [gpugrad.FloatTensor of size 1]\n)")
    assert list(nn.ParameterDict({"w": gpugrad.ones(1), "a": gpugrad.ones(1)})) == ["a", "w"]
    holder = nn.Module()
    holder.heads, holder.scales = d, pl
    assert len(list(holder.parameters())) == 7   # 4 from the dict of modules, 3 from the list
    opt = gpugrad.optim.SGD(holder.parameters(), lr=0.1)
    (d["enc"](gpugrad.ones(1, 2)).sum() + pl[2].sum()).backward()
    opt.step()
    assert pl[2].detach().tolist() == pytest.approx([0.9])


def test_more_init_and_parameter_vector_helpers():
    gpugrad.manual_seed(0)
    w = gpugrad.empty(20, 30)
    nn.init.orthogonal_(w, gain=2.0)
    q = w.numpy()
    np.testing.assert_allclose(q @ q.T, 4 * np.eye(20), atol=1e-4)
    t = gpugrad.empty(20000, dtype=gpugrad.float64)
    nn.init.trunc_normal_(t, mean=0.5, std=1.0, a=-1.0, b=1.5)
    a = t.numpy()
    assert a.min() >= -1.0 and a.max() <= 1.5
    # mean of N(0.5, 1) truncated to [-1, 1.5]: 0.5 + (pdf(-1.5) - pdf(1)) / (cdf(1) - cdf(-1.5))
    pdf = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)   # noqa: E731
    cdf = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))   # noqa: E731
    assert abs(a.mean() - (0.5 + (pdf(-1.5) - pdf(1.0)) / (cdf(1.0) - cdf(-1.5)))) < 0.02
    e = gpugrad.empty(2, 3)
    assert nn.init.eye_(e).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    m = nn.Linear(3, 2)
    v = nn.utils.parameters_to_vector(m.parameters())
    assert v.shape == (8,) and v.grad_fn.name() == "CatBackward0"
    nn.utils.vector_to_parameters(gpugrad.arange(8.0), m.parameters())
    assert m.weight.detach().tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert m.bias.detach().tolist() == [6.0, 7.0]


def test_pad_errors():
    x = gpugrad.zeros(2, 3)
    with pytest.raises(RuntimeError, match="^Padding length must be divisible by 2$"):
        F.pad(x, (1, 2, 3))
    with pytest.raises(RuntimeError, match=re.escape(
            "Padding length should be less than or equal to two times the input dimension but "
            "got padding length 6 and input of dimension 2")):
        F.pad(x, (1,) * 6)
    with pytest.raises(NotImplementedError, match="^Unrecognised padding mode symmetric$"):
        F.pad(x, (1, 1), mode="symmetric")
    assert F.pad(x, (1, 1), value=3.0).tolist()[0] == [3.0, 0.0, 0.0, 0.0, 3.0]


def test_grouped_and_dilated_convolutions_match_separate_ones(rng):
    """groups=g is g convolutions over slices of the channels, stacked; checked against that
    composition (values and gradients), and the module's shapes, init bound and repr."""
    x = gpugrad.tensor(rng.standard_normal((2, 4, 7, 7)), requires_grad=True)
    w = gpugrad.tensor(rng.standard_normal((6, 2, 3, 3)), requires_grad=True)
    y = F.conv2d(x, w, None, 1, 1, 2, groups=2)
    parts = [F.conv2d(x[:, 2 * g:2 * g + 2], w[3 * g:3 * g + 3], None, 1, 1, 2)
             for g in range(2)]
    want = gpugrad.cat(parts, 1)
    np.testing.assert_allclose(arr(y), arr(want), rtol=1e-12)
    gy = gpugrad.tensor(rng.standard_normal(tuple(y.shape)))
    gx, gw = gpugrad.autograd.grad(y, (x, w), gy)
    hx, hw = gpugrad.autograd.grad(want, (x, w), gy)
    np.testing.assert_allclose(arr(gx), arr(hx), rtol=1e-12)
    np.testing.assert_allclose(arr(gw), arr(hw), rtol=1e-12)
    depthwise = nn.Conv1d(4, 8, 3, groups=4, dilation=2)
    assert tuple(depthwise.weight.shape) == (8, 1, 3)
    assert float(depthwise.bias.abs().max()) <= 1 / np.sqrt(3)   # fan-in: in / groups * k
    assert repr(depthwise) == "Conv1d(4, 8, kernel_size=(3,), stride=(1,), dilation=(2,), groups=4)"
    assert tuple(depthwise(gpugrad.randn(2, 4, 9)).shape) == (2, 8, 5)


def test_grouped_convolution_matches_torch(rng):
    torch = pytest.importorskip("torch")
    x, w, b = rng.standard_normal((2, 6, 8)), rng.standard_normal((9, 2, 3)), rng.standard_normal(9)
    ours = F.conv1d(gpugrad.tensor(x), gpugrad.tensor(w), gpugrad.tensor(b), 2, 1, 1, 3)
    theirs = torch.nn.functional.conv1d(torch.tensor(x), torch.tensor(w), torch.tensor(b), 2, 1,
                                        1, 3)
    np.testing.assert_allclose(arr(ours), theirs.numpy(), rtol=1e-12)


@pytest.mark.parametrize("kw", [{}, {"weight": [1.0, 2.0, 3.0, 4.0]}, {"label_smoothing": 0.1},
                                {"label_smoothing": 0.1, "weight": [2.0, 2.0, 1.0, 1.0]}])
def test_a_batch_whose_targets_are_all_ignored_has_zero_gradient(device, kw):
    """PyTorch: the mean over no targets is NaN, but the gradient is 0 (a fully padded batch
    must not poison the parameters)."""
    x = tensor(np.arange(12.0).reshape(3, 4) / 7, device, requires_grad=True)
    if "weight" in kw:
        kw = dict(kw, weight=tensor(kw["weight"], device))
    ignored = gpugrad.tensor([-100, -100, -100], device=device)
    loss = F.cross_entropy(x, ignored, **kw)
    loss.backward()
    assert np.isnan(loss.item())
    np.testing.assert_array_equal(to_numpy(x.grad), np.zeros((3, 4)))
    x.grad = None
    F.nll_loss(x, ignored, reduction="mean").backward()
    np.testing.assert_array_equal(to_numpy(x.grad), np.zeros((3, 4)))
    x.grad = None   # one target left: the usual mean over it
    F.nll_loss(x, gpugrad.tensor([-100, 2, -100], device=device)).backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [[0, 0, 0, 0], [0, 0, -1, 0], [0, 0, 0, 0]])


def test_container_operators_and_collapsed_repr():
    relu, tanh = nn.ReLU(), nn.Tanh()
    s = nn.Sequential(relu, nn.Linear(2, 2), tanh)
    assert s.pop(1).out_features == 2 and list(s._modules) == ["0", "1"] and s[1] is tanh
    assert list(s + nn.Sequential(relu)) == [relu, tanh, relu]
    assert list(s * 2) == [relu, tanh, relu, tanh] and list(2 * s) == list(s * 2)
    with pytest.raises(ValueError, match=r"^add operator supports only objects of Sequential "
                                         r"class, but <class 'list'> is given\.$"):
        s + [relu]
    with pytest.raises(ValueError, match=r"^Non-positive multiplication factor 0 for <class "
                                         r"'gpugrad\.nn\.containers\.Sequential'>$"):
        s * 0
    s *= 2
    assert list(s._modules) == ["0", "1", "2", "3"]
    ml = nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.ReLU(), nn.Tanh(), nn.Linear(2, 2),
                        nn.Linear(2, 2), nn.Linear(2, 3)])
    assert repr(ml) == (
        "ModuleList(\n  (0-2): 3 x ReLU()\n  (3): Tanh()\n"
        "  (4-5): 2 x Linear(in_features=2, out_features=2, bias=True)\n"
        "  (6): Linear(in_features=2, out_features=3, bias=True)\n)")
    assert repr(nn.ModuleList()) == "ModuleList()"
    assert isinstance(ml.pop(3), nn.Tanh) and len(ml + [nn.ReLU()]) == 7
    pd = nn.ParameterDict({"b": gpugrad.ones(1), "a": gpugrad.ones(2)})
    key, p = pd.popitem()
    assert key == "b" and list(pd | nn.ParameterDict({"c": gpugrad.ones(1)})) == ["a", "c"]
    assert pd.get("missing", 5) == 5 and pd.setdefault("z", gpugrad.ones(3)).shape == (3,)

