"""The Transformer family: shapes for every layout, PyTorch's state_dict keys, the causal mask,
masking that provably cuts information flow (exact-zero gradients), a numpy reference of one
layer, gradcheck in float64, a short training run, PyTorch's error messages, and oracle
comparisons with PyTorch on the same weights (skipped without it)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradcheck, gradgradcheck
from gpugrad.nn.modules.transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
    _detect_is_causal_mask,
)

f64 = gpugrad.float64
INF = float("inf")


def _layout(batch_first, n, length, e):
    """The shape of a batched (n, length, e) or unbatched (n is None) sequence."""
    if n is None:
        return (length, e)
    return (n, length, e) if batch_first else (length, n, e)


def _bool(a, device="cpu"):
    return tensor(a, device=device, dtype=gpugrad.bool)


# -- shapes ------------------------------------------------------------------------------------
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("n", [2, None])
def test_every_module_keeps_the_layout_of_its_input(batch_first, n, device, rng):
    kw = dict(dim_feedforward=12, dropout=0.0, batch_first=batch_first, device=device)
    src = tensor(rng.standard_normal(_layout(batch_first, n, 5, 8)), device)
    tgt = tensor(rng.standard_normal(_layout(batch_first, n, 3, 8)), device)
    enc = TransformerEncoderLayer(8, 2, dtype=f64, **kw)
    dec = TransformerDecoderLayer(8, 2, dtype=f64, **kw)
    assert enc(src).shape == src.shape
    assert dec(tgt, src).shape == tgt.shape
    assert TransformerEncoder(enc, 2)(src).shape == src.shape
    assert TransformerDecoder(dec, 2)(tgt, src).shape == tgt.shape
    model = Transformer(8, 2, 1, 2, dtype=f64, **kw)
    out = model(src, tgt, tgt_mask=Transformer.generate_square_subsequent_mask(3, device, f64))
    assert out.shape == tgt.shape and out.device == tgt.device and out.dtype == f64


def test_unbatched_input_is_one_batch_element(rng):
    for batch_first in (False, True):
        model = Transformer(8, 2, 1, 1, 16, 0.0, batch_first=batch_first, dtype=f64)
        src, tgt = rng.standard_normal((5, 8)), rng.standard_normal((3, 8))
        kpm = np.array([False, False, False, True, True])
        one = model(tensor(src), tensor(tgt), src_key_padding_mask=_bool(kpm))
        d = 0 if batch_first else 1
        batched = model(tensor(src).unsqueeze(d), tensor(tgt).unsqueeze(d),
                        src_key_padding_mask=_bool(kpm[None]))
        np.testing.assert_allclose(to_numpy(one), to_numpy(batched.squeeze(d)), rtol=1e-12,
                                   atol=1e-13)


# -- parameters ----------------------------------------------------------------------------------
ENCODER_KEYS = ["self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight",
                "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"]
DECODER_KEYS = ["self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                "self_attn.out_proj.bias", "multihead_attn.in_proj_weight",
                "multihead_attn.in_proj_bias", "multihead_attn.out_proj.weight",
                "multihead_attn.out_proj.bias", "linear1.weight", "linear1.bias",
                "linear2.weight", "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight",
                "norm2.bias", "norm3.weight", "norm3.bias"]


def test_state_dict_keys_are_pytorchs():
    assert list(TransformerEncoderLayer(8, 2, 16).state_dict()) == ENCODER_KEYS
    assert list(TransformerDecoderLayer(8, 2, 16).state_dict()) == DECODER_KEYS
    assert list(TransformerDecoderLayer(8, 2, 16, bias=False).state_dict()) == [
        "self_attn.in_proj_weight", "self_attn.out_proj.weight",
        "multihead_attn.in_proj_weight", "multihead_attn.out_proj.weight", "linear1.weight",
        "linear2.weight", "norm1.weight", "norm2.weight", "norm3.weight"]
    model = Transformer(8, 2, 2, 1, 16)
    assert list(model.state_dict()) == (
        [f"encoder.layers.{i}.{k}" for i in range(2) for k in ENCODER_KEYS]
        + ["encoder.norm.weight", "encoder.norm.bias"]
        + [f"decoder.layers.0.{k}" for k in DECODER_KEYS]
        + ["decoder.norm.weight", "decoder.norm.bias"])
    shapes = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    assert shapes["encoder.layers.1.self_attn.in_proj_weight"] == (24, 8)
    assert shapes["decoder.layers.0.linear1.weight"] == (16, 8)
    assert shapes["decoder.layers.0.linear2.weight"] == (8, 16)
    assert shapes["decoder.norm.bias"] == (8,)
    assert (model.d_model, model.nhead, model.batch_first) == (8, 2, False)
    assert model.encoder.num_layers == 2 and isinstance(model.encoder.layers, nn.ModuleList)


def test_stacks_hold_independent_deep_copies():
    layer = TransformerEncoderLayer(4, 2, 8)
    enc = TransformerEncoder(layer, 3, mask_check=False)
    assert len(enc.layers) == 3 and enc.norm is None and enc.mask_check is False
    assert enc.enable_nested_tensor is True
    ws = [m.linear1.weight for m in enc.layers]
    assert len({id(w) for w in ws} | {id(layer.linear1.weight)}) == 4
    for w in ws:   # the same values as the template
        np.testing.assert_array_equal(to_numpy(w), to_numpy(layer.linear1.weight))
    with gpugrad.no_grad():
        ws[0].fill_(1.0)
    assert not np.any(to_numpy(ws[1]) == 1.0)
    norm = nn.LayerNorm(4)
    dec = TransformerDecoder(TransformerDecoderLayer(4, 2, 8), 2, norm)
    assert dec.norm is norm and dec.num_layers == 2
    assert len(dec.state_dict()) == 2 * len(DECODER_KEYS) + 2


def test_transformer_reinitialises_matrices_with_xavier_uniform():
    model = Transformer(16, 2, 1, 1, 64)
    for name, p in model.named_parameters():
        a = to_numpy(p)
        if p.dim() > 1:
            fan_out, fan_in = p.shape
            bound = math.sqrt(6 / (fan_in + fan_out))
            assert np.abs(a).max() <= bound, name
            assert np.abs(a).max() > 0.8 * bound, name   # drawn from the whole interval
        elif "norm" in name:   # LayerNorm's ones and zeros are kept
            np.testing.assert_array_equal(a, np.ones(16) if name.endswith("weight") else 0.0)
        elif "proj_bias" in name or "out_proj.bias" in name:
            np.testing.assert_array_equal(a, np.zeros_like(a))
    # Linear's own init is U(+-1/sqrt(fan_in)) = U(+-0.25) for linear1; xavier reaches 0.25+
    assert np.abs(to_numpy(model.encoder.layers[0].linear1.weight)).max() > 0.25
    # every copy is redrawn, so the layers no longer share values
    custom = TransformerEncoder(TransformerEncoderLayer(16, 2, 64), 2)
    model = Transformer(16, 2, custom_encoder=custom, num_decoder_layers=1, dim_feedforward=8)
    assert model.encoder is custom
    a, b = (to_numpy(m.linear1.weight) for m in custom.layers)
    assert not np.array_equal(a, b)


def test_activation_strings_callables_and_modules(rng):
    assert TransformerEncoderLayer(4, 2, 8).activation is F.relu
    assert TransformerEncoderLayer(4, 2, 8, activation="gelu").activation is F.gelu
    assert TransformerDecoderLayer(4, 2, 8, activation="gelu").activation is F.gelu
    flags = [TransformerEncoderLayer(4, 2, 8, activation=a).activation_relu_or_gelu
             for a in ("relu", "gelu", nn.ReLU(), nn.GELU(), F.silu)]
    assert flags == [1, 2, 1, 2, 0]
    layer = TransformerEncoderLayer(4, 2, 8, dropout=0.0, activation=nn.Tanh(), dtype=f64)
    assert "activation" in dict(layer.named_children())   # a module is registered
    x = tensor(rng.standard_normal((3, 4)))
    h = layer.norm1(x + layer.self_attn(x, x, x)[0])
    want = layer.norm2(h + layer.linear2(layer.linear1(h).tanh()))
    np.testing.assert_allclose(to_numpy(layer(x)), to_numpy(want), rtol=1e-13)


# -- masks ---------------------------------------------------------------------------------------
def test_generate_square_subsequent_mask_values(device):
    m = Transformer.generate_square_subsequent_mask(3, device=device)
    assert m.dtype == gpugrad.float32 and m.device.type == device
    np.testing.assert_array_equal(to_numpy(m), [[0, -INF, -INF], [0, 0, -INF], [0, 0, 0]])
    m = Transformer.generate_square_subsequent_mask(5, dtype=f64)
    assert m.dtype == f64 and m.shape == (5, 5)
    np.testing.assert_array_equal(to_numpy(m), np.where(np.triu(np.ones((5, 5)), 1), -INF, 0.0))
    assert Transformer.generate_square_subsequent_mask(1).tolist() == [[0.0]]


def _grad_of(out, inputs):
    """d(sum(out * w))/d inputs for a fixed random w (a LayerNorm output sums to a constant)."""
    w = np.random.default_rng(2).standard_normal(tuple(out.shape))
    s = (out * tensor(w, out.device)).sum()
    return to_numpy(gpugrad.autograd.grad(s, inputs, retain_graph=True)[0])


@pytest.mark.parametrize("norm_first", [False, True])
def test_padded_key_does_not_influence_other_positions(norm_first, device, rng):
    layer = TransformerEncoderLayer(8, 2, 16, dropout=0.0, norm_first=norm_first, dtype=f64,
                                    device=device)
    x = tensor(rng.standard_normal((5, 2, 8)), device, requires_grad=True)
    kpm = np.zeros((2, 5), bool)
    kpm[0, 3] = True   # batch element 0 pads position 3
    out = layer(x, src_key_padding_mask=_bool(kpm, device))
    others = out[[0, 1, 2, 4], 0]
    g = _grad_of(others, x)
    np.testing.assert_array_equal(g[3, 0], np.zeros(8))   # exactly zero, not just small
    assert np.abs(g[2, 0]).min() > 0   # an unpadded key does matter
    assert np.abs(g[:, 1]).max() == 0   # batch elements never mix
    # without the mask the same position matters
    free = layer(x)[[0, 1, 2, 4], 0]
    assert np.abs(_grad_of(free, x)[3, 0]).max() > 1e-3


def test_memory_padding_and_causal_mask_cut_the_decoder_graph(device, rng):
    layer = TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True, dtype=f64,
                                    device=device)
    tgt = tensor(rng.standard_normal((2, 4, 8)), device, requires_grad=True)
    mem = tensor(rng.standard_normal((2, 3, 8)), device, requires_grad=True)
    mkpm = np.zeros((2, 3), bool)
    mkpm[1, 0] = True
    causal = Transformer.generate_square_subsequent_mask(4, device, f64)
    out = layer(tgt, mem, tgt_mask=causal, memory_key_padding_mask=_bool(mkpm, device))
    g_mem = _grad_of(out, mem)
    np.testing.assert_array_equal(g_mem[1, 0], np.zeros(8))
    assert np.abs(g_mem[0, 0]).min() > 0 and np.abs(g_mem[1, 1]).min() > 0
    for i in range(4):   # output i never sees tgt positions after i
        g_tgt = _grad_of(out[:, i], tgt)
        np.testing.assert_array_equal(g_tgt[:, i + 1:], np.zeros_like(g_tgt[:, i + 1:]))
        assert np.abs(g_tgt[:, :i + 1]).min() > 0


def test_causal_mask_detection_and_hint_give_the_masked_result(rng):
    causal_bool = _bool(np.triu(np.ones((4, 4), bool), 1))
    assert _detect_is_causal_mask(causal_bool) is True   # True above the diagonal counts
    assert _detect_is_causal_mask(causal_bool, size=3) is False
    assert _detect_is_causal_mask(causal_bool, is_causal=False) is False
    assert _detect_is_causal_mask(None) is False
    assert _detect_is_causal_mask(causal_bool.double()) is False   # 1.0 is not -inf
    assert _detect_is_causal_mask(gpugrad.zeros(4, 4), is_causal=True) is True   # a hint wins
    layer = TransformerEncoderLayer(8, 2, 16, dropout=0.0, dtype=f64)
    enc = TransformerEncoder(layer, 2)
    x = tensor(rng.standard_normal((4, 2, 8)))
    causal = Transformer.generate_square_subsequent_mask(4, dtype=f64)
    bool_causal = _bool(np.triu(np.ones((4, 4), bool), 1))
    want = enc(x, mask=causal, is_causal=False)
    for kw in (dict(mask=causal), dict(mask=causal, is_causal=True), dict(mask=bool_causal)):
        np.testing.assert_allclose(to_numpy(enc(x, **kw)), to_numpy(want), rtol=1e-12)
    assert not np.allclose(to_numpy(enc(x)), to_numpy(want))
    kpm = _bool(np.array([[False] * 4, [False, False, False, True]]))
    np.testing.assert_allclose(
        to_numpy(enc(x, mask=causal, src_key_padding_mask=kpm)),
        to_numpy(enc(x, mask=causal, src_key_padding_mask=kpm, is_causal=False)), rtol=1e-12)


# -- exact values and gradients --------------------------------------------------------------------
def _np_layer_norm(x, w, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def _np_encoder_layer(p, x, heads, norm_first):
    """PyTorch's documented encoder layer on one unbatched (S, E) sequence, in numpy."""
    e = x.shape[-1]
    d = e // heads

    def attn(h):
        q, k, v = np.split(h @ p["self_attn.in_proj_weight"].T + p["self_attn.in_proj_bias"], 3,
                           -1)
        outs = []
        for i in range(heads):
            s = q[:, i * d:(i + 1) * d] @ k[:, i * d:(i + 1) * d].T / math.sqrt(d)
            w = np.exp(s - s.max(-1, keepdims=True))
            outs.append(w / w.sum(-1, keepdims=True) @ v[:, i * d:(i + 1) * d])
        o = np.concatenate(outs, -1)
        return o @ p["self_attn.out_proj.weight"].T + p["self_attn.out_proj.bias"]

    def ff(h):
        h = np.maximum(h @ p["linear1.weight"].T + p["linear1.bias"], 0)
        return h @ p["linear2.weight"].T + p["linear2.bias"]

    n1 = lambda h: _np_layer_norm(h, p["norm1.weight"], p["norm1.bias"])   # noqa: E731
    n2 = lambda h: _np_layer_norm(h, p["norm2.weight"], p["norm2.bias"])   # noqa: E731
    if norm_first:
        x = x + attn(n1(x))
        return x + ff(n2(x))
    x = n1(x + attn(x))
    return n2(x + ff(x))


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_matches_a_numpy_reference(norm_first, device, rng):
    layer = TransformerEncoderLayer(6, 3, 10, dropout=0.0, norm_first=norm_first, dtype=f64,
                                    device=device)
    with gpugrad.no_grad():   # non-trivial norms and biases
        for p in layer.parameters():
            if p.dim() == 1:
                p.copy_(tensor(rng.standard_normal(p.shape), device))
    params = {k: to_numpy(v) for k, v in layer.state_dict().items()}
    x = rng.standard_normal((4, 6))
    np.testing.assert_allclose(to_numpy(layer(tensor(x, device))),
                               _np_encoder_layer(params, x, 3, norm_first), rtol=1e-11,
                               atol=1e-12)


