"""nn.utils: packed sequences (and recurrent layers on them), clipping, weight and spectral
normalisation, parametrize, batch-norm fusion, skip_init and stateless calls."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad import nn
from gpugrad.autograd import gradcheck
from gpugrad.nn.utils import parametrizations, parametrize
from gpugrad.nn.utils.rnn import (
    PackedSequence,
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
    unpack_sequence,
    unpad_sequence,
)
from gpugrad.nn.utils.weight_norm import _weight_norm


def _ints(t):
    return None if t is None else to_numpy(t).tolist()


# -- packing and padding ------------------------------------------------------------------------
def test_pack_sequence_exact_layout(device):
    p = pack_sequence([tensor([1, 2, 3], device), tensor([4, 5], device), tensor([6], device)])
    assert isinstance(p, PackedSequence) and isinstance(p, tuple)
    assert to_numpy(p.data).tolist() == [1, 4, 6, 2, 5, 3]
    assert _ints(p.batch_sizes) == [3, 2, 1] and p.batch_sizes.device.type == "cpu"
    assert p.sorted_indices is None and p.unsorted_indices is None


def test_pack_padded_unsorted_batch_first_and_back(device):
    x = tensor([[1, 2, 0], [3, 0, 0], [4, 5, 6]], device)
    p = pack_padded_sequence(x, [2, 1, 3], batch_first=True, enforce_sorted=False)
    assert to_numpy(p.data).tolist() == [4, 1, 3, 5, 2, 6]
    assert _ints(p.batch_sizes) == [3, 2, 1]
    assert _ints(p.sorted_indices) == [2, 0, 1] and _ints(p.unsorted_indices) == [1, 2, 0]
    padded, lengths = pad_packed_sequence(p, batch_first=True, padding_value=-1, total_length=4)
    assert to_numpy(padded).tolist() == [[1, 2, -1, -1], [3, -1, -1, -1], [4, 5, 6, -1]]
    assert _ints(lengths) == [2, 1, 3]
    time_major, _ = pad_packed_sequence(p)
    assert to_numpy(time_major).tolist() == [[1, 3, 4], [2, 0, 5], [0, 0, 6]]
    assert [to_numpy(s).tolist() for s in unpack_sequence(p)] == [[1, 2], [3], [4, 5, 6]]


def test_pack_padded_trailing_dims_time_major(device):
    x = np.arange(3 * 2 * 2, dtype=np.float64).reshape(3, 2, 2)   # (T, B, feature)
    p = pack_padded_sequence(tensor(x, device), gpugrad.tensor([3, 1]))
    np.testing.assert_array_equal(to_numpy(p.data), np.stack([x[0, 0], x[0, 1], x[1, 0],
                                                              x[2, 0]]))
    assert _ints(p.batch_sizes) == [2, 1, 1]


def test_pad_sequence_sides_and_unpad(device):
    seqs = [tensor([1, 2, 3], device), tensor([4], device)]
    assert to_numpy(pad_sequence(seqs)).tolist() == [[1, 4], [2, 0], [3, 0]]
    left = pad_sequence(seqs, batch_first=True, padding_value=9, padding_side="left")
    assert to_numpy(left).tolist() == [[1, 2, 3], [9, 9, 4]]
    back = unpad_sequence(pad_sequence(seqs), gpugrad.tensor([3, 1]))
    assert [to_numpy(s).tolist() for s in back] == [[1, 2, 3], [4]]


def test_pack_pad_errors():
    x = gpugrad.zeros(3, 2, 1)
    with pytest.raises(RuntimeError, match=r"^`lengths` array must be sorted in decreasing "
                                           r"order when `enforce_sorted` is True\. You can pass"):
        pack_padded_sequence(x, [1, 3])
    with pytest.raises(RuntimeError, match="^Length of all samples has to be greater than 0, "
                                           "but found an element in 'lengths' that is <= 0$"):
        pack_padded_sequence(x, [3, 0])
    with pytest.raises(RuntimeError, match=r"^Expected `len\(lengths\)` to be equal to "
                                           r"batch_size, but got 3 \(batch_size=2\)$"):
        pack_padded_sequence(x, [3, 2, 1])
    with pytest.raises(ValueError, match="^Expected total_length to be at least the length of "
                                         "the longest sequence in input, but got total_length=2 "
                                         "and max sequence length being 3$"):
        pad_packed_sequence(pack_padded_sequence(x, [3, 2]), total_length=2)
    with pytest.raises(RuntimeError, match="^Expected padding_side to be one of left or right, "
                                           "but got mid.$"):
        pad_sequence([gpugrad.zeros(2)], padding_side="mid")
    with pytest.raises(RuntimeError, match="^received an empty list of sequences$"):
        pad_sequence([])


def test_gradient_flows_through_pack_and_pad_to_valid_entries_only(device):
    x = tensor(np.arange(12.0).reshape(4, 3), device, requires_grad=True)   # (T, B)
    p = pack_padded_sequence(x, [2, 4, 1], enforce_sorted=False)
    padded, _ = pad_packed_sequence(p, batch_first=True, padding_value=7.0)
    weights = tensor(np.arange(1.0, 13.0).reshape(3, 4), device)
    (padded * weights).sum().backward()
    valid = np.arange(4)[:, None] < np.array([2, 4, 1])[None, :]
    np.testing.assert_array_equal(to_numpy(x.grad), np.where(valid, np.arange(1.0, 13.0)
                                                             .reshape(3, 4).T, 0.0))


def test_pad_sequence_gradcheck():
    a = gpugrad.randn(3, 2, dtype=gpugrad.float64, requires_grad=True)
    b = gpugrad.randn(1, 2, dtype=gpugrad.float64, requires_grad=True)
    assert gradcheck(lambda a, b: pad_sequence([a, b], padding_value=0.5, padding_side="left"),
                     (a, b))


def test_packed_sequence_to_and_constructor(device):
    p = pack_sequence([tensor([1.0, 2.0]), tensor([3.0])], enforce_sorted=False)
    assert p.to("cpu") is p
    q = p.to(device=device, dtype=gpugrad.float32)
    assert q.data.dtype == gpugrad.float32 and q.data.device.type == device
    assert q.sorted_indices.device.type == device and q.batch_sizes is p.batch_sizes
    r = PackedSequence(p.data, p.batch_sizes, p.sorted_indices)
    assert _ints(r.unsorted_indices) == _ints(p.unsorted_indices)
    assert PackedSequence((p.data, p.batch_sizes)).batch_sizes is p.batch_sizes


# -- recurrent layers on packed input -----------------------------------------------------------
def _seqs(device, lengths, features=3, requires_grad=True):
    rng = np.random.default_rng(1)
    return [tensor(rng.standard_normal((n, features)), device, requires_grad=requires_grad)
            for n in lengths]


@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed_lstm_matches_per_sequence_runs(device, bidirectional):
    gpugrad.manual_seed(0)
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=bidirectional).double().to(device)
    lengths = [2, 5, 1, 3]
    seqs = _seqs(device, lengths)
    layers = 4 if bidirectional else 2
    h0 = gpugrad.randn(layers, 4, 4, dtype=gpugrad.float64, device=device)
    c0 = gpugrad.randn(layers, 4, 4, dtype=gpugrad.float64, device=device)
    out, (h, c) = lstm(pack_sequence(seqs, enforce_sorted=False), (h0, c0))
    assert isinstance(out, PackedSequence)
    outs = unpack_sequence(out)
    (sum((o * o).sum() for o in outs) + h.sum() + 2 * c.sum()).backward()
    packed_grads = [to_numpy(s.grad) for s in seqs] + [to_numpy(lstm.weight_hh_l0.grad)]
    lstm.zero_grad()
    for s in seqs:
        s.grad = None
    for b, s in enumerate(seqs):
        o, (hb, cb) = lstm(s, (h0[:, b], c0[:, b]))   # unbatched: one sequence alone
        np.testing.assert_allclose(to_numpy(outs[b]), to_numpy(o), atol=1e-12)
        np.testing.assert_allclose(to_numpy(h[:, b]), to_numpy(hb), atol=1e-12)
        np.testing.assert_allclose(to_numpy(c[:, b]), to_numpy(cb), atol=1e-12)
        ((o * o).sum() + hb.sum() + 2 * cb.sum()).backward()
    single = [to_numpy(s.grad) for s in seqs] + [to_numpy(lstm.weight_hh_l0.grad)]
    for a, b in zip(packed_grads, single):
        np.testing.assert_allclose(a, b, atol=1e-12)


@pytest.mark.parametrize("cls", [nn.GRU, nn.RNN])
def test_packed_gru_rnn_final_state_is_each_sequences_last_step(device, cls):
    gpugrad.manual_seed(0)
    net = cls(3, 2, batch_first=True).double().to(device)
    seqs = _seqs(device, [1, 4, 2], requires_grad=False)
    out, h = net(pack_sequence(seqs, enforce_sorted=False))
    for b, s in enumerate(seqs):
        o, hb = net(s.unsqueeze(0))
        np.testing.assert_allclose(to_numpy(unpack_sequence(out)[b]), to_numpy(o[0]), atol=1e-12)
        np.testing.assert_allclose(to_numpy(h[:, b]), to_numpy(hb[:, 0]), atol=1e-12)
        np.testing.assert_allclose(to_numpy(h[0, b]), to_numpy(o[0, -1]), atol=1e-12)


def test_packed_input_checks():
    lstm = nn.LSTM(3, 4).double()
    p = pack_sequence([gpugrad.zeros(2, 3, dtype=gpugrad.float64)])
    with pytest.raises(RuntimeError, match=r"^Expected hidden\[0\] size \(1, 1, 4\), got "
                                           r"\[1, 2, 4\]$"):
        lstm(p, (gpugrad.zeros(1, 2, 4, dtype=gpugrad.float64),) * 2)
    bad = PackedSequence(gpugrad.zeros(2, 1, 3, dtype=gpugrad.float64), p.batch_sizes)
    with pytest.raises(RuntimeError, match="^input must have 2 dimensions, got 3$"):
        lstm(bad)


# -- clipping -----------------------------------------------------------------------------------
def test_clip_grad_value_and_total_norm(device):
    a = tensor([1.0, -2.0], device, requires_grad=True)
    b = tensor([[0.5, 3.0]], device, requires_grad=True)
    a.grad, b.grad = tensor([0.3, -2.0], device), tensor([[0.5, 3.0]], device)
    assert nn.utils.clip_grad_value_([a, b], 1.0) is None
    assert to_numpy(a.grad).tolist() == [0.3, -1.0] and to_numpy(b.grad).tolist() == [[0.5, 1.0]]
    total = nn.utils.get_total_norm([a.grad, b.grad])
    assert total.item() == pytest.approx(np.sqrt(0.09 + 1 + 0.25 + 1))
    assert nn.utils.get_total_norm([a.grad, b.grad], "inf").item() == 1.0
    nn.utils.clip_grads_with_norm_([a, b], 1.0, total)
    np.testing.assert_allclose(to_numpy(a.grad), np.array([0.3, -1.0]) / (total.item() + 1e-6))


# -- weight norm and spectral norm --------------------------------------------------------------
def _linear(device, rng, out=3, inp=4):
    m = nn.Linear(inp, out).double().to(device)
    m.weight.data = tensor(rng.standard_normal((out, inp)), device)
    return m


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_hook_values_and_grads(device, rng, dim):
    m = _linear(device, rng)
    w0 = to_numpy(m.weight)
    with pytest.warns(FutureWarning):
        nn.utils.weight_norm(m, dim=dim)
    assert list(m.state_dict()) == ["bias", "weight_g", "weight_v"]
    axes = None if dim is None else tuple(d for d in range(2) if d != dim)
    np.testing.assert_allclose(to_numpy(m.weight_g),
                               np.sqrt((w0 ** 2).sum(axis=axes, keepdims=dim is not None)))
    with gpugrad.no_grad():
        m.weight_g.mul_(2.0)
    x = tensor(rng.standard_normal((2, 4)), device)
    np.testing.assert_allclose(to_numpy(m(x)), to_numpy(x) @ (2 * w0).T + to_numpy(m.bias))
    g, v = m.weight_g.detach().requires_grad_(), m.weight_v.detach().requires_grad_()
    assert gradcheck(lambda g, v: _weight_norm(v, g, -1 if dim is None else dim), (g, v))
    nn.utils.remove_weight_norm(m)
    assert list(m.state_dict()) == ["bias", "weight"]   # re-registered last, as in PyTorch
    np.testing.assert_allclose(to_numpy(m.weight), 2 * w0)
    with pytest.raises(ValueError, match="^weight_norm of 'weight' not found in Linear"):
        nn.utils.remove_weight_norm(m)


def test_spectral_norm_hook_divides_by_the_top_singular_value(device, rng):
    m = _linear(device, rng)
    w0 = to_numpy(m.weight)
    nn.utils.spectral_norm(m, n_power_iterations=50)
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    m(tensor(np.zeros((1, 4)), device))   # training: 50 power-method steps
    sigma = np.linalg.svd(w0, compute_uv=False)[0]
    np.testing.assert_allclose(to_numpy(m.weight), w0 / sigma, rtol=1e-10)
    m.eval()
    u = to_numpy(m.weight_u)
    m(tensor(np.zeros((1, 4)), device))
    np.testing.assert_array_equal(to_numpy(m.weight_u), u)   # eval: no refinement
    # d(w / sigma)/dw with u, v fixed: sigma = u^T W v
    uu, vv = tensor(u, device), m.weight_v.detach()
    assert gradcheck(lambda w: w / uu.dot(w.mv(vv)), (m.weight_orig.detach().requires_grad_(),))
    nn.utils.remove_spectral_norm(m)
    np.testing.assert_allclose(to_numpy(m.weight), w0 / sigma, rtol=1e-10)
    with pytest.raises(ValueError, match="^Expected n_power_iterations to be positive, but got "
                                         "n_power_iterations=0$"):
        nn.utils.spectral_norm(m, n_power_iterations=0)


# -- parametrize --------------------------------------------------------------------------------
class Symmetric(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x.triu() + x.triu(1).mT

    def right_inverse(self, a):
        return a.triu()


def test_parametrize_register_cache_and_remove(device, rng):
    m = _linear(device, rng, 3, 3)
    orig = m.weight
    parametrize.register_parametrization(m, "weight", Symmetric())
    assert type(m).__name__ == "ParametrizedLinear" and isinstance(m, nn.Linear)
    assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "weight")
    assert not parametrize.is_parametrized(m, "bias")
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert m.parametrizations.weight.original is orig   # same Parameter object, new value
    w = to_numpy(m.weight)
    np.testing.assert_array_equal(w, w.T)
    sym = m.parametrizations.weight[0]
    sym.calls = 0
    with parametrize.cached():
        a, b = m.weight, m.weight
    assert a is b and sym.calls == 1
    m.weight.sum().backward()   # d/dX of sum(triu(X) + triu(X, 1)^T): 2 above the diagonal
    np.testing.assert_array_equal(to_numpy(orig.grad), np.triu(np.ones((3, 3))) +
                                  np.triu(np.ones((3, 3)), 1))
    m.weight = tensor(np.full((3, 3), 2.0), device)   # stored through right_inverse
    np.testing.assert_array_equal(to_numpy(orig), np.triu(np.full((3, 3), 2.0)))
    parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    assert type(m) is nn.Linear and m.weight is orig
    assert list(m.state_dict()) == ["bias", "weight"]
    assert "parametrizations" not in m._modules


def test_parametrize_leave_parametrized_and_errors(rng):
    m = _linear("cpu", rng, 3, 3)
    parametrize.register_parametrization(m, "weight", Symmetric())
    w = to_numpy(m.weight)
    parametrize.remove_parametrizations(m, "weight")
    np.testing.assert_array_equal(to_numpy(m.weight), w)
    with pytest.raises(ValueError, match="^Module Linear.* does not have a parametrization on "
                                         "weight$"):
        parametrize.remove_parametrizations(m, "weight")
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a "
                                         "parametrized element with name 'foo'"):
        parametrize.register_parametrization(m, "foo", Symmetric())

    class Shrink(nn.Module):
        def forward(self, x):
            return x[:2]
    with pytest.raises(ValueError, match="^Registering a parametrization may not change the "
                                         "shape of the tensor, unless `unsafe` flag is enabled"):
        parametrize.register_parametrization(m, "weight", Shrink())


def test_parametrizations_weight_norm_and_spectral_norm_state(device, rng):
    m = _linear(device, rng)
    w0 = to_numpy(m.weight)
    parametrizations.weight_norm(m)
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original0",
                                    "parametrizations.weight.original1"]
    np.testing.assert_allclose(to_numpy(m.weight), w0, rtol=1e-12)
    np.testing.assert_allclose(to_numpy(m.parametrizations.weight.original0),
                               np.linalg.norm(w0, axis=1, keepdims=True))
    s = _linear(device, rng)
    w1 = to_numpy(s.weight)
    parametrizations.spectral_norm(s)   # 15 power-method steps at registration
    assert list(s.state_dict()) == ["bias", "parametrizations.weight.original",
                                    "parametrizations.weight.0._u", "parametrizations.weight.0._v"]
    for _ in range(20):
        s.weight
    np.testing.assert_allclose(to_numpy(s.weight), w1 / np.linalg.svd(w1, compute_uv=False)[0],
                               rtol=1e-8)


@pytest.mark.parametrize("shape,omap", [((3, 3), None), ((4, 2), None), ((2, 4), "cayley"),
                                        ((3, 3), "householder"), ((4, 3), "matrix_exp")])
def test_orthogonal_stays_orthogonal_and_differentiable(shape, omap, rng):
    m = nn.Linear(shape[1], shape[0]).double()
    parametrizations.orthogonal(m, orthogonal_map=omap)
    n, k = shape

    def gram(w):
        return w.T @ w if n >= k else w @ w.T
    np.testing.assert_allclose(gram(to_numpy(m.weight)), np.eye(min(n, k)), atol=1e-12)
    original = m.parametrizations.weight.original
    with gpugrad.no_grad():   # off the diagonal: householder keeps its +-1 diagonal
        original.add_(tensor(np.tril(rng.standard_normal(shape), -1) * 0.3))
    np.testing.assert_allclose(gram(to_numpy(m.weight)), np.eye(min(n, k)), atol=1e-12)
    orth = m.parametrizations.weight[0]
    x = tensor(np.tril(rng.standard_normal(shape), -1) * 0.3, requires_grad=True)
    assert gradcheck(orth, (x,))


# -- fusion, skip_init, stateless ---------------------------------------------------------------
def _trained_bn(bn, rng, device):
    with gpugrad.no_grad():
        bn.running_mean.copy_(tensor(rng.standard_normal(bn.num_features), device))
        bn.running_var.copy_(tensor(rng.uniform(0.5, 2, bn.num_features), device))
        bn.weight.copy_(tensor(rng.standard_normal(bn.num_features), device))
        bn.bias.copy_(tensor(rng.standard_normal(bn.num_features), device))
    return bn.eval()


def test_fuse_conv_bn_and_linear_bn_match_eval_mode(device, rng):
    conv = nn.Conv2d(2, 3, 3, bias=False).double().to(device).eval()
    bn = _trained_bn(nn.BatchNorm2d(3).double().to(device), rng, device)
    x = tensor(rng.standard_normal((2, 2, 5, 5)), device)
    fused = nn.utils.fuse_conv_bn_eval(conv, bn)
    np.testing.assert_allclose(to_numpy(fused(x)), to_numpy(bn(conv(x))), atol=1e-12)
    assert conv.bias is None and isinstance(fused.bias, nn.Parameter)
    lin = nn.Linear(4, 3).double().to(device).eval()
    bn1 = _trained_bn(nn.BatchNorm1d(3).double().to(device), rng, device)
    x = tensor(rng.standard_normal((5, 4)), device)
    np.testing.assert_allclose(to_numpy(nn.utils.fuse_linear_bn_eval(lin, bn1)(x)),
                               to_numpy(bn1(lin(x))), atol=1e-12)
    with pytest.raises(AssertionError, match="^Fusion only for eval!$"):
        nn.utils.fuse_conv_bn_eval(conv.train(), bn)


def test_skip_init_and_stateless_call():
    m = nn.utils.skip_init(nn.Linear, 3, 2, dtype=gpugrad.float64)
    assert m.weight.shape == (2, 3) and m.weight.dtype == gpugrad.float64
    with pytest.raises(RuntimeError, match="^Module must support a 'device' arg to skip "
                                           "initialization$"):
        nn.utils.skip_init(nn.ReLU)
    lin = nn.Linear(2, 1).double()
    params = {"weight": tensor([[1.0, 2.0]]), "bias": tensor([0.5])}
    with pytest.warns(FutureWarning):
        y = nn.utils.stateless.functional_call(lin, params, (tensor([[3.0, 4.0]]),))
    assert to_numpy(y).tolist() == [[11.5]]


# -- PyTorch as an oracle -----------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_packed_rnn_matches_pytorch(mode):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = getattr(torch.nn, mode)(3, 4, num_layers=2, bidirectional=True,
                                     batch_first=True).double()
    ours = getattr(nn, mode)(3, 4, num_layers=2, bidirectional=True, batch_first=True).double()
    for name, p in theirs.named_parameters():
        getattr(ours, name).data = gpugrad.tensor(p.detach().numpy())
    x = np.random.default_rng(0).standard_normal((4, 5, 3))
    lengths = [2, 5, 1, 3]
    tx, gx = torch.tensor(x, requires_grad=True), tensor(x, requires_grad=True)
    t_out, t_h = theirs(torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, True, False))
    g_out, g_h = ours(pack_padded_sequence(gx, lengths, True, False))
    t_pad = torch.nn.utils.rnn.pad_packed_sequence(t_out, True)[0]
    g_pad = pad_packed_sequence(g_out, True)[0]
    np.testing.assert_allclose(to_numpy(g_pad), t_pad.detach().numpy(), atol=1e-12)
    t_h, g_h = (t_h if mode == "LSTM" else (t_h,)), (g_h if mode == "LSTM" else (g_h,))
    for a, b in zip(g_h, t_h):
        np.testing.assert_allclose(to_numpy(a), b.detach().numpy(), atol=1e-12)
    (t_pad.pow(2).sum() + sum(h.sum() for h in t_h)).backward()
    (g_pad.pow(2).sum() + sum(h.sum() for h in g_h)).backward()
    np.testing.assert_allclose(to_numpy(gx.grad), tx.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(to_numpy(ours.weight_ih_l1_reverse.grad),
                               theirs.weight_ih_l1_reverse.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("kind", ["weight_norm", "spectral_norm"])
def test_weight_and_spectral_norm_match_pytorch(kind):
    torch = pytest.importorskip("torch")
    theirs = getattr(torch.nn.utils.parametrizations, kind)(torch.nn.Conv2d(2, 3, 2).double())
    ours = getattr(parametrizations, kind)(nn.Conv2d(2, 3, 2).double())
    mine = dict(ours.named_parameters()) | dict(ours.named_buffers())
    assert sorted(mine) == sorted(theirs.state_dict())
    for k, v in theirs.state_dict().items():   # same keys: copy every tensor across
        mine[k].data = gpugrad.tensor(v.numpy())
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 4))
    theirs.eval(), ours.eval()
    ty, gy = theirs(torch.tensor(x)), ours(tensor(x))
    np.testing.assert_allclose(to_numpy(gy), ty.detach().numpy(), atol=1e-12)
    (ty ** 2).sum().backward()
    (gy ** 2).sum().backward()
    for (k, a), b in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(to_numpy(a.grad), b.grad.numpy(), atol=1e-12, err_msg=k)


def test_hook_weight_norm_matches_pytorch():
    torch = pytest.importorskip("torch")
    theirs, ours = torch.nn.Linear(4, 3).double(), nn.Linear(4, 3).double()
    for k, v in theirs.state_dict().items():
        getattr(ours, k).data = gpugrad.tensor(v.numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.nn.utils.weight_norm(theirs, dim=1)
        nn.utils.weight_norm(ours, dim=1)
    x = np.random.default_rng(0).standard_normal((2, 4))
    ty, gy = theirs(torch.tensor(x)), ours(tensor(x))
    np.testing.assert_allclose(to_numpy(gy), ty.detach().numpy(), atol=1e-12)
    (ty ** 2).sum().backward()
    (gy ** 2).sum().backward()
    np.testing.assert_allclose(to_numpy(ours.weight_g.grad), theirs.weight_g.grad.numpy(),
                               atol=1e-12)
    np.testing.assert_allclose(to_numpy(ours.weight_v.grad), theirs.weight_v.grad.numpy(),
                               atol=1e-12)


def test_spectral_norm_of_any_transposed_convolution_normalises_dim_1():
    # a transposed convolution's weight is (in, out / groups, *kernel): u lives in dim 1
    for conv in (nn.ConvTranspose1d(2, 3, 2), nn.ConvTranspose2d(2, 3, 2),
                 nn.ConvTranspose3d(2, 3, 2)):
        assert nn.utils.spectral_norm(conv).weight_u.shape == (3,)
    assert nn.utils.parametrizations.spectral_norm(
        nn.ConvTranspose3d(2, 3, 2)).parametrizations.weight[0].dim == 1
    assert nn.utils.spectral_norm(nn.Conv3d(2, 5, 2)).weight_u.shape == (5,)   # (out, in, ...)
