"""Recurrent layers: RNN/LSTM/GRU cells and sequence layers against the numpy recurrences and
PyTorch, shapes for every option, parameters, dropout, errors and gradcheck."""
from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradcheck, gradgradcheck
from tests.nn._parity import _assert_grads_match, _torch_twin
from tests.nn._reference import sig

f64 = gpugrad.float64


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


# -- one fused cell op per time step -------------------------------------------------------------
def _node_names(outputs):
    seen, stack, names = set(), [o.grad_fn for o in outputs], []
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        names.append(n.name())
        stack.extend(fn for fn, _ in n.next_functions)
    return names


@pytest.mark.parametrize("mode,node", [("LSTM", "LstmCellBackward0"),
                                       ("GRU", "GruCellBackward0"),
                                       ("RNN", "RnnTanhCellBackward0")])
def test_each_time_step_is_one_cell_node(mode, node, rng):
    m = getattr(nn, mode)(3, 4, 2, bidirectional=True)
    out, _ = m(gpugrad.tensor(rng.standard_normal((8, 2, 3)).astype(np.float32)))
    names = _node_names([out])
    assert names.count(node) == 8 * 2 * 2            # steps x layers x directions
    assert "SigmoidBackward0" not in names and "TanhBackward0" not in names
    assert names.count("AddmmBackward0") == 2 * 2    # the input projection: one per sequence


@pytest.mark.parametrize("kind,node", [("LSTMCell", "LstmCellBackward0"),
                                       ("GRUCell", "GruCellBackward0"),
                                       ("RNNCell", "RnnTanhCellBackward0")])
