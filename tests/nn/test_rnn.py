"""Recurrent layers, attention and the further layers/functions of gpugrad.nn: exact values
against hand-written numpy formulas, gradcheck in float64, shapes for every option, PyTorch's
error messages, and oracle comparisons with PyTorch (skipped without it)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradcheck

f64 = gpugrad.float64
MODES = {"RNN": "RNN_TANH", "LSTM": "LSTM", "GRU": "GRU"}


def sig(x):
    return 1 / (1 + np.exp(-x))


# -- numpy references ---------------------------------------------------------------------------
def np_cell(mode, x, state, weight_ih, weight_hh, bias_ih=None, bias_hh=None, weight_hr=None):
    """One step of PyTorch's documented recurrences, gates sliced out of the stacked rows."""
    gi = x @ weight_ih.T + (0 if bias_ih is None else bias_ih)
    gh = state[0] @ weight_hh.T + (0 if bias_hh is None else bias_hh)
    if mode == "RNN_TANH":
        return (np.tanh(gi + gh),)
    if mode == "RNN_RELU":
        return (np.maximum(gi + gh, 0),)
    H = weight_hh.shape[0] // (4 if mode == "LSTM" else 3)
    part = lambda a, k: a[..., k * H:(k + 1) * H]   # noqa: E731
    if mode == "LSTM":
        s = gi + gh
        c = sig(part(s, 1)) * state[1] + sig(part(s, 0)) * np.tanh(part(s, 2))
        h = sig(part(s, 3)) * np.tanh(c)
        return (h if weight_hr is None else h @ weight_hr.T, c)
    r = sig(part(gi, 0) + part(gh, 0))
    z = sig(part(gi, 1) + part(gh, 1))
    n = np.tanh(part(gi, 2) + r * part(gh, 2))
    return ((1 - z) * n + z * state[0],)


def np_sequence(m, x, states):
    """The stacked, optionally bidirectional recurrence over time-major ``x`` (T, N, I)."""
    p = {k: to_numpy(v) for k, v in m.state_dict().items()}
    dirs = 2 if m.bidirectional else 1
    finals, inp = [], x
    for layer in range(m.num_layers):
        outs = []
        for d in range(dirs):
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            w = {n: p.get(n + sfx) for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh",
                                               "weight_hr")}
            st = tuple(s[layer * dirs + d] for s in states)
            hs = [None] * len(inp)
            for t in (reversed(range(len(inp))) if d else range(len(inp))):
                st = np_cell(m.mode, inp[t], st, **w)
                hs[t] = st[0]
            outs.append(np.stack(hs))
            finals.append(st)
        inp = np.concatenate(outs, -1)
    return inp, tuple(np.stack([f[i] for f in finals]) for i in range(len(states)))


def np_sdpa(q, k, v, keep=None, bias=None, scale=None):
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if bias is not None:
        s = s + bias
    if keep is not None:
        s = np.where(keep, s, -np.inf)
    dead = np.all(np.isneginf(s), -1, keepdims=True)
    s = np.where(dead, 0, s)
    e = np.exp(s - s.max(-1, keepdims=True))
    return np.where(dead, 0, e / e.sum(-1, keepdims=True)) @ v


# -- cells --------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind,mode", [("RNNCell", "RNN_TANH"), ("RNNCell", "RNN_RELU"),
                                       ("LSTMCell", "LSTM"), ("GRUCell", "GRU")])
@pytest.mark.parametrize("bias", [True, False])
def test_cells_match_the_numpy_recurrences(kind, mode, bias, device, rng):
    kw = {"nonlinearity": "relu"} if mode == "RNN_RELU" else {}
    m = getattr(nn, kind)(3, 4, bias=bias, dtype=f64, **kw).to(device)
    x, h, c = rng.standard_normal((2, 3)), rng.standard_normal((2, 4)), rng.standard_normal((2, 4))
    w = {k: to_numpy(v) for k, v in m.state_dict().items()}
    assert set(w) == ({"weight_ih", "weight_hh", "bias_ih", "bias_hh"} if bias
                      else {"weight_ih", "weight_hh"})
    state = (h, c) if mode == "LSTM" else (h,)
    want = np_cell(mode, x, state, **w)
    hx = tuple(tensor(s, device) for s in state) if mode == "LSTM" else tensor(h, device)
    got = m(tensor(x, device), hx)
    got = got if mode == "LSTM" else (got,)
    for g, e in zip(got, want):
        assert g.shape == (2, 4) and g.device.type == device
        np.testing.assert_allclose(to_numpy(g), e, rtol=1e-12, atol=1e-12)


def test_cells_default_state_is_zeros_and_unbatched_input_drops_the_batch(rng):
    for kind in ("RNNCell", "LSTMCell", "GRUCell"):
        m = getattr(nn, kind)(3, 5, dtype=f64)
        x = tensor(rng.standard_normal(3))
        zeros = gpugrad.zeros(5, dtype=f64)
        out, ref = m(x), m(x, (zeros, zeros) if kind == "LSTMCell" else zeros)
        out, ref = (out, ref) if kind == "LSTMCell" else ((out,), (ref,))
        for a, b in zip(out, ref):
            assert a.shape == (5,)
            np.testing.assert_array_equal(to_numpy(a), to_numpy(b))
        batched = m(x.unsqueeze(0))
        batched = batched[0] if kind == "LSTMCell" else batched
        np.testing.assert_allclose(to_numpy(batched)[0], to_numpy(out[0]), rtol=1e-14)


def test_cell_parameters_shapes_init_and_seed():
    gpugrad.manual_seed(3)
    m = nn.LSTMCell(6, 16)
    assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == [
        ("weight_ih", (64, 6)), ("weight_hh", (64, 16)), ("bias_ih", (64,)), ("bias_hh", (64,))]
    for p in m.parameters():
        a = to_numpy(p)
        assert np.abs(a).max() <= 0.25 and np.abs(a).max() > 0.2   # U(-1/4, 1/4) and filled
    gpugrad.manual_seed(3)
    again = nn.LSTMCell(6, 16)
    np.testing.assert_array_equal(to_numpy(m.weight_hh), to_numpy(again.weight_hh))
    assert nn.GRUCell(2, 3).weight_ih.shape == (9, 2) and nn.RNNCell(2, 3).weight_hh.shape == (3, 3)
    assert repr(nn.RNNCell(3, 4, nonlinearity="relu")) == "RNNCell(3, 4, nonlinearity=relu)"
    assert repr(nn.LSTMCell(3, 4, bias=False)) == "LSTMCell(3, 4, bias=False)"


def test_cell_errors_match_pytorch():
    cell, lstm = nn.RNNCell(3, 4), nn.LSTMCell(3, 4)
    with pytest.raises(ValueError, match="RNNCell: Expected input to be 1D or 2D, got 3D"):
        cell(gpugrad.randn(2, 2, 3))
    with pytest.raises(ValueError, match="RNNCell: Expected hidden to be 1D or 2D, got 3D"):
        cell(gpugrad.randn(2, 3), gpugrad.randn(2, 2, 4))
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 5 expected 3"):
        nn.GRUCell(3, 4)(gpugrad.randn(2, 5))
    with pytest.raises(RuntimeError, match="Input batch size 2 doesn't match hidden0 batch size 3"):
        cell(gpugrad.randn(2, 3), gpugrad.randn(3, 4))
    with pytest.raises(RuntimeError, match="hidden0 has inconsistent hidden_size: got 5, expe"):
        cell(gpugrad.randn(2, 3), gpugrad.randn(2, 5))
    with pytest.raises(RuntimeError, match="doesn't match hidden1 batch size 3"):
        lstm(gpugrad.randn(2, 3), (gpugrad.randn(2, 4), gpugrad.randn(3, 4)))
    with pytest.raises(ValueError, match=r"LSTMCell: Expected hx\[1\] to be 1D or 2D, got 3D"):
        lstm(gpugrad.randn(2, 3), (gpugrad.randn(2, 4), gpugrad.randn(2, 2, 4)))
    with pytest.raises(RuntimeError, match="lstm_cell expects two hidden states"):
        lstm(gpugrad.randn(2, 3), (gpugrad.randn(2, 4),))


