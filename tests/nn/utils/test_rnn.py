"""nn.utils.rnn: packed and padded sequences, and recurrent layers run on packed input."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad import nn
from gpugrad.autograd import gradcheck
from gpugrad.nn.utils.rnn import (
    PackedSequence,
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
    unpack_sequence,
    unpad_sequence,
)
from tests.nn._errors import _raises


def test_pad_sequence_takes_the_first_dtype(device):
    out = pad_sequence([gpugrad.ones(2, device=device),
                        gpugrad.ones(3, dtype=gpugrad.float64, device=device)])
    assert out.dtype == gpugrad.float32 and to_numpy(out).T.tolist() == [[1, 1, 0], [1, 1, 1]]
    out = pad_sequence([gpugrad.tensor([1, 2]), gpugrad.tensor([1.5, 2.5, 3.5])],
                       batch_first=True, padding_value=-1)
    assert out.dtype == gpugrad.int64 and to_numpy(out).tolist() == [[1, 2, -1], [1, 2, 3]]


def test_pad_sequence_broadcasts_trailing_dims_into_the_first():
    a = gpugrad.ones(2, 3, requires_grad=True)
    b = gpugrad.tensor([[1.0], [2.0], [3.0]], requires_grad=True)
    out = pad_sequence([a, b], batch_first=True)
    assert tuple(out.shape) == (2, 3, 3)
    assert to_numpy(out[1]).tolist() == [[1, 1, 1], [2, 2, 2], [3, 3, 3]]
    out.sum().backward()
    assert to_numpy(b.grad).tolist() == [[3.0], [3.0], [3.0]]


@pytest.mark.parametrize("shapes,msg", [
    (((2, 3), (3, 4)), "The size of tensor a (3) must match the size of tensor b (4) at "
                       "non-singleton dimension 1"),
    (((2,), (3, 2)), "The size of tensor a (3) must match the size of tensor b (2) at "
                     "non-singleton dimension 1"),
    (((2, 1), (3, 4)), "output with shape [3, 1] doesn't match the broadcast shape [3, 4]"),
    (((2, 3), (3, 1, 3)), "output with shape [3, 3] doesn't match the broadcast shape "
                          "[3, 3, 3]"),
])
def test_pad_sequence_trailing_mismatch_errors(shapes, msg):
    with _raises(RuntimeError, msg):
        pad_sequence([gpugrad.ones(*s) for s in shapes])


def _ints(t):
    return None if t is None else to_numpy(t).tolist()


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