def test_encoder_layer_gradcheck(device, rng):
    layer = TransformerEncoderLayer(4, 2, 6, dropout=0.0, activation="gelu", dtype=f64,
                                    device=device)
    x = tensor(rng.standard_normal((3, 2, 4)), device, requires_grad=True)
    mask = tensor(np.triu(np.full((3, 3), -2.0), 1), device)
    kpm = _bool(np.array([[False, False, True], [False, False, False]]), device)
    with pytest.warns(UserWarning, match="^Support for mismatched src_key_padding_mask and "
                                         "src_mask is deprecated"):
        assert gradcheck(lambda x, *ps: layer(x, src_mask=mask, src_key_padding_mask=kpm),
                         (x, *layer.parameters()))
    layer.norm_first = True
    assert gradgradcheck(lambda x: layer(x, src_mask=mask), (x,))


def test_decoder_layer_gradcheck(device, rng):
    layer = TransformerDecoderLayer(4, 2, 5, dropout=0.0, norm_first=True, batch_first=True,
                                    dtype=f64, device=device)
    tgt = tensor(rng.standard_normal((1, 3, 4)), device, requires_grad=True)
    mem = tensor(rng.standard_normal((1, 2, 4)), device, requires_grad=True)
    causal = Transformer.generate_square_subsequent_mask(3, device, f64)
    assert gradcheck(lambda t, m, *ps: layer(t, m, tgt_mask=causal, tgt_is_causal=True),
                     (tgt, mem, *layer.parameters()))