@pytest.mark.parametrize("kind", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_gradcheck(kind, rng):
    m = getattr(nn, kind)(2, 3, dtype=f64)
    x = tensor(rng.standard_normal((2, 2)), requires_grad=True)
    h = tensor(rng.standard_normal((2, 3)), requires_grad=True)
    c = tensor(rng.standard_normal((2, 3)), requires_grad=True)
    if kind == "LSTMCell":
        fn = lambda x, h, c, *ps: m(x, (h, c))   # noqa: E731
        assert gradcheck(fn, (x, h, c, *m.parameters()))
    else:
        assert gradcheck(lambda x, h, *ps: m(x, h), (x, h, *m.parameters()))


# -- sequence layers ----------------------------------------------------------------------------
def _states(mode, m, n, rng, unbatched=False):
    dirs = 2 if m.bidirectional else 1
    real = m.proj_size or m.hidden_size
    shape_h = (m.num_layers * dirs,) + (() if unbatched else (n,))
    h = rng.standard_normal(shape_h + (real,))
    if mode != "LSTM":
        return (h,)
    return (h, rng.standard_normal(shape_h + (m.hidden_size,)))


def _call(m, x, states, device):
    hx = tuple(tensor(s, device) for s in states)
    out, h = m(x, hx if len(hx) == 2 else hx[0])
    return out, (h if isinstance(h, tuple) else (h,))


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("layers,bidirectional", [(1, False), (2, True), (3, False)])
def test_sequence_layers_match_the_numpy_recurrence(mode, layers, bidirectional, device, rng):
    m = getattr(nn, mode)(3, 4, layers, bidirectional=bidirectional, dtype=f64).to(device)
    x = rng.standard_normal((5, 2, 3))
    states = _states(mode, m, 2, rng)
    want_out, want_h = np_sequence(m, x, states)
    out, h = _call(m, tensor(x, device), states, device)
    assert out.shape == (5, 2, 4 * (2 if bidirectional else 1))
    np.testing.assert_allclose(to_numpy(out), want_out, rtol=1e-11, atol=1e-12)
    for g, e in zip(h, want_h):
        np.testing.assert_allclose(to_numpy(g), e, rtol=1e-11, atol=1e-12)


def test_lstm_projection_and_relu_rnn_match_numpy(device, rng):
    for m in (nn.LSTM(3, 5, 2, proj_size=2, bidirectional=True, dtype=f64),
              nn.RNN(3, 4, 2, nonlinearity="relu", dtype=f64)):
        m = m.to(device)
        mode = "LSTM" if isinstance(m, nn.LSTM) else "RNN"
        x = rng.standard_normal((4, 3, 3))
        states = _states(mode, m, 3, rng)
        want_out, want_h = np_sequence(m, x, states)
        out, h = _call(m, tensor(x, device), states, device)
        np.testing.assert_allclose(to_numpy(out), want_out, rtol=1e-11, atol=1e-12)
        for g, e in zip(h, want_h):
            np.testing.assert_allclose(to_numpy(g), e, rtol=1e-11, atol=1e-12)
    lstm = nn.LSTM(3, 5, 2, proj_size=2, bidirectional=True)
    out, (h, c) = lstm(gpugrad.randn(4, 3, 3))
    assert out.shape == (4, 3, 4) and h.shape == (4, 3, 2) and c.shape == (4, 3, 5)
    assert lstm.weight_hr_l1_reverse.shape == (2, 5) and lstm.weight_ih_l1.shape == (20, 4)
    assert lstm.weight_hh_l0.shape == (20, 2)


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("layers", [1, 2])
def test_sequence_layer_shapes_for_every_option(mode, batch_first, bidirectional, layers, rng):
    T, N, H = 5, 3, 4
    m = getattr(nn, mode)(2, H, layers, batch_first=batch_first, bidirectional=bidirectional,
                          dtype=f64)
    dirs = 2 if bidirectional else 1
    x = rng.standard_normal((T, N, 2))
    out, h = m(tensor(x.transpose(1, 0, 2) if batch_first else x))
    h = h if isinstance(h, tuple) else (h,)
    assert out.shape == ((N, T, dirs * H) if batch_first else (T, N, dirs * H))
    assert all(s.shape == (layers * dirs, N, H) for s in h)
    # the same numbers as the numpy recurrence from zero states, in either layout
    ref_out, ref_h = np_sequence(m, x, tuple(np.zeros((layers * dirs, N, H)) for _ in h))
    got = to_numpy(out).transpose(1, 0, 2) if batch_first else to_numpy(out)
    np.testing.assert_allclose(got, ref_out, rtol=1e-11, atol=1e-12)
    for a, b in zip(h, ref_h):
        np.testing.assert_allclose(to_numpy(a), b, rtol=1e-11, atol=1e-12)
    # unbatched 2-D input: the batch dimension disappears from output and states
    uout, uh = m(tensor(x[:, 0]))
    uh = uh if isinstance(uh, tuple) else (uh,)
    assert uout.shape == (T, dirs * H) and all(s.shape == (layers * dirs, H) for s in uh)
    np.testing.assert_allclose(to_numpy(uout), ref_out[:, 0], rtol=1e-11, atol=1e-12)


def test_unbatched_input_with_initial_state(rng):
    m = nn.LSTM(3, 4, 2, batch_first=True, dtype=f64)
    x = rng.standard_normal((6, 3))
    h0, c0 = rng.standard_normal((2, 4)), rng.standard_normal((2, 4))
    out, (h, c) = m(tensor(x), (tensor(h0), tensor(c0)))
    want_out, (wh, wc) = np_sequence(m, x[:, None], (h0[:, None], c0[:, None]))
    assert out.shape == (6, 4) and h.shape == (2, 4)
    np.testing.assert_allclose(to_numpy(out), want_out[:, 0], rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(to_numpy(c), wc[:, 0], rtol=1e-11, atol=1e-12)


def test_sequence_parameters_names_shapes_init_and_repr():
    gpugrad.manual_seed(0)
    m = nn.GRU(3, 4, 2, bidirectional=True)
    names = [(n, tuple(p.shape)) for n, p in m.named_parameters()]
    assert names[:5] == [("weight_ih_l0", (12, 3)), ("weight_hh_l0", (12, 4)),
                         ("bias_ih_l0", (12,)), ("bias_hh_l0", (12,)),
                         ("weight_ih_l0_reverse", (12, 3))]
    assert names[8] == ("weight_ih_l1", (12, 8)) and len(names) == 16
    assert list(m.state_dict()) == [n for n, _ in names]
    assert len(m.all_weights) == 4 and m.all_weights[1][0] is m.weight_ih_l0_reverse
    for p in m.parameters():
        assert np.abs(to_numpy(p)).max() <= 0.5
    assert max(np.abs(to_numpy(p)).max() for p in m.parameters()) > 0.45
    gpugrad.manual_seed(0)
    np.testing.assert_array_equal(to_numpy(nn.GRU(3, 4, 2, bidirectional=True).bias_hh_l1),
                                  to_numpy(m.bias_hh_l1))
    assert [n for n, _ in nn.LSTM(3, 4, bias=False).named_parameters()] == ["weight_ih_l0",
                                                                            "weight_hh_l0"]
    assert repr(m) == "GRU(3, 4, num_layers=2, bidirectional=True)"
    assert repr(nn.RNN(3, 4, 2, "relu", dropout=0.5, batch_first=True)) == (
        "RNN(3, 4, num_layers=2, batch_first=True, dropout=0.5)")
    assert repr(nn.LSTM(3, 4, proj_size=2, bias=False)) == "LSTM(3, 4, proj_size=2, bias=False)"
    m.flatten_parameters()   # a no-op kept for code written against cuDNN


def test_dropout_between_layers(rng):
    gpugrad.manual_seed(1)
    m = nn.LSTM(3, 4, 3, dropout=0.5, dtype=f64)
    x = tensor(rng.standard_normal((5, 2, 3)))
    m.eval()
    evaluated = to_numpy(m(x)[0])
    zeros = (np.zeros((3, 2, 4)),) * 2
    np.testing.assert_allclose(evaluated, np_sequence(m, to_numpy(x), zeros)[0], rtol=1e-11)
    m.train()
    gpugrad.manual_seed(7)
    a = to_numpy(m(x)[0])
    gpugrad.manual_seed(7)
    b = to_numpy(m(x)[0])
    np.testing.assert_array_equal(a, b)   # the generator drives the masks
    assert not np.allclose(a, evaluated)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        one = nn.GRU(3, 4, 1, dropout=1.0, dtype=f64)   # the last layer is never dropped
    np.testing.assert_array_equal(to_numpy(one(x)[0]), to_numpy(one.eval()(x)[0]))


def test_sequence_layer_errors_match_pytorch():
    rnn, lstm = nn.RNN(3, 4), nn.LSTM(3, 4)
    with pytest.raises(ValueError, match="RNN: Expected input to be 2D or 3D, got 4D tensor inst"):
        rnn(gpugrad.randn(2, 3, 3, 3))
    with pytest.raises(ValueError, match="GRU: Expected input to be 2D or 3D, got 1D instead"):
        nn.GRU(3, 4)(gpugrad.randn(3))
    with pytest.raises(RuntimeError, match="For batched 3-D input, hx should also be 3-D but got"):
        rnn(gpugrad.randn(5, 2, 3), gpugrad.randn(2, 4))
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx should also be 2-D"):
        rnn(gpugrad.randn(5, 3), gpugrad.randn(1, 1, 4))
    with pytest.raises(RuntimeError, match=r"hx and cx should also be 3-D but got \(3-D, 2-D\)"):
        lstm(gpugrad.randn(5, 2, 3), (gpugrad.randn(1, 2, 4), gpugrad.randn(2, 4)))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. "
                                           "Expected 3, got 6"):
        nn.GRU(3, 4, 2)(gpugrad.randn(5, 2, 6))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(2, 2, 4\), got \[1, 2, 4\]"):
        nn.GRU(3, 4, 2)(gpugrad.randn(5, 2, 3), gpugrad.randn(1, 2, 4))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(1, 2, 4\), got \[1, 2, 2"):
        nn.LSTM(3, 4, proj_size=2)(gpugrad.randn(5, 2, 3),
                                   (gpugrad.randn(1, 2, 2), gpugrad.randn(1, 2, 2)))
    with pytest.raises(ValueError, match="RNN input dtype .* does not match weight dtype"):
        rnn(gpugrad.randn(5, 2, 3, dtype=f64))
    for kwargs, err, msg in [
            (dict(proj_size=2), ValueError, "proj_size argument is only supported for LSTM"),
            (dict(nonlinearity="gelu"), ValueError, "Unknown nonlinearity 'gelu'"),
            (dict(hidden_size=0), ValueError, "hidden_size must be greater than zero"),
            (dict(num_layers=0), ValueError, "num_layers must be greater than zero"),
            (dict(dropout=2), ValueError, "dropout should be a number in range"),
            (dict(bias=1), TypeError, "bias should be of type bool, got: int"),
            (dict(input_size=3.0), TypeError, "input_size should be of type int, got: float")]:
        args = dict(input_size=3, hidden_size=4) | kwargs
        with pytest.raises(err, match=msg):
            nn.RNN(**args)
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
def test_sequence_layers_gradcheck(mode, rng):
    m = getattr(nn, mode)(2, 2, 2, bidirectional=True, dtype=f64)
    x = tensor(rng.standard_normal((3, 2, 2)), requires_grad=True)
    states = [tensor(s, requires_grad=True) for s in _states(mode, m, 2, rng)]

    def fn(x, *args):
        out, h = m(x, tuple(args[:2]) if mode == "LSTM" else args[0])
        return (out,) + (h if isinstance(h, tuple) else (h,))
    assert gradcheck(fn, (x, *states, *m.parameters()))


def test_lstm_with_projection_batch_first_gradcheck(rng):
    m = nn.LSTM(2, 3, 1, proj_size=1, batch_first=True, dtype=f64)
    x = tensor(rng.standard_normal((2, 3, 2)), requires_grad=True)
    assert gradcheck(lambda x, *ps: m(x)[0], (x, *m.parameters()))


def test_lstm_learns_to_sum_a_sequence():
    gpugrad.manual_seed(0)
    rng = np.random.default_rng(0)
    xs = rng.uniform(-1, 1, (256, 6, 1)).astype(np.float32)
    ys = xs.sum(1)
    lstm, head = nn.LSTM(1, 16, batch_first=True), nn.Linear(16, 1)
    opt = gpugrad.optim.Adam(list(lstm.parameters()) + list(head.parameters()), lr=0.02)
    x, y = gpugrad.tensor(xs), gpugrad.tensor(ys)
    for _ in range(150):
        opt.zero_grad()
        loss = F.mse_loss(head(lstm(x)[0][:, -1]), y)
        loss.backward()
        opt.step()
    assert loss.item() < 0.05 * float(np.var(ys))


# -- scaled dot-product attention ---------------------------------------------------------------
def test_sdpa_matches_the_numpy_formula(device, rng):
    q, k, v = (rng.standard_normal(s) for s in ((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6)))
    keep = rng.random((3, 5)) > 0.4
    keep[:, 0] = True
    bias = rng.standard_normal((2, 1, 3, 5))
    T = lambda a: tensor(a, device, dtype=gpugrad.bool if a.dtype == bool else f64)  # noqa: E731
    cases = [({}, {}), (dict(scale=0.3), dict(scale=0.3)),
             (dict(attn_mask=T(keep)), dict(keep=keep)),
             (dict(attn_mask=T(bias)), dict(bias=bias)),
             (dict(is_causal=True), dict(keep=np.tril(np.ones((3, 5), bool))))]
    for kw, ref in cases:
        out = F.scaled_dot_product_attention(T(q), T(k), T(v), **kw)
        assert out.shape == (2, 2, 3, 6)
        np.testing.assert_allclose(to_numpy(out), np_sdpa(q, k, v, **ref), rtol=1e-12,
                                   atol=1e-13)
    out2d = F.scaled_dot_product_attention(T(q[0, 0]), T(k[0, 0]), T(v[0, 0]))
    np.testing.assert_allclose(to_numpy(out2d), np_sdpa(q[0, 0], k[0, 0], v[0, 0]), rtol=1e-12)


def test_sdpa_fully_masked_rows_give_zeros_and_zero_gradients(device, rng):
    keep = np.ones((3, 4), bool)
    keep[1] = False
    bias = np.zeros((3, 4))
    bias[2] = -np.inf
    for mask in (keep, bias):
        q = tensor(rng.standard_normal((3, 2)), device, requires_grad=True)
        k = tensor(rng.standard_normal((4, 2)), device, requires_grad=True)
        v = tensor(rng.standard_normal((4, 2)), device, requires_grad=True)
        out = F.scaled_dot_product_attention(q, k, v, tensor(mask, device, dtype=(
            gpugrad.bool if mask.dtype == bool else f64)))
        dead = 1 if mask is keep else 2
        assert np.all(to_numpy(out)[dead] == 0) and np.isfinite(to_numpy(out)).all()
        out.sum().backward()
        assert np.all(to_numpy(q.grad)[dead] == 0)
        assert np.isfinite(to_numpy(k.grad)).all() and np.isfinite(to_numpy(v.grad)).all()


def test_sdpa_grouped_query_attention_repeats_kv_heads(rng):
    q, k, v = (rng.standard_normal(s) for s in ((1, 4, 3, 2), (1, 2, 5, 2), (1, 2, 5, 3)))
    out = F.scaled_dot_product_attention(tensor(q), tensor(k), tensor(v), enable_gqa=True)
    kr, vr = np.repeat(k, 2, axis=1), np.repeat(v, 2, axis=1)   # heads 0,0,1,1
    np.testing.assert_allclose(to_numpy(out), np_sdpa(q, kr, vr), rtol=1e-12)


def test_sdpa_dropout_uses_the_generator():
    q = gpugrad.randn(2, 4, 3, dtype=f64)
    gpugrad.manual_seed(5)
    a = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    gpugrad.manual_seed(5)
    b = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    np.testing.assert_array_equal(to_numpy(a), to_numpy(b))
    assert not np.allclose(to_numpy(a), to_numpy(F.scaled_dot_product_attention(q, q, q)))
    assert np.all(to_numpy(F.scaled_dot_product_attention(q, q, q, dropout_p=1.0)) == 0)


def test_sdpa_errors():
    q = gpugrad.randn(3, 4)
    with pytest.raises(RuntimeError, match="all be  at least 2 dimensional"):
        F.scaled_dot_product_attention(gpugrad.randn(4), gpugrad.randn(4), gpugrad.randn(4))
    with pytest.raises(RuntimeError, match="to have the same dtype, but got query.dtype: float "
                                           "key.dtype: double"):
        F.scaled_dot_product_attention(q, gpugrad.randn(5, 4, dtype=f64), gpugrad.randn(5, 4))
    with pytest.raises(RuntimeError, match="Expected attn_mask dtype to be bool or float"):
        F.scaled_dot_product_attention(q, q, q, gpugrad.ones(3, 3, dtype=gpugrad.int64))
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal"):
        F.scaled_dot_product_attention(q, q, q, gpugrad.ones(3, 3, dtype=gpugrad.bool),
                                       is_causal=True)


def test_sdpa_gradcheck(rng):
    q, k, v = (tensor(rng.standard_normal(s), requires_grad=True)
               for s in ((1, 3, 2), (1, 4, 2), (1, 4, 3)))
    keep = tensor(np.array([[1, 1, 0, 1], [0, 0, 0, 0], [1, 0, 1, 1]], bool), dtype=gpugrad.bool)
    bias = tensor(rng.standard_normal((3, 4)))
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, keep), (q, k, v))
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, bias), (q, k, v))
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                                    scale=0.7), (q, k, v))