def test_cell_modules_use_the_cell_op(kind, node, rng):
    out = getattr(nn, kind)(3, 4)(gpugrad.tensor(rng.standard_normal((2, 3)).astype(np.float32)))
    assert (out[0] if kind == "LSTMCell" else out).grad_fn.name() == node


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("bias", [True, False])
def test_sequence_layers_second_derivatives(mode, bias, rng):
    # create_graph: the backward recomputes the gates with differentiable ops
    m = getattr(nn, mode)(2, 2, 2, bias=bias, dtype=f64)
    x = tensor(rng.standard_normal((3, 2, 2)), requires_grad=True)
    states = [tensor(s, requires_grad=True) for s in _states(mode, m, 2, rng)]

    def fn(x, *args):
        out, h = m(x, tuple(args[:2]) if mode == "LSTM" else args[0])
        return (out,) + (h if isinstance(h, tuple) else (h,))
    assert gradgradcheck(fn, (x, *states, *m.parameters()))


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
def test_gradient_penalty_matches_pytorch(mode, rng):
    """A gradient of a gradient through the layer (the create_graph path) is PyTorch's."""
    torch = pytest.importorskip("torch")
    ours = getattr(nn, mode)(3, 4, 2, dtype=f64)
    theirs = _torch_twin(torch, ours, getattr(torch.nn, mode)(3, 4, 2))
    x = rng.standard_normal((5, 2, 3))
    grads = []
    for lib, m in ((gpugrad, ours), (torch, theirs)):
        xt = lib.tensor(x, requires_grad=True)
        g, = lib.autograd.grad(m(xt)[0].pow(2).sum(), xt, create_graph=True)
        g.pow(2).sum().backward()
        grads.append([to_numpy(xt.grad) if lib is gpugrad else xt.grad.numpy()]
                     + [to_numpy(p.grad) if lib is gpugrad else p.grad.numpy()
                        for p in m.parameters()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
@pytest.mark.parametrize("bias", [True, False])
def test_sequence_layers_with_initial_states_match_pytorch_in_float32(mode, bias, rng):
    torch = pytest.importorskip("torch")
    ours = getattr(nn, mode)(3, 5, 2, bias=bias, batch_first=True)
    theirs = getattr(torch.nn, mode)(3, 5, 2, bias=bias, batch_first=True)
    theirs.load_state_dict({k: torch.tensor(to_numpy(v)) for k, v in ours.state_dict().items()})
    x = rng.standard_normal((4, 6, 3)).astype(np.float32)
    states = [s.astype(np.float32) for s in _states(mode, ours, 4, rng)]
    got, want = [], []
    for lib, m, out in ((gpugrad, ours, got), (torch, theirs, want)):
        ts = [lib.tensor(a, requires_grad=True) for a in (x, *states)]
        y, h = m(ts[0], tuple(ts[1:]) if mode == "LSTM" else ts[1])
        h = h if mode == "LSTM" else (h,)
        (y.pow(2).sum() + sum(s.sin().sum() for s in h)).backward()
        out += [v.detach().numpy() if lib is torch else to_numpy(v) for v in (y, *h)]
        out += [t.grad.numpy() if lib is torch else to_numpy(t.grad)
                for t in (*ts, *m.parameters())]
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_packed_sequences_gradcheck(mode, rng):
    from gpugrad.nn.utils.rnn import pack_padded_sequence
    m = getattr(nn, mode)(2, 2, 1, bidirectional=True, dtype=f64)
    x = tensor(rng.standard_normal((4, 3, 2)), requires_grad=True)

    def fn(x, *params):
        out, h = m(pack_padded_sequence(x, [4, 2, 1]))
        return (out.data,) + (h if isinstance(h, tuple) else (h,))
    assert gradcheck(fn, (x, *m.parameters()))


def test_cells_without_a_cell_state_gradient(rng):
    # only h' is used: the fused backward reads no gradient for c'
    cell = nn.LSTMCell(3, 4, dtype=f64)
    x = tensor(rng.standard_normal((2, 3)), requires_grad=True)
    assert gradcheck(lambda x, *ps: cell(x)[0], (x, *cell.parameters()))
    assert gradcheck(lambda x, *ps: cell(x)[1], (x, *cell.parameters()))


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
def test_weight_gradients_summed_over_the_sequence_match_pytorch(mode, rng):
    """The steps of a sequence hand their weight gradients to its first step: right when only
    part of the output is used, when the layer runs twice in one loss, for autograd.grad and
    for a second backward over a retained graph."""
    torch = pytest.importorskip("torch")
    ours = getattr(nn, mode)(3, 4, 1, dtype=f64)
    theirs = _torch_twin(torch, ours, getattr(torch.nn, mode)(3, 4, 1))
    x1, x2 = rng.standard_normal((6, 2, 3)), rng.standard_normal((4, 2, 3))

    def loss(lib, m):
        a, b = m(lib.tensor(x1))[0], m(lib.tensor(x2))[0]
        return a[:3].pow(2).sum() + b.sin().sum()
    params = list(ours.parameters())
    got = gpugrad.autograd.grad(loss(gpugrad, ours), params)
    want = torch.autograd.grad(loss(torch, theirs), list(theirs.parameters()))
    for g, w in zip(got, want):
        np.testing.assert_allclose(to_numpy(g), w.numpy(), rtol=1e-10, atol=1e-12)
    out = loss(gpugrad, ours)
    out.backward(retain_graph=True)
    out.backward()
    for p, w in zip(params, want):
        np.testing.assert_allclose(to_numpy(p.grad), 2 * w.numpy(), rtol=1e-10, atol=1e-12)
    m_out, w_hh = ours(gpugrad.tensor(x1))[0], ours.weight_hh_l0
    w_hh.grad = None
    m_out[4:].sum().backward(inputs=[w_hh])
    t_out = theirs(torch.tensor(x1))[0]
    t_out[4:].sum().backward(inputs=[theirs.weight_hh_l0])
    np.testing.assert_allclose(to_numpy(w_hh.grad), theirs.weight_hh_l0.grad.numpy(),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
def test_forward_mode_derivative_through_the_cells(mode, rng):
    import gpugrad.autograd.forward_ad as fwAD
    m = getattr(nn, mode)(3, 4, 2, dtype=f64)
    x, v = tensor(rng.standard_normal((5, 2, 3))), tensor(rng.standard_normal((5, 2, 3)))
    with fwAD.dual_level():
        jvp = fwAD.unpack_dual(m(fwAD.make_dual(x, v))[0]).tangent
    with gpugrad.no_grad():
        fd = (m(x + 1e-6 * v)[0] - m(x - 1e-6 * v)[0]) / 2e-6
    np.testing.assert_allclose(to_numpy(jvp), to_numpy(fd), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("call", [
    lambda T: T.lstm_cell(T.ones(3), (T.zeros(4), T.zeros(4)), T.ones(16, 3), T.ones(16, 4)),
    lambda T: T.gru_cell(T.ones(2, 3), T.zeros(2, 5), T.ones(12, 3), T.ones(12, 4)),
    lambda T: T.gru_cell(T.ones(2, 2), T.zeros(2, 4), T.ones(12, 3), T.ones(12, 4)),
    lambda T: T.rnn_tanh_cell(T.ones(2, 3), T.zeros(3, 4), T.ones(4, 3), T.ones(4, 4)),
    lambda T: T.lstm_cell(T.ones(2, 3), (T.zeros(2, 4), T.zeros(3, 4)), T.ones(16, 3),
                          T.ones(16, 4))])
def test_cell_functions_errors_match_pytorch(call):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value), match=f"^{re.escape(str(theirs.value))}$"):
        call(gpugrad)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpointed_layer_gives_the_same_gradients(use_reentrant, rng):
    # the recomputed forward runs its backward inside the outer one (a nested engine task)
    from gpugrad.utils.checkpoint import checkpoint
    m = nn.LSTM(3, 4, 2, dtype=f64)
    x = tensor(rng.standard_normal((5, 2, 3)), requires_grad=True)
    grads = []
    for run in (lambda: checkpoint(lambda x: m(x)[0], x, use_reentrant=use_reentrant),
                lambda: m(x)[0]):
        m.zero_grad()
        x.grad = None
        run().pow(2).sum().backward()
        grads.append([to_numpy(t.grad) for t in (x, *m.parameters())])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
