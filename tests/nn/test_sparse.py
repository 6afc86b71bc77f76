"""Embedding and EmbeddingBag: lookups, padding_idx, max_norm, scale_grad_by_freq, every bag
mode, gradients, errors, reprs and agreement with PyTorch."""
from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradgradcheck
from tests.nn._errors import raises
from tests.nn._parity import _oracle
from tests.nn._tensors import T


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


W6 = np.arange(12.0).reshape(6, 2)   # row r is (2 r, 2 r + 1)


BAGS, OFFSETS = [1, 2, 4, 5, 4, 3, 2, 0], [0, 2, 2, 5]   # bags [1, 2], [], [4, 5, 4], [3, 2, 0]


def test_embedding_bag_values_for_every_mode(device):
    w = T(W6, device, True)
    i, o = gpugrad.tensor(BAGS, device=device), gpugrad.tensor(OFFSETS, device=device)
    y = F.embedding_bag(i, w, o, mode="sum")
    assert y.grad_fn.name() == "EmbeddingBagBackward0"
    assert y.tolist() == [[6, 8], [0, 0], [26, 29], [10, 13]]
    np.testing.assert_allclose(to_numpy(F.embedding_bag(i, w, o)),
                               [[3, 4], [0, 0], [26 / 3, 29 / 3], [10 / 3, 13 / 3]], rtol=1e-14)
    assert F.embedding_bag(i, w, o, mode="max").tolist() == [[4, 5], [0, 0], [10, 11], [6, 7]]
    # padding_idx entries are skipped (and not counted by the mean); -1 means the last row
    np.testing.assert_allclose(to_numpy(F.embedding_bag(i, w, o, padding_idx=-1)),
                               [[3, 4], [0, 0], [8, 9], [10 / 3, 13 / 3]], rtol=1e-14)
    last = gpugrad.tensor(OFFSETS + [8], device=device)
    assert F.embedding_bag(i, w, last, mode="sum", include_last_offset=True).tolist() == \
        [[6, 8], [0, 0], [26, 29], [10, 13]]
    fixed = F.embedding_bag(i.reshape(2, 4), w, mode="max")   # 2-D input: bags of 4
    assert fixed.tolist() == [[10, 11], [8, 9]]
    psw = T(np.arange(8.0), device, True)
    y = F.embedding_bag(i, w, o, mode="sum", per_sample_weights=psw)
    assert y.tolist() == [[4, 5], [0, 0], [78, 87], [54, 72]]
    y.backward(T([[1.0, 0.0], [5.0, 5.0], [0.0, 1.0], [1.0, 1.0]], device))
    # weight row r gets psw[j] gy[bag(j)] from each entry j reading it
    assert w.grad.tolist() == [[7, 7], [0, 0], [7, 6], [5, 5], [0, 6], [0, 3]]
    # psw[j] gets <gy[bag(j)], weight[input[j]]>
    assert psw.grad.tolist() == [2, 4, 9, 11, 9, 13, 9, 1]


def test_embedding_bag_max_gradient_and_double_backward(device):
    w = T(W6, device, True)
    i, o = gpugrad.tensor(BAGS, device=device), gpugrad.tensor(OFFSETS, device=device)
    F.embedding_bag(i, w, o, mode="max").backward(T(np.ones((4, 2)), device))
    assert w.grad.tolist() == [[0, 0], [0, 0], [1, 1], [1, 1], [0, 0], [1, 1]]
    psw = T(np.ones(8), device, True)
    y = F.embedding_bag(i, w, o, mode="sum", per_sample_weights=psw)
    g, = gpugrad.autograd.grad((y ** 2).sum(), psw, create_graph=True)
    assert g.requires_grad
    assert gradgradcheck(lambda w, p: F.embedding_bag(i, w, o, mode="sum",
                                                      per_sample_weights=p), (w, psw))


def test_embedding_bag_module_and_errors(device):
    gpugrad.manual_seed(0)
    bag = nn.EmbeddingBag(10, 3, padding_idx=2).to(device)
    assert repr(bag) == "EmbeddingBag(10, 3, mode='mean', padding_idx=2)"
    assert to_numpy(bag.weight)[2].tolist() == [0, 0, 0] and bag.weight.requires_grad
    y = bag(gpugrad.tensor([1, 2, 3, 4], device=device), gpugrad.tensor([0, 3], device=device))
    assert y.shape == (2, 3)
    assert repr(nn.EmbeddingBag(10, 3, mode="max", norm_type=1.0)) == \
        "EmbeddingBag(10, 3, norm_type=1.0, mode='max')"
    pre = nn.EmbeddingBag.from_pretrained(T(W6, device), mode="sum")
    assert not pre.weight.requires_grad
    assert pre(gpugrad.tensor([[0, 5]], device=device)).tolist() == [[10, 12]]
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        nn.EmbeddingBag(10, 3, padding_idx=10)
    w, i = gpugrad.zeros(6, 2), gpugrad.tensor(BAGS)
    o = gpugrad.tensor(OFFSETS)
    for kind, call, message in (
            (ValueError, lambda: F.embedding_bag(i.reshape(2, 4), w, o), "if input is 2D, then "
             "offsets has to be None, as input is treated is a mini-batch of fixed length "
             "sequences."),
            (ValueError, lambda: F.embedding_bag(i, w), "offsets has to be a 1D Tensor but got "
             "None"),
            (RuntimeError, lambda: F.embedding_bag(i, w, gpugrad.tensor([1, 2])), "offsets[0] has "
             "to be 0, i.e., the first sequence in the mini-batch has to start from position 0. "
             "However, got 1"),
            (ValueError, lambda: F.embedding_bag(i, w, o, mode="foo"), "mode has to be one of "
             "sum, mean or max"),
            (NotImplementedError, lambda: F.embedding_bag(i, w, o, per_sample_weights=w[0, :1]
                                                          .expand(8)),
             "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
             "supported for mode='sum' (got mode='mean')."),
            (ValueError, lambda: F.embedding_bag(i.reshape(2, 2, 2), w), "input has to be 1D or "
             "2D Tensor, but got Tensor of dimension 3"),
            (RuntimeError, lambda: F.embedding_bag(gpugrad.tensor([7]), w, gpugrad.tensor([0])),
             "Index 0 of input takes value 7 which is not in the valid range [0, 6)"),
            (RuntimeError, lambda: F.embedding_bag(i, w, gpugrad.tensor([0, 9])), "offsets[-1] "
             "can not be greater than input's length 8 but got offsets[-1] of 9"),
            (ValueError, lambda: F.embedding_bag(i, w[0], o), "weight has to be a 2D Tensor, but "
             "got Tensor of dimension 1"),
            (RuntimeError, lambda: F.embedding_bag(i, w, o, padding_idx=-7), "padding_idx must "
             "be within the number of embeddings, -6 through 5, but got -7"),
            (RuntimeError, lambda: F.embedding_bag(i.double(), w, o), "Expected tensor for "
             "argument #1 'indices' to have one of the following scalar types: Long, Int")):
        with raises(kind, message):
            call()