# -- multi-head attention -----------------------------------------------------------------------
def np_mha(m, q, k, v, kpm=None, mask=None, average=True):
    """Sequence-first (L, N, E) multi-head attention from the module's weights, by hand."""
    p = {n: to_numpy(t) for n, t in m.state_dict().items()}
    E, H = m.embed_dim, m.num_heads
    w_q, w_k, w_v = (np.split(p["in_proj_weight"], 3) if "in_proj_weight" in p
                     else (p["q_proj_weight"], p["k_proj_weight"], p["v_proj_weight"]))
    b_q, b_k, b_v = np.split(p.get("in_proj_bias", np.zeros(3 * E)), 3)
    Q, K, V = q @ w_q.T + b_q, k @ w_k.T + b_k, v @ w_v.T + b_v   # (L, N, E)
    L, N, d = Q.shape[0], Q.shape[1], E // H
    heads = lambda a: a.reshape(a.shape[0], N, H, d).transpose(1, 2, 0, 3)   # (N, H, seq, d)
    s = heads(Q) @ heads(K).transpose(0, 1, 3, 2) / math.sqrt(d)
    if mask is not None:
        s = np.where(mask, -np.inf, s)
    if kpm is not None:
        s = np.where(kpm[:, None, None, :], -np.inf, s)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    out = (w @ heads(V)).transpose(2, 0, 1, 3).reshape(L, N, E)
    out = out @ p["out_proj.weight"].T + p.get("out_proj.bias", 0)
    return out, (w.mean(1) if average else w)