def test_training_reduces_a_copy_task_loss():
    gpugrad.manual_seed(0)
    rng = np.random.default_rng(0)
    vocab, length, batch = 6, 5, 16   # token 0 is the start symbol
    embed = nn.Embedding(vocab, 16)
    model = Transformer(16, 2, 1, 1, 32, dropout=0.0, batch_first=True)
    head = nn.Linear(16, vocab)
    params = [*embed.parameters(), *model.parameters(), *head.parameters()]
    opt = gpugrad.optim.Adam(params, lr=1e-2)
    seq = gpugrad.tensor(rng.integers(1, vocab, (batch, length)))
    tgt_in = gpugrad.tensor(np.concatenate([np.zeros((batch, 1), np.int64),
                                            to_numpy(seq)[:, :-1]], 1))
    causal = Transformer.generate_square_subsequent_mask(length)
    losses = []
    for _ in range(30):
        opt.zero_grad()
        logits = head(model(embed(seq), embed(tgt_in), tgt_mask=causal))
        loss = F.cross_entropy(logits.reshape(-1, vocab), seq.reshape(-1))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[0] > 1.4   # about log(5) for an untrained model
    assert losses[-1] < 0.5 * losses[0]


# -- errors ----------------------------------------------------------------------------------------
def test_errors_match_pytorch():
    model = Transformer(8, 2, 1, 1, 16)
    with pytest.raises(RuntimeError, match="^the batch number of src and tgt must be equal$"):
        model(gpugrad.zeros(5, 3, 8), gpugrad.zeros(4, 2, 8))
    bf = Transformer(8, 2, 1, 1, 16, batch_first=True)
    with pytest.raises(RuntimeError, match="^the batch number of src and tgt must be equal$"):
        bf(gpugrad.zeros(5, 3, 8), gpugrad.zeros(4, 3, 8))
    with pytest.raises(RuntimeError,
                       match="^the feature number of src and tgt must be equal to d_model$"):
        model(gpugrad.zeros(5, 3, 8), gpugrad.zeros(4, 3, 6))
    with pytest.raises(RuntimeError,
                       match="^the feature number of src and tgt must be equal to d_model$"):
        model(gpugrad.zeros(5, 6), gpugrad.zeros(4, 8))
    with pytest.raises(RuntimeError, match="^activation should be relu/gelu, not tanh$"):
        TransformerEncoderLayer(8, 2, activation="tanh")
    with pytest.raises(RuntimeError, match="^activation should be relu/gelu, not swish$"):
        TransformerDecoderLayer(8, 2, activation="swish")
    with pytest.raises(RuntimeError, match="^Need attn_mask if specifying the is_causal hint"):
        TransformerEncoderLayer(8, 2, 16)(gpugrad.zeros(5, 3, 8), is_causal=True)
    with pytest.raises(AssertionError, match="^embed_dim must be divisible by num_heads$"):
        TransformerEncoderLayer(8, 3)
    with pytest.raises(AssertionError, match="^only bool and floating types of src_key_padding"):
        TransformerEncoder(TransformerEncoderLayer(8, 2, 16), 1)(
            gpugrad.zeros(5, 3, 8), src_key_padding_mask=gpugrad.zeros(3, 5, dtype=gpugrad.int64))


