"""Attention: F.scaled_dot_product_attention and nn.MultiheadAttention against numpy formulas
and PyTorch (masks, grouped-query heads, dropout, bias_kv, zero_attn, errors, gradcheck)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradcheck
from tests.nn._parity import _assert_grads_match, _torch_twin

f64 = gpugrad.float64


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