def test_mha_parameters_init_and_state_dict():
    gpugrad.manual_seed(0)
    m = nn.MultiheadAttention(8, 2)
    assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == [
        ("in_proj_weight", (24, 8)), ("in_proj_bias", (24,)), ("out_proj.weight", (8, 8)),
        ("out_proj.bias", (8,))]
    bound = math.sqrt(6 / (24 + 8))   # xavier_uniform_ on (3E, E)
    w = to_numpy(m.in_proj_weight)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert np.all(to_numpy(m.in_proj_bias) == 0) and np.all(to_numpy(m.out_proj.bias) == 0)
    assert isinstance(m.out_proj, nn.Linear) and m.head_dim == 4 and m.q_proj_weight is None
    sep = nn.MultiheadAttention(8, 2, kdim=3, vdim=5, add_bias_kv=True, bias=False)
    assert list(sep.state_dict()) == ["q_proj_weight", "k_proj_weight", "v_proj_weight",
                                      "bias_k", "bias_v", "out_proj.weight"]
    assert sep.k_proj_weight.shape == (8, 3) and sep.v_proj_weight.shape == (8, 5)
    assert sep.bias_k.shape == (1, 1, 8) and sep.in_proj_weight is None
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(8, 3)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        nn.MultiheadAttention(0, 2)