# -- oracle: PyTorch with the same weights ---------------------------------------------------------
def _twin(torch, ours, theirs):
    """``theirs`` in float64 with ``ours``'s parameter arrays."""
    theirs = theirs.double()
    assert list(theirs.state_dict()) == list(ours.state_dict())
    theirs.load_state_dict({k: torch.tensor(to_numpy(v)) for k, v in ours.state_dict().items()})
    return theirs


def _compare(torch, ours, theirs, mine_out, ref_out, pairs):
    np.testing.assert_allclose(to_numpy(mine_out), ref_out.detach().numpy(), rtol=1e-9,
                               atol=1e-11)
    w = np.random.default_rng(1).standard_normal(tuple(ref_out.shape))
    (mine_out * tensor(w, mine_out.device)).sum().backward()
    (ref_out * torch.tensor(w)).sum().backward()
    for a, b in pairs:
        np.testing.assert_allclose(to_numpy(a.grad), b.grad.numpy(), rtol=1e-8, atol=1e-10)
    for (n, p), (n2, p2) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert n == n2
        np.testing.assert_allclose(to_numpy(p.grad), p2.grad.numpy(), rtol=1e-8, atol=1e-10,
                                   err_msg=n)


def _inputs(torch, device, *arrays):
    return ([tensor(a, device, requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("norm_first,activation,batch_first",
                         [(False, "relu", False), (False, "gelu", True), (True, "relu", True),
                          (True, "gelu", False)])
def test_transformer_matches_pytorch(train, norm_first, activation, batch_first, device, rng):
    torch = pytest.importorskip("torch")
    kw = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
              dim_feedforward=12, dropout=0.0, activation=activation, batch_first=batch_first,
              norm_first=norm_first)
    ours = Transformer(**kw, dtype=f64, device=device)
    with warnings.catch_warnings():   # PyTorch's note on its nested-tensor fast path
        warnings.simplefilter("ignore")
        theirs = _twin(torch, ours, torch.nn.Transformer(**kw))
    ours.train(train)
    theirs.train(train)
    S, T, N = 5, 4, 3
    (gs, gt), (ts, tt) = _inputs(torch, device, rng.standard_normal(_layout(batch_first, N, S, 8)),
                                 rng.standard_normal(_layout(batch_first, N, T, 8)))
    kpm = np.zeros((N, S), bool)
    kpm[0, -2:] = kpm[2, -1] = True
    tkpm = np.zeros((N, T), bool)
    tkpm[1, -1] = True
    src_mask = np.where(rng.random((S, S)) > 0.8, -INF, rng.standard_normal((S, S)))
    np.fill_diagonal(src_mask, 0.0)
    mem_mask = np.triu(np.ones((T, S), bool), 3)
    masks = dict(src_mask=src_mask, tgt_mask=np.triu(np.full((T, T), -INF), 1),
                 memory_mask=mem_mask, src_key_padding_mask=kpm, tgt_key_padding_mask=tkpm,
                 memory_key_padding_mask=kpm)
    mine = {k: tensor(v, device, gpugrad.bool if v.dtype == bool else f64)
            for k, v in masks.items()}
    ref = {k: torch.tensor(v) for k, v in masks.items()}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        go = ours(gs, gt, **mine)
    assert {str(w.message).split(" is ")[0] for w in seen} == {   # PyTorch's two warnings
        "Support for mismatched src_key_padding_mask and mask",
        "Support for mismatched key_padding_mask and attn_mask"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        to = theirs(ts, tt, **ref)
    _compare(torch, ours, theirs, go, to, [(gs, ts), (gt, tt)])


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_layers_match_pytorch_unbatched_and_with_bool_masks(norm_first, batch_first, device, rng):
    torch = pytest.importorskip("torch")
    kw = dict(dim_feedforward=10, dropout=0.0, activation="gelu", norm_first=norm_first,
              batch_first=batch_first)
    enc = TransformerEncoderLayer(6, 3, **kw, dtype=f64, device=device)
    t_enc = _twin(torch, enc, torch.nn.TransformerEncoderLayer(6, 3, **kw))
    (gx,), (tx,) = _inputs(torch, device, rng.standard_normal((4, 6)))
    am = np.triu(np.ones((4, 4), bool), 1)
    kpm = np.array([False, True, False, False])
    go = enc(gx, src_mask=_bool(am, device), src_key_padding_mask=_bool(kpm, device))
    to = t_enc(tx, src_mask=torch.tensor(am), src_key_padding_mask=torch.tensor(kpm))
    _compare(torch, enc, t_enc, go, to, [(gx, tx)])

    dec = TransformerDecoderLayer(6, 3, **kw, dtype=f64, device=device)
    t_dec = _twin(torch, dec, torch.nn.TransformerDecoderLayer(6, 3, **kw))
    (gt, gm), (tt, tm) = _inputs(torch, device, rng.standard_normal(_layout(batch_first, 2, 3, 6)),
                                 rng.standard_normal(_layout(batch_first, 2, 4, 6)))
    causal = np.triu(np.ones((3, 3), bool), 1)
    mkpm = np.array([[False, False, True, True], [False] * 4])
    go = dec(gt, gm, tgt_mask=_bool(causal, device), tgt_is_causal=True,
             memory_key_padding_mask=_bool(mkpm, device))
    to = t_dec(tt, tm, tgt_mask=torch.tensor(causal), tgt_is_causal=True,
               memory_key_padding_mask=torch.tensor(mkpm))
    _compare(torch, dec, t_dec, go, to, [(gt, tt), (gm, tm)])


def test_stacks_with_final_norm_and_callable_activation_match_pytorch(device, rng):
    torch = pytest.importorskip("torch")
    kw = dict(dim_feedforward=10, dropout=0.0, bias=False, layer_norm_eps=1e-3)
    enc = TransformerEncoder(TransformerEncoderLayer(
        6, 2, activation=lambda t: t.tanh(), **kw, dtype=f64, device=device), 2,
        nn.LayerNorm(6, bias=False, dtype=f64, device=device))
    with pytest.warns(UserWarning, match="enable_nested_tensor is True"):
        t_enc = _twin(torch, enc, torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(
            6, 2, activation=torch.tanh, **kw), 2, torch.nn.LayerNorm(6, bias=False)))
    with gpugrad.no_grad():   # layers that differ from each other
        for p in enc.parameters():
            p.copy_(p + tensor(0.1 * rng.standard_normal(p.shape), device))
    t_enc = _twin(torch, enc, t_enc)
    (gx,), (tx,) = _inputs(torch, device, rng.standard_normal((5, 2, 6)))
    causal = Transformer.generate_square_subsequent_mask(5, device, f64)
    go = enc(gx, mask=causal)
    to = t_enc(tx, mask=torch.nn.Transformer.generate_square_subsequent_mask(5,
                                                                            dtype=torch.float64))
    _compare(torch, enc, t_enc, go, to, [(gx, tx)])

    dec = TransformerDecoder(TransformerDecoderLayer(6, 2, **kw, dtype=f64, device=device), 2,
                             nn.LayerNorm(6, dtype=f64, device=device))
    t_dec = _twin(torch, dec, torch.nn.TransformerDecoder(
        torch.nn.TransformerDecoderLayer(6, 2, **kw), 2, torch.nn.LayerNorm(6)))
    (gt, gm), (tt, tm) = _inputs(torch, device, rng.standard_normal((3, 2, 6)),
                                 rng.standard_normal((5, 2, 6)))
    mem_mask = rng.standard_normal((3, 5))
    go = dec(gt, gm, memory_mask=tensor(mem_mask, device))
    to = t_dec(tt, tm, memory_mask=torch.tensor(mem_mask))
    _compare(torch, dec, t_dec, go, to, [(gt, tt), (gm, tm)])


def test_eval_fast_path_agrees_on_unpadded_positions(rng):
    torch = pytest.importorskip("torch")
    kw = dict(dim_feedforward=12, dropout=0.1, batch_first=True)
    enc = TransformerEncoder(TransformerEncoderLayer(8, 2, **kw, dtype=f64), 2)
    t_enc = _twin(torch, enc, torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(8, 2, **kw), 2)).eval()
    enc.eval()
    x = rng.standard_normal((2, 5, 8))
    kpm = np.zeros((2, 5), bool)
    kpm[0, 3:] = True
    with torch.no_grad():   # PyTorch runs its fused kernel on a nested tensor here
        to = t_enc(torch.tensor(x), src_key_padding_mask=torch.tensor(kpm)).numpy()
    go = to_numpy(enc(tensor(x), src_key_padding_mask=_bool(kpm)))
    np.testing.assert_allclose(go[~kpm], to[~kpm], rtol=1e-9, atol=1e-11)
    np.testing.assert_array_equal(to[kpm], 0.0)   # PyTorch zero-fills padding; we do not
    assert np.abs(go[kpm]).min() > 0