@pytest.mark.parametrize("kw", [dict(mode="sum"), dict(mode="mean"), dict(mode="max"),
                                dict(mode="mean", padding_idx=3), dict(mode="max", padding_idx=4),
                                dict(mode="sum", weighted=True),
                                dict(mode="sum", include_last_offset=True)])
def test_embedding_bag_matches_torch(kw, device, rng):
    torch = pytest.importorskip("torch")
    kw = dict(kw)
    weighted = kw.pop("weighted", False)
    index = rng.integers(0, 7, 12)
    offsets = np.array([0, 3, 3, 7] + ([12] if kw.get("include_last_offset") else []))
    arrays = [rng.standard_normal((7, 4))] + ([rng.standard_normal(12)] if weighted else [])

    def ours(w, p=None):
        return F.embedding_bag(gpugrad.tensor(index, device=device), w,
                               gpugrad.tensor(offsets, device=device), per_sample_weights=p,
                               **kw)

    def theirs(w, p=None):
        return torch.nn.functional.embedding_bag(torch.tensor(index), w, torch.tensor(offsets),
                                                 per_sample_weights=p, **kw)
    _oracle(torch, ours, theirs, arrays, device)


def test_embedding_max_norm_renormalises_read_rows_in_place(device):
    w = tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0], [1.0, 0.0]], device, requires_grad=True)
    version = w._version
    y = F.embedding(tensor([[0, 1], [0, 3]], device, gpugrad.int64), w, max_norm=2.0)
    s = 2.0 / (5.0 + 1e-7)
    expect = np.array([[3 * s, 4 * s], [0.3, 0.4], [6.0, 8.0], [1.0, 0.0]])
    np.testing.assert_allclose(to_numpy(w), expect, rtol=1e-15)   # row 2 is not read
    np.testing.assert_allclose(to_numpy(y), expect[[[0, 1], [0, 3]]], rtol=1e-15)
    assert w._version > version
    emb = nn.Embedding(4, 2, max_norm=1.0, norm_type=1.0)
    emb(gpugrad.tensor([1, 2]))
    norms = to_numpy(emb.weight).__abs__().sum(1)
    assert np.all(norms[1:3] <= 1.0 + 1e-6)


def test_embedding_scale_grad_by_freq(device):
    w = tensor(np.arange(8.0).reshape(4, 2), device, requires_grad=True)
    idx = tensor([[0, 2], [2, 2]], device, gpugrad.int64)
    F.embedding(idx, w, scale_grad_by_freq=True).sum().backward()
    np.testing.assert_allclose(to_numpy(w.grad), [[1, 1], [0, 0], [1, 1], [0, 0]])
    w.grad = None
    F.embedding(idx, w, padding_idx=0, scale_grad_by_freq=True).sum().backward()
    np.testing.assert_allclose(to_numpy(w.grad), [[0, 0], [0, 0], [1, 1], [0, 0]])
    # not the derivative (gradcheck cannot hold): the differentiable backward gives the same
    y = F.embedding(idx, w, scale_grad_by_freq=True) ** 2
    g, = gpugrad.autograd.grad(y.sum(), w, create_graph=True)
    assert g.requires_grad
    np.testing.assert_allclose(to_numpy(g), [[0, 2], [0, 0], [8, 10], [0, 0]])


def test_embedding_bag_max_norm(device):
    w = tensor([[3.0, 4.0], [0.3, 0.4]], device, requires_grad=True)
    y = F.embedding_bag(tensor([0, 1], device, gpugrad.int64), w,
                        tensor([0], device, gpugrad.int64), max_norm=1.0, mode="sum")
    s = 1.0 / (5.0 + 1e-7)
    np.testing.assert_allclose(to_numpy(y), [[3 * s + 0.3, 4 * s + 0.4]], rtol=1e-14)


def test_embedding_repr_names_every_option_set():
    assert repr(nn.Embedding(10, 3)) == "Embedding(10, 3)"
    assert repr(nn.Embedding(10, 3, max_norm=2)) == "Embedding(10, 3, max_norm=2)"
    assert repr(nn.Embedding(10, 3, padding_idx=0, max_norm=1.0, norm_type=1.5,
                             scale_grad_by_freq=True)) == (
        "Embedding(10, 3, padding_idx=0, max_norm=1.0, norm_type=1.5, scale_grad_by_freq=True)")