@pytest.mark.parametrize("kdim", [None, 3])
def test_mha_matches_the_numpy_reference(kdim, device, rng):
    m = nn.MultiheadAttention(8, 2, kdim=kdim, vdim=kdim, dtype=f64).to(device)
    with gpugrad.no_grad():
        m.in_proj_bias.copy_(gpugrad.randn(24, dtype=f64, device=device))   # non-zero biases
        m.out_proj.bias.copy_(gpugrad.randn(8, dtype=f64, device=device))
    L, S, N = 3, 4, 2
    q = rng.standard_normal((L, N, 8))
    k, v = rng.standard_normal((S, N, kdim or 8)), rng.standard_normal((S, N, kdim or 8))
    kpm = np.zeros((N, S), bool)
    kpm[1, 0] = True
    mask = np.triu(np.ones((L, S), bool), 2)
    T = lambda a: tensor(a, device, dtype=gpugrad.bool if a.dtype == bool else f64)  # noqa
    for kw, ref in [({}, {}), (dict(key_padding_mask=T(kpm), attn_mask=T(mask)),
                               dict(kpm=kpm, mask=mask))]:
        out, w = m(T(q), T(k), T(v), **kw)
        want, want_w = np_mha(m, q, k, v, **ref)
        np.testing.assert_allclose(to_numpy(out), want, rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(to_numpy(w), want_w, rtol=1e-11, atol=1e-12)
        fast, none = m(T(q), T(k), T(v), need_weights=False, **kw)
        assert none is None
        np.testing.assert_allclose(to_numpy(fast), want, rtol=1e-11, atol=1e-12)
        _, per_head = m(T(q), T(k), T(v), average_attn_weights=False, **kw)
        assert per_head.shape == (N, 2, L, S)
        np.testing.assert_allclose(to_numpy(per_head), np_mha(m, q, k, v, average=False,
                                                              **ref)[1], rtol=1e-11, atol=1e-14)


def test_mha_float_masks_equal_bool_masks_and_3d_masks_are_per_head(rng):
    m = nn.MultiheadAttention(4, 2, dtype=f64)
    x = tensor(rng.standard_normal((3, 2, 4)))
    mask = np.triu(np.ones((3, 3), bool), 1)
    fmask = np.where(mask, -np.inf, 0.0)
    a = m(x, x, x, attn_mask=tensor(mask, dtype=gpugrad.bool))
    b = m(x, x, x, attn_mask=tensor(fmask))
    c = m(x, x, x, attn_mask=tensor(np.broadcast_to(fmask, (4, 3, 3)).copy()))
    d = m(x, x, x, attn_mask=tensor(mask, dtype=gpugrad.bool), is_causal=True,
          need_weights=False)
    for other in (b, c, d):
        np.testing.assert_allclose(to_numpy(other[0]), to_numpy(a[0]), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(b[1]), to_numpy(a[1]), rtol=1e-12)
    assert np.all(np.triu(to_numpy(a[1])[0], 1) == 0)   # causal: nothing above the diagonal


def test_mha_batch_first_and_unbatched_agree_with_sequence_first(rng):
    m = nn.MultiheadAttention(6, 3, dtype=f64)
    q, kv = rng.standard_normal((4, 2, 6)), rng.standard_normal((5, 2, 6))
    out, w = m(tensor(q), tensor(kv), tensor(kv))
    m.batch_first = True
    bout, bw = m(tensor(q.transpose(1, 0, 2)), tensor(kv.transpose(1, 0, 2)),
                 tensor(kv.transpose(1, 0, 2)))
    assert bout.shape == (2, 4, 6) and bw.shape == (2, 4, 5)
    np.testing.assert_allclose(to_numpy(bout).transpose(1, 0, 2), to_numpy(out), rtol=1e-12)
    uout, uw = m(tensor(q[:, 1]), tensor(kv[:, 1]), tensor(kv[:, 1]))   # batch_first ignored
    assert uout.shape == (4, 6) and uw.shape == (4, 5)
    np.testing.assert_allclose(to_numpy(uout), to_numpy(out)[:, 1], rtol=1e-12)
    np.testing.assert_allclose(to_numpy(uw), to_numpy(w)[1], rtol=1e-12)


def test_mha_bias_kv_zero_attn_and_dropout(rng):
    gpugrad.manual_seed(0)
    m = nn.MultiheadAttention(4, 2, dropout=0.5, add_bias_kv=True, add_zero_attn=True,
                              dtype=f64)
    x = tensor(rng.standard_normal((3, 2, 4)))
    kpm = tensor(np.array([[False, False, True], [False] * 3]), dtype=gpugrad.bool)
    m.eval()
    out, w = m(x, x, x, key_padding_mask=kpm)
    assert w.shape == (2, 3, 5)   # 3 keys + bias_k + the zero key
    assert np.all(to_numpy(w)[0, :, 2] == 0) and np.all(to_numpy(w)[:, :, 3] > 0)
    np.testing.assert_allclose(to_numpy(w).sum(-1), 1, rtol=1e-12)
    np.testing.assert_array_equal(to_numpy(m(x, x, x, key_padding_mask=kpm)[0]), to_numpy(out))
    m.train()
    gpugrad.manual_seed(2)
    a = to_numpy(m(x, x, x)[0])
    gpugrad.manual_seed(2)
    np.testing.assert_array_equal(to_numpy(m(x, x, x)[0]), a)
    assert not np.allclose(a, to_numpy(m.eval()(x, x, x)[0]))


def test_mha_errors_match_pytorch():
    m = nn.MultiheadAttention(4, 2)
    q, kv = gpugrad.randn(3, 2, 4), gpugrad.randn(5, 2, 4)
    with pytest.raises(AssertionError, match="expected `key` and `value` to be 3-D but found 2-D"):
        m(q, gpugrad.randn(5, 4), gpugrad.randn(5, 4))
    with pytest.raises(AssertionError, match="query should be unbatched 2D or batched 3D"):
        m(gpugrad.randn(4), gpugrad.randn(4), gpugrad.randn(4))
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is .*\[3, 4\].*, but "
                                           r"should be \(3, 5\)"):
        m(q, kv, kv, attn_mask=gpugrad.zeros(3, 4))
    with pytest.raises(RuntimeError, match=r"3D attn_mask .* should be \(4, 3, 5\)"):
        m(q, kv, kv, attn_mask=gpugrad.zeros(2, 3, 5))
    with pytest.raises(AssertionError, match=r"Expected key_padded_mask.shape\[1\] to be 5, but"):
        m(q, kv, kv, key_padding_mask=gpugrad.zeros(2, 4, dtype=gpugrad.bool))
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(q, kv, kv, is_causal=True)
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 4, but got 5"):
        m(gpugrad.randn(3, 2, 5), gpugrad.randn(5, 2, 5), gpugrad.randn(5, 2, 5))
    with pytest.raises(AssertionError, match="only bool and floating types of attn_mask"):
        m(q, kv, kv, attn_mask=gpugrad.zeros(3, 5, dtype=gpugrad.int64))
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and attn_mask"):
        m(q, kv, kv, key_padding_mask=gpugrad.zeros(2, 5, dtype=gpugrad.bool),
          attn_mask=gpugrad.zeros(3, 5))


def test_mha_gradcheck(rng):
    m = nn.MultiheadAttention(4, 2, dtype=f64, kdim=3, vdim=2)
    q = tensor(rng.standard_normal((2, 1, 4)), requires_grad=True)
    k = tensor(rng.standard_normal((3, 1, 3)), requires_grad=True)
    v = tensor(rng.standard_normal((3, 1, 2)), requires_grad=True)
    kpm = tensor(np.array([[False, True, False]]), dtype=gpugrad.bool)
    assert gradcheck(lambda q, k, v, *ps: m(q, k, v, key_padding_mask=kpm),
                     (q, k, v, *m.parameters()))


# -- oracle: PyTorch with the same weights ------------------------------------------------------
def _torch_twin(torch, ours, theirs):
    theirs = theirs.double()
    theirs.load_state_dict({k: torch.tensor(to_numpy(v)) for k, v in ours.state_dict().items()})
    return theirs


def _assert_grads_match(ours, theirs, pairs):
    for a, b in pairs:
        np.testing.assert_allclose(to_numpy(a.grad), b.grad.numpy(), rtol=1e-9, atol=1e-11)
    for (n, p), (n2, p2) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert n == n2
        np.testing.assert_allclose(to_numpy(p.grad), p2.grad.numpy(), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("mode,kw", [("RNN", {}), ("RNN", dict(nonlinearity="relu")),
                                     ("LSTM", {}), ("LSTM", dict(proj_size=2)), ("GRU", {})])
@pytest.mark.parametrize("batch_first,bidirectional,layers", [(False, False, 1), (True, True, 2)])
def test_sequence_layers_match_pytorch(mode, kw, batch_first, bidirectional, layers, rng):
    torch = pytest.importorskip("torch")
    opts = dict(batch_first=batch_first, bidirectional=bidirectional, **kw)
    ours = getattr(nn, mode)(3, 4, layers, dtype=f64, **opts)
    theirs = _torch_twin(torch, ours, getattr(torch.nn, mode)(3, 4, layers, **opts))
    x = rng.standard_normal((2, 5, 3))
    gx, tx = tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (go, gh), (to, th) = ours(gx), theirs(tx)
    gh, th = (gh, th) if mode == "LSTM" else ((gh,), (th,))
    np.testing.assert_allclose(to_numpy(go), to.detach().numpy(), rtol=1e-10, atol=1e-12)
    for a, b in zip(gh, th):
        np.testing.assert_allclose(to_numpy(a), b.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = rng.standard_normal(tuple(to.shape))
    (go * tensor(w)).sum().add(sum((s * s).sum() for s in gh)).backward()
    ((to * torch.tensor(w)).sum() + sum((s * s).sum() for s in th)).backward()
    _assert_grads_match(ours, theirs, [(gx, tx)])


@pytest.mark.parametrize("kind", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_match_pytorch(kind, rng):
    torch = pytest.importorskip("torch")
    ours = getattr(nn, kind)(3, 4, dtype=f64)
    theirs = _torch_twin(torch, ours, getattr(torch.nn, kind)(3, 4))
    x = rng.standard_normal((2, 3))
    gx, tx = tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    go, to = ours(gx), theirs(tx)
    go, to = (go, to) if kind == "LSTMCell" else ((go,), (to,))
    for a, b in zip(go, to):
        np.testing.assert_allclose(to_numpy(a), b.detach().numpy(), rtol=1e-12)
    sum(s.pow(3).sum() for s in go).backward()
    sum(s.pow(3).sum() for s in to).backward()
    _assert_grads_match(ours, theirs, [(gx, tx)])


@pytest.mark.parametrize("kw,call", [
    ({}, dict(masks=True)), (dict(batch_first=True), {}), (dict(kdim=5, vdim=3), dict(masks=True)),
    (dict(add_bias_kv=True, add_zero_attn=True), dict(masks=True)),
    (dict(bias=False), dict(need_weights=False, masks=True)),
    ({}, dict(average_attn_weights=False))])
def test_mha_matches_pytorch(kw, call, rng):
    torch = pytest.importorskip("torch")
    ours = nn.MultiheadAttention(8, 2, dtype=f64, **kw)
    theirs = _torch_twin(torch, ours, torch.nn.MultiheadAttention(8, 2, **kw))
    bf, L, S, N = kw.get("batch_first", False), 3, 4, 2
    seq = lambda n, e: rng.standard_normal((N, n, e) if bf else (n, N, e))   # noqa: E731
    arrays = [seq(L, 8), seq(S, kw.get("kdim", 8)), seq(S, kw.get("vdim", 8))]
    mine = [tensor(a, requires_grad=True) for a in arrays]
    ref = [torch.tensor(a, requires_grad=True) for a in arrays]
    call = dict(call)
    masks = call.pop("masks", False)
    if masks:
        kpm = np.zeros((N, S), bool)
        kpm[0, -1] = True
        am = np.triu(np.ones((L, S), bool), 2)
        call.update(key_padding_mask=kpm, attn_mask=am)
    mk = lambda mod, v: mod.tensor(v) if isinstance(v, np.ndarray) else v   # noqa: E731
    go, gw = ours(*mine, **{k: (tensor(v, dtype=gpugrad.bool) if isinstance(v, np.ndarray)
                                else v) for k, v in call.items()})
    to, tw = theirs(*ref, **{k: mk(torch, v) for k, v in call.items()})
    np.testing.assert_allclose(to_numpy(go), to.detach().numpy(), rtol=1e-10, atol=1e-12)
    if tw is None:
        assert gw is None
    else:
        np.testing.assert_allclose(to_numpy(gw), tw.detach().numpy(), rtol=1e-10, atol=1e-12)
    go.pow(2).sum().backward()
    to.pow(2).sum().backward()
    _assert_grads_match(ours, theirs, zip(mine, ref))


def test_sdpa_matches_pytorch(rng):
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    keep = rng.random((3, 5)) > 0.4
    keep[1] = False
    fmask = np.where(rng.random((3, 5)) > 0.3, rng.standard_normal((3, 5)), -np.inf)
    for kw in ({}, dict(is_causal=True), dict(scale=0.2), dict(attn_mask=keep),
               dict(attn_mask=fmask), dict(enable_gqa=True)):
        shapes = ((2, 4, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6)) if kw.get("enable_gqa") else (
            (2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6))
        arrays = [rng.standard_normal(s) for s in shapes]
        mine = [tensor(a, requires_grad=True) for a in arrays]
        ref = [torch.tensor(a, requires_grad=True) for a in arrays]
        mkw = {k: (tensor(v, dtype=gpugrad.bool if v.dtype == bool else f64)
                   if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
        tkw = {k: (torch.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
        go = F.scaled_dot_product_attention(*mine, **mkw)
        to = tf.scaled_dot_product_attention(*ref, **tkw)
        np.testing.assert_allclose(to_numpy(go), to.detach().numpy(), rtol=1e-10, atol=1e-12)
        go.pow(2).sum().backward()
        to.pow(2).sum().backward()
        for a, b in zip(mine, ref):
            np.testing.assert_allclose(to_numpy(a.grad), b.grad.numpy(), rtol=1e-9, atol=1e-12)


# -- group norm, channel dropout, PReLU, SELU, CELU ---------------------------------------------
def test_group_norm_matches_numpy(device, rng):
    x = rng.standard_normal((2, 6, 3, 2))
    w, b = rng.standard_normal(6), rng.standard_normal(6)
    g = x.reshape(2, 3, -1)
    want = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5))
    want = want.reshape(x.shape) * w[:, None, None] + b[:, None, None]
    out = F.group_norm(tensor(x, device), 3, tensor(w, device), tensor(b, device))
    np.testing.assert_allclose(to_numpy(out), want, rtol=1e-12, atol=1e-12)
    m = nn.GroupNorm(3, 6, dtype=f64).to(device)
    assert np.all(to_numpy(m.weight) == 1) and np.all(to_numpy(m.bias) == 0)
    with gpugrad.no_grad():
        m.weight.copy_(tensor(w, device))
        m.bias.copy_(tensor(b, device))
    np.testing.assert_allclose(to_numpy(m(tensor(x, device))), want, rtol=1e-12, atol=1e-12)
    assert repr(m) == "GroupNorm(3, 6, eps=1e-05, affine=True, bias=True)"
    assert list(nn.GroupNorm(2, 4, affine=False).state_dict()) == []


def test_group_norm_errors_and_gradcheck(rng):
    with pytest.raises(ValueError, match=r"num_channels \(6\) must be divisible by num_groups"):
        nn.GroupNorm(4, 6)
    with pytest.raises(RuntimeError, match="Expected number of channels in input to be divisible"):
        F.group_norm(gpugrad.randn(2, 6, 3), 4)
    with pytest.raises(RuntimeError, match="Expected at least 2 dimensions for input tensor"):
        F.group_norm(gpugrad.randn(6), 3)
    with pytest.raises(RuntimeError, match=r"weight of shape \[5\] and input of shape \[2, 6\]"):
        F.group_norm(gpugrad.randn(2, 6), 3, gpugrad.ones(5))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        F.group_norm(gpugrad.randn(1, 2), 2)
    x = tensor(rng.standard_normal((2, 4, 3)), requires_grad=True)
    w, b = (tensor(rng.standard_normal(4), requires_grad=True) for _ in range(2))
    assert gradcheck(lambda x, w, b: F.group_norm(x, 2, w, b), (x, w, b))


@pytest.mark.parametrize("fn,shape,channels", [
    (F.dropout2d, (3, 4, 5, 6), (3, 4)), (F.dropout1d, (3, 4, 5), (3, 4)),
    (F.dropout1d, (4, 5), (4,))])
def test_channel_dropout_zeroes_whole_channels(fn, shape, channels, device):
    x = gpugrad.ones(shape, device=device, dtype=f64)
    gpugrad.manual_seed(0)
    y = to_numpy(fn(x, 0.5))
    per_channel = y.reshape(channels + (-1,))
    assert set(np.unique(y)) <= {0.0, 2.0} and 0 < (y == 0).mean() < 1
    assert np.all(per_channel == per_channel[..., :1])   # one decision per channel
    gpugrad.manual_seed(0)
    np.testing.assert_array_equal(to_numpy(fn(x, 0.5)), y)
    assert fn(x, 0.5, training=False) is x and fn(x, 0.0) is x
    assert np.all(to_numpy(fn(x, 1.0)) == 0)


def test_channel_dropout_modules_inplace_warnings_and_errors():
    m = nn.Dropout2d(0.5)
    assert repr(m) == "Dropout2d(p=0.5, inplace=False)" and repr(nn.Dropout1d()) == (
        "Dropout1d(p=0.5, inplace=False)")
    x = gpugrad.ones(2, 8, 3, 3)
    assert m.eval()(x) is x
    y = gpugrad.ones(2, 8, 3, 3)
    gpugrad.manual_seed(0)
    assert nn.Dropout2d(0.5, inplace=True)(y) is y and (to_numpy(y) == 0).any()
    with pytest.warns(UserWarning, match="assuming that channel-wise 1D dropout"):
        F.dropout2d(gpugrad.ones(2, 3, 4))
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d"):
        F.dropout2d(gpugrad.ones(2, 3))
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 1D"):
        F.dropout1d(gpugrad.ones(3))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        nn.Dropout2d(1.5)


def test_prelu_matches_numpy_and_gradcheck(device, rng):
    x = rng.standard_normal((2, 3, 4))
    x[0, 0, 0] = 0.0
    w = np.array([0.1, -0.2, 0.3])
    out = F.prelu(tensor(x, device), tensor(w, device))
    np.testing.assert_array_equal(to_numpy(out), np.where(x > 0, x, w[:, None] * x))
    m = nn.PReLU().to(device)
    assert to_numpy(m.weight).tolist() == [0.25] and repr(nn.PReLU(3)) == "PReLU(num_parameters=3)"
    np.testing.assert_allclose(to_numpy(m(tensor(x, device, dtype=gpugrad.float32))),
                               np.where(x > 0, x, 0.25 * x), rtol=1e-6)
    assert F.prelu(tensor(-2.0), tensor([0.5])).shape == ()
    wt = tensor(w, requires_grad=True)
    assert gradcheck(F.prelu, (tensor(x + 0.01, requires_grad=True), wt))
    z = tensor(np.zeros((1, 3)), requires_grad=True)
    F.prelu(z, wt).sum().backward()
    np.testing.assert_array_equal(to_numpy(z.grad), w[None])   # slope w at 0, as PyTorch
    with pytest.raises(RuntimeError, match="Found parameter numbers = 2 and channel size = 3"):
        F.prelu(gpugrad.randn(2, 3), gpugrad.ones(2))
    with pytest.raises(RuntimeError, match="Expected `weight` to be a scalar or 1D tensor"):
        F.prelu(gpugrad.randn(2, 3), gpugrad.ones(1, 3))


def test_selu_and_celu_match_numpy(device, rng):
    x = np.concatenate([rng.standard_normal(10) * 3, [0.0, 50.0, -50.0]])
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    np.testing.assert_allclose(to_numpy(F.selu(tensor(x, device))),
                               scale * np.where(x > 0, x, alpha * np.expm1(x)), rtol=1e-14)
    for a in (1.0, 0.7, 2.5):
        np.testing.assert_allclose(to_numpy(F.celu(tensor(x, device), a)),
                                   np.where(x > 0, x, a * np.expm1(x / a)), rtol=1e-14)
    t = tensor(x, device)
    assert F.selu(t, inplace=True) is t and nn.SELU(inplace=True)(t) is t
    assert np.isfinite(to_numpy(t)).all()
    xt = tensor(x[:10] / 10, requires_grad=True)   # away from the kink at 0
    assert gradcheck(F.selu, (xt,)) and gradcheck(lambda v: F.celu(v, 0.7), (xt,))
    big = tensor([100.0, -100.0], requires_grad=True)
    F.celu(big, 0.5).sum().backward()
    np.testing.assert_allclose(to_numpy(big.grad), [1.0, 0.0], atol=1e-80)
    assert repr(nn.CELU(0.5, inplace=True)) == "CELU(alpha=0.5, inplace=True)"
    with pytest.raises(RuntimeError, match="alpha cannot be 0 for CELU"):
        F.celu(t, 0.0)


# -- adaptive pooling, Unflatten ----------------------------------------------------------------
def np_adaptive(x, out, axis):
    n = x.shape[axis]
    bins = [np.take(x, range(i * n // out, -(-(i + 1) * n // out)), axis).mean(axis, keepdims=True)
            for i in range(out)]
    return np.concatenate(bins, axis)


def test_adaptive_avg_pools_match_numpy_bins(device, rng):
    x = rng.standard_normal((2, 3, 7, 5))
    T = lambda a: tensor(a, device)   # noqa: E731
    for size in ((3, 2), (7, 5), (1, 1), (4, 9)):
        want = np_adaptive(np_adaptive(x, size[0], 2), size[1], 3)
        np.testing.assert_allclose(to_numpy(F.adaptive_avg_pool2d(T(x), size)), want,
                                   rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(to_numpy(nn.AdaptiveAvgPool2d((None, 2))(T(x[0]))),
                               np_adaptive(x[0], 2, 2), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(F.adaptive_avg_pool2d(T(x), 1))[..., 0, 0],
                               x.mean((2, 3)), rtol=1e-12)
    for size in (3, 7, 2, (4,)):
        n = size[0] if isinstance(size, tuple) else size
        np.testing.assert_allclose(to_numpy(nn.AdaptiveAvgPool1d(size)(T(x[:, :, 0]))),
                                   np_adaptive(x[:, :, 0], n, 2), rtol=1e-12)
    assert F.adaptive_avg_pool1d(T(x[0, :, 0]), 2).shape == (3, 2)   # unbatched (C, L)
    assert repr(nn.AdaptiveAvgPool2d((None, 3))) == "AdaptiveAvgPool2d(output_size=(None, 3))"


def test_adaptive_avg_pool_gradcheck_and_errors(rng):
    x = tensor(rng.standard_normal((1, 2, 5, 3)), requires_grad=True)
    assert gradcheck(lambda v: F.adaptive_avg_pool2d(v, (2, 2)), (x,))
    with pytest.raises(RuntimeError, match=r"adaptive_avg_pool2d\(\): Expected 3D or 4D tensor, "
                                           r"but got \[2, 3\]"):
        F.adaptive_avg_pool2d(gpugrad.randn(2, 3), 2)
    with pytest.raises(RuntimeError, match="adaptive_avg_pool2d: output_size must be 2"):
        F.adaptive_avg_pool2d(gpugrad.randn(1, 2, 5, 5), (2, 2, 2))
    with pytest.raises(RuntimeError, match="Expected 2 to 3 dimensions, but got 1-dimensional"):
        F.adaptive_avg_pool1d(gpugrad.randn(5), 2)
    with pytest.raises(RuntimeError, match="'output_size' should contain one int \\(got 2\\)"):
        F.adaptive_avg_pool1d(gpugrad.randn(1, 2, 5), (2, 2))


def test_unflatten():
    x = gpugrad.arange(120.0).reshape(4, 6, 5)
    for dim, size, want in [(1, (2, 3), (4, 2, 3, 5)), (1, (2, -1), (4, 2, 3, 5)),
                            (-1, (5, 1), (4, 6, 5, 1)), (0, [2, 2], (2, 2, 6, 5))]:
        y = nn.Unflatten(dim, size)(x)
        assert y.shape == want
        np.testing.assert_array_equal(to_numpy(y).ravel(), to_numpy(x).ravel())
    assert repr(nn.Unflatten(1, (2, 3))) == "Unflatten(dim=1, unflattened_size=(2, 3))"
    with pytest.raises(RuntimeError, match=r"Provided sizes \[4, -1\] don't multiply up to the "
                                           r"size of dim 1 \(6\)"):
        nn.Unflatten(1, (4, -1))(x)
    with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints, but found type"):
        nn.Unflatten(1, 2)
    with pytest.raises(TypeError, match="found element of type float at pos 1"):
        nn.Unflatten(1, (2, 1.5))


# -- distances, logsigmoid, softmin, GLU, KL divergence -----------------------------------------
def test_normalize_cosine_similarity_and_pairwise_distance_match_numpy(device, rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((1, 4))
    T = lambda v: tensor(v, device)   # noqa: E731
    np.testing.assert_allclose(to_numpy(F.normalize(T(a))),
                               a / np.linalg.norm(a, axis=1, keepdims=True), rtol=1e-14)
    np.testing.assert_allclose(to_numpy(F.normalize(T(a), p=1, dim=0)),
                               a / np.abs(a).sum(0), rtol=1e-14)
    assert np.all(to_numpy(F.normalize(T(np.zeros((2, 3))))) == 0)
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    np.testing.assert_allclose(to_numpy(F.cosine_similarity(T(a), T(b))), cos, rtol=1e-14)
    np.testing.assert_allclose(to_numpy(nn.CosineSimilarity(dim=0)(T(a.T), T(b.T))), cos,
                               rtol=1e-14)
    assert to_numpy(F.cosine_similarity(T(np.zeros((1, 3))), T(np.ones((1, 3))))).tolist() == [0]
    dist = np.linalg.norm(a - b + 1e-6, axis=-1)
    np.testing.assert_allclose(to_numpy(F.pairwise_distance(T(a), T(b))), dist, rtol=1e-14)
    np.testing.assert_allclose(to_numpy(nn.PairwiseDistance(p=1, keepdim=True)(T(a), T(b[0]))),
                               np.abs(a - b + 1e-6).sum(-1, keepdims=True), rtol=1e-14)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of "
                                           r"tensor b \(2\) at non-singleton dimension 0"):
        F.cosine_similarity(T(a), T(a[:2]))


def test_distances_gradcheck(rng):
    a = tensor(rng.standard_normal((3, 4)), requires_grad=True)
    b = tensor(rng.standard_normal((1, 4)), requires_grad=True)
    assert gradcheck(lambda x: F.normalize(x, dim=1), (a,))
    assert gradcheck(F.cosine_similarity, (a, b))
    assert gradcheck(lambda x, y: F.pairwise_distance(x, y, p=3), (a, b))


def test_logsigmoid_softmin_glu_match_numpy(device, rng):
    x = np.concatenate([rng.standard_normal(6) * 4, [0.0, 40.0, -40.0, -800.0, 800.0]])
    got = to_numpy(nn.LogSigmoid()(tensor(x, device)))
    want = np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))
    np.testing.assert_allclose(got, want, rtol=1e-14)
    assert got[-2] == -800.0 and got[-1] == 0.0   # no overflow at either end
    y = rng.standard_normal((3, 4))
    e = np.exp(-y + y.min(1, keepdims=True))
    np.testing.assert_allclose(to_numpy(nn.Softmin(1)(tensor(y, device))),
                               e / e.sum(1, keepdims=True), rtol=1e-14)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        F.softmin(tensor(y))
    np.testing.assert_allclose(to_numpy(nn.GLU()(tensor(y, device))), y[:, :2] * sig(y[:, 2:]),
                               rtol=1e-14)
    np.testing.assert_allclose(to_numpy(F.glu(tensor(y.T, device), 0)), y.T[:2] * sig(y.T[2:]),
                               rtol=1e-14)
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is "
                                           "size 3"):
        F.glu(gpugrad.randn(2, 3))
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        F.glu(gpugrad.tensor(1.0))
    xt = tensor(x[:8], requires_grad=True)
    assert gradcheck(F.logsigmoid, (xt,))
    yt = tensor(y, requires_grad=True)
    assert gradcheck(lambda v: F.softmin(v, 1), (yt,)) and gradcheck(F.glu, (yt,))


def test_kl_div_reductions_match_numpy(device, rng):
    inp = np.log(rng.dirichlet(np.ones(4), size=3))
    tgt = rng.dirichlet(np.ones(4), size=3)
    tgt[0, 1] = 0.0   # 0 log 0 = 0
    pointwise = np.where(tgt > 0, tgt * np.log(np.where(tgt > 0, tgt, 1)), 0) - tgt * inp
    T = lambda v: tensor(v, device)   # noqa: E731
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        mean = F.kl_div(T(inp), T(tgt))
    np.testing.assert_allclose(to_numpy(mean), pointwise.mean(), rtol=1e-13)
    for red, want in [("none", pointwise), ("sum", pointwise.sum()),
                      ("batchmean", pointwise.sum() / 3)]:
        np.testing.assert_allclose(to_numpy(nn.KLDivLoss(reduction=red)(T(inp), T(tgt))), want,
                                   rtol=1e-13)
    lt = np.log(tgt + 0.1)
    np.testing.assert_allclose(
        to_numpy(F.kl_div(T(inp), T(lt), reduction="sum", log_target=True)),
        (np.exp(lt) * (lt - inp)).sum(), rtol=1e-13)
    np.testing.assert_allclose(to_numpy(F.kl_div(T(inp), T(tgt), size_average=False)),
                               pointwise.sum(), rtol=1e-13)
    with pytest.raises(ValueError, match="bla is not a valid value for reduction"):
        F.kl_div(T(inp), T(tgt), reduction="bla")
    it = tensor(inp, requires_grad=True)
    assert gradcheck(lambda v: F.kl_div(v, tensor(tgt), reduction="batchmean"), (it,))
    assert gradcheck(lambda v: F.kl_div(v, tensor(lt), reduction="sum", log_target=True), (it,))


def test_further_functions_match_pytorch(rng):
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    r = lambda *s: rng.standard_normal(s)   # noqa: E731
    tgt = rng.random((3, 4))
    tgt[0, 0] = 0
    cases = [
        ("group_norm", lambda m, x, w, b: m.group_norm(x, 2, w, b), [r(2, 4, 3), r(4), r(4)]),
        ("prelu", lambda m, x, w: m.prelu(x, w), [r(2, 3, 4), np.array([0.1, 0.2, 0.3])]),
        ("selu", lambda m, x: m.selu(x), [r(3, 4) * 3]),
        ("celu", lambda m, x: m.celu(x), [r(3, 4) * 3]),
        ("adaptive_avg_pool1d", lambda m, x: m.adaptive_avg_pool1d(x, 3), [r(2, 3, 7)]),
        ("adaptive_avg_pool2d", lambda m, x: m.adaptive_avg_pool2d(x, (3, None)), [r(2, 7, 5)]),
        ("normalize", lambda m, x: m.normalize(x, 3.0, 0), [r(3, 4)]),
        ("cosine_similarity", lambda m, a, b: m.cosine_similarity(a, b, 1), [r(3, 4), r(1, 4)]),
        ("pairwise_distance", lambda m, a, b: m.pairwise_distance(a, b), [r(3, 4), r(3, 4)]),
        ("logsigmoid", lambda m, x: m.logsigmoid(x), [r(12) * 10]),
        ("softmin", lambda m, x: m.softmin(x, 0), [r(3, 4)]),
        ("glu", lambda m, x: m.glu(x, 1), [r(3, 4)]),
        ("kl_div", lambda m, x: m.kl_div(x, tgt_of(m), reduction="batchmean"), [r(3, 4)]),
    ]
    tgt_of = lambda m: (torch.tensor(tgt) if m is tf else tensor(tgt))   # noqa: E731
    for name, fn, arrays in cases:
        mine = [tensor(a, requires_grad=True) for a in arrays]
        ref = [torch.tensor(a, requires_grad=True) for a in arrays]
        go, to = fn(F, *mine), fn(tf, *ref)
        np.testing.assert_allclose(to_numpy(go), to.detach().numpy(), rtol=1e-12, atol=1e-14,
                                   err_msg=name)
        w = r(*to.shape)
        (go * tensor(w)).sum().backward()
        (to * torch.tensor(w)).sum().backward()
        for a, b in zip(mine, ref):
            # NOTE: PyTorch's celu backward rounds 1/alpha to float32 (1e-8 relative)
            np.testing.assert_allclose(to_numpy(a.grad), b.grad.numpy(), rtol=1e-12, atol=1e-14,
                                       err_msg=name)


def test_new_names_are_exported():
    for name in ("RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell", "MultiheadAttention",
                 "GroupNorm", "Dropout1d", "Dropout2d", "PReLU", "SELU", "CELU",
                 "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "Unflatten", "CosineSimilarity",
                 "PairwiseDistance", "LogSigmoid", "Softmin", "GLU", "KLDivLoss"):
        assert name in nn.__all__ and issubclass(getattr(nn, name), nn.Module)
    for name in ("scaled_dot_product_attention", "multi_head_attention_forward", "group_norm",
                 "dropout1d", "dropout2d", "prelu", "selu", "celu", "adaptive_avg_pool1d",
                 "adaptive_avg_pool2d", "normalize", "cosine_similarity", "pairwise_distance",
                 "logsigmoid", "softmin", "glu", "kl_div"):
        assert name in F.__all__ and callable(getattr(F, name))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.LSTM(2, 3, 2, dropout=0.1)   # num_layers > 1: no warning
