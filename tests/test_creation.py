"""More of PyTorch's top-level functions and Tensor methods (continued): creation (asarray,
range, frombuffer ...) and the signal windows, runtime switches (compile, vmap, anomaly ...),
the answers real tensors give (conj, real, is_sparse, mH ...), resize_ and new(); PyTorch as an
oracle over the functions of both files."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad.autograd import gradcheck, gradgradcheck

NAN, INF = float("nan"), float("inf")


def _check_grads(fn, *inputs):
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-6)
    assert gradgradcheck(fn, inputs, eps=1e-6, atol=1e-5)


def _leaf(rng, shape, device, lo=-2.0, hi=2.0):
    return tensor(rng.uniform(lo, hi, shape), device, requires_grad=True)


# -- creation and windows -------------------------------------------------------------------------
def test_scalar_tensor_range_empty_strided(device):
    s = gpugrad.scalar_tensor(3, device=device)
    assert s.shape == () and s.dtype == gpugrad.float32 and s.item() == 3.0
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        r = gpugrad.range(1, 2, 0.25, device=device)
    assert r.tolist() == [1.0, 1.25, 1.5, 1.75, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="^upper bound and lower bound inconsistent with "
                                               "step sign$"):
            gpugrad.range(4, 1)
    e = gpugrad.empty_strided((2, 3), (1, 2), device=device)
    assert e.shape == (2, 3) and e.stride() == (1, 2)


def test_asarray_shares_memory_and_copies():
    t = gpugrad.zeros(2)
    assert gpugrad.asarray(t) is t
    c = gpugrad.asarray(t, copy=True)
    c.add_(1)
    assert t.tolist() == [0.0, 0.0]
    n = np.zeros(3)
    a = gpugrad.asarray(n)
    a.add_(1)
    assert n.tolist() == [1.0, 1.0, 1.0] and a.dtype == gpugrad.float64
    assert gpugrad.asarray([1.0, 2.0]).dtype == gpugrad.float32
    assert gpugrad.asarray(n, dtype=gpugrad.float32).dtype == gpugrad.float32
    with pytest.raises(ValueError, match="^can't alias tensor with dtype 'Float' into dtype "
                                         "'Double'.$"):
        gpugrad.asarray(t, dtype=gpugrad.float64, copy=False)
    with pytest.raises(ValueError, match="^can't alias arbitrary sequence into a tensor.$"):
        gpugrad.asarray([1, 2], copy=False)
    g = gpugrad.asarray(gpugrad.ones(2), requires_grad=True)
    assert g.requires_grad and g.is_leaf


def test_frombuffer():
    buf = bytearray(b"\x01\x00\x02\x00")
    t = gpugrad.frombuffer(buf, dtype=gpugrad.int16)
    assert t.tolist() == [1, 2]
    buf[0] = 7
    assert t.tolist() == [7, 2]      # shares the buffer's memory
    assert gpugrad.frombuffer(buf, dtype=gpugrad.int8, count=2, offset=1).tolist() == [0, 2]
    with pytest.raises(ValueError, match=r"^buffer length \(3 bytes\) after offset \(0 bytes\) "
                                         r"must be a multiple of element size \(2\)$"):
        gpugrad.frombuffer(b"abc", dtype=gpugrad.int16)
    with pytest.raises(ValueError, match=r"requested buffer length \(5 \* 1 bytes\)"):
        gpugrad.frombuffer(b"abcd", dtype=gpugrad.int8, count=5)


@pytest.mark.parametrize("name, ref", [("hann_window", np.hanning),
                                       ("hamming_window", np.hamming),
                                       ("blackman_window", np.blackman),
                                       ("bartlett_window", np.bartlett),
                                       ("kaiser_window", lambda m: np.kaiser(m, 12.0))])
def test_windows_match_numpy(name, ref, device):
    fn = getattr(gpugrad, name)
    sym = fn(7, periodic=False, dtype=gpugrad.float64, device=device)
    np.testing.assert_allclose(to_numpy(sym), ref(7), atol=1e-12)
    per = fn(6, dtype=gpugrad.float64, device=device)       # periodic: the first 6 of 7 points
    np.testing.assert_allclose(to_numpy(per), ref(7)[:6], atol=1e-12)
    assert fn(1).tolist() == [1.0] and fn(0).shape == (0,)
    assert fn(4).dtype == gpugrad.float32
    with pytest.raises(RuntimeError, match=f"^{name} requires non-negative window_length, got "
                                           f"window_length=-1$"):
        fn(-1)
    with pytest.raises(RuntimeError, match=f"^{name} expects floating point dtypes"):
        fn(3, dtype=gpugrad.int64)


# -- runtime switches -----------------------------------------------------------------------------
def test_compile_returns_what_it_is_given():
    def f(x):
        return x * 2
    assert gpugrad.compile(f) is f
    assert gpugrad.compile(f, mode="max-autotune", fullgraph=True) is f

    @gpugrad.compile
    def g(x):
        return x + 1

    @gpugrad.compile(dynamic=True, backend="eager")
    def h(x):
        return x - 1
    assert g(1) == 2 and h(1) == 0
    m = gpugrad.nn.Linear(2, 2)
    assert gpugrad.compile(m) is m


def test_vmap_alias():
    out = gpugrad.vmap(lambda r: r.sum())(gpugrad.ones(3, 2))
    assert out.tolist() == [2.0, 2.0, 2.0]


def test_matmul_precision_anomaly_warn_always():
    assert gpugrad.get_float32_matmul_precision() == "highest"
    try:
        gpugrad.set_float32_matmul_precision("high")
        assert gpugrad.get_float32_matmul_precision() == "high"
        with pytest.warns(UserWarning, match="x is not one of 'highest', 'high', or 'medium'"):
            gpugrad.set_float32_matmul_precision("x")
        assert gpugrad.get_float32_matmul_precision() == "high"
    finally:
        gpugrad.set_float32_matmul_precision("highest")
    assert not gpugrad.is_anomaly_enabled()
    gpugrad.set_anomaly_enabled(True, check_nan=False)
    assert gpugrad.is_anomaly_enabled() and not gpugrad.is_anomaly_check_nan_enabled()
    gpugrad.set_anomaly_enabled(False)
    assert not gpugrad.is_anomaly_enabled()
    try:
        gpugrad.set_warn_always(True)
        assert gpugrad.is_warn_always_enabled()
    finally:
        gpugrad.set_warn_always(False)
    assert not gpugrad.is_warn_always_enabled()


def test_typename_is_storage_is_inference():
    assert gpugrad.typename(gpugrad.zeros(1)) == "gpugrad.FloatTensor"
    assert gpugrad.typename(gpugrad.zeros(1, dtype=gpugrad.int64)) == "gpugrad.LongTensor"
    assert gpugrad.typename(1) == "int"
    assert gpugrad.typename(gpugrad.nn.Linear(1, 1)).endswith(".Linear")
    assert gpugrad.typename(np.ndarray) == "numpy.ndarray"
    assert not gpugrad.is_storage(gpugrad.zeros(1))
    with gpugrad.inference_mode():
        t = gpugrad.zeros(1)
    assert gpugrad.is_inference(t) and not gpugrad.is_inference(gpugrad.zeros(1))


def test_set_default_tensor_type():
    with pytest.warns(UserWarning, match=r"set_default_tensor_type\(\) is deprecated"):
        gpugrad.set_default_tensor_type("torch.DoubleTensor")
    assert gpugrad.get_default_dtype() == gpugrad.float64
    assert gpugrad.tensor([1.0]).dtype == gpugrad.float64
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gpugrad.set_default_tensor_type("torch.FloatTensor")
        assert gpugrad.get_default_dtype() == gpugrad.float32
        with pytest.raises(TypeError, match="only floating-point types are supported as the "
                                            "default type"):
            gpugrad.set_default_tensor_type("torch.IntTensor")


# -- methods of real tensors ----------------------------------------------------------------------
def test_new_ndimension_resize(device):
    x = tensor([[1.0, 2.0], [3.0, 4.0]], device)
    assert x.new().shape == (0,) and x.new().dtype == gpugrad.float64
    n = x.new(2, 3)
    assert n.shape == (2, 3) and n.device == x.device
    assert x.new(gpugrad.Size([4])).shape == (4,)
    assert x.new([1, 2]).tolist() == [1.0, 2.0] and x.new([1, 2]).dtype == gpugrad.float64
    assert x.ndimension() == 2
    y = x.clone()
    assert y.resize_(4) is y and y.tolist() == [1.0, 2.0, 3.0, 4.0]
    y.resize_(3)
    assert y.tolist() == [1.0, 2.0, 3.0]
    y.resize_(2, 3)
    assert y.shape == (2, 3) and to_numpy(y).reshape(-1)[:3].tolist() == [1.0, 2.0, 3.0]
    y.resize_as_(x)
    assert y.shape == (2, 2)
    gpugrad.resize_as_(y, tensor([0.0], device))
    assert y.tolist() == [1.0]
    with pytest.raises(RuntimeError, match="^cannot resize variables that require grad$"):
        tensor([1.0], device, requires_grad=True).resize_(2)


def test_in_place_shape_methods(device):
    x = tensor(np.arange(6.0).reshape(2, 3), device)
    assert x.swapaxes_(0, 1) is x and x.shape == (3, 2)
    x.swapdims_(0, 1)
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    m = tensor(np.ones((3, 3)), device)
    m.tril_(-1)
    np.testing.assert_array_equal(to_numpy(m), np.tril(np.ones((3, 3)), -1))
    m.fill_(1).triu_(1)
    np.testing.assert_array_equal(to_numpy(m), np.triu(np.ones((3, 3)), 1))
    assert x.broadcast_to((2, 2, 3)).shape == (2, 2, 3)


def test_complex_queries_on_real_tensors(device):
    x = tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device)
    for name in ("conj", "resolve_conj", "resolve_neg", "to_dense", "conj_physical"):
        assert getattr(x, name)() is x, name
    assert gpugrad.conj(x) is x and gpugrad.real(x) is x and x.real is x
    assert not (x.is_conj() or x.is_neg() or gpugrad.is_conj(x) or gpugrad.is_neg(x))
    assert not (x.is_sparse or x.is_quantized or x.is_meta or x.is_nested)
    with pytest.raises(RuntimeError, match="^imag is not implemented for tensors with "
                                           "non-complex dtypes.$"):
        x.imag
    assert x.mH.tolist() == x.T.tolist() and x.H.tolist() == x.T.tolist()
    assert gpugrad.zeros(2, 3, 4).mH.shape == (2, 4, 3)
    with pytest.raises(RuntimeError, match=r"^tensor.H is only supported on matrices \(2-D "
                                           r"tensors\). Got 3-D tensor. For batches"):
        gpugrad.zeros(2, 3, 4).H
    with pytest.raises(RuntimeError, match="mH is only supported on matrices or batches of "
                                           "matrices. Got 1-D tensor."):
        gpugrad.zeros(2).mH


def test_mh_is_differentiable(device, rng):
    x = _leaf(rng, (2, 3), device)
    _check_grads(lambda a: a.mH * 1.0, x)


# -- PyTorch as an oracle -----------------------------------------------------------------------
ORACLE = [
    ("acosh", lambda m, x, y: m.acosh(x.abs() + 1)),
    ("asinh", lambda m, x, y: m.asinh(x)),
    ("atanh", lambda m, x, y: m.atanh(x.clamp(-0.9, 0.9))),
    ("exp2", lambda m, x, y: m.exp2(x)),
    ("logaddexp2", lambda m, x, y: m.logaddexp2(x, y)),
    ("deg2rad", lambda m, x, y: m.deg2rad(x)),
    ("rad2deg", lambda m, x, y: m.rad2deg(x)),
    ("copysign", lambda m, x, y: m.copysign(x, y)),
    ("ldexp", lambda m, x, y: m.ldexp(x.reshape(4, 3), m.tensor([1, -2, 3], dtype=m.int64))),
    ("frexp", lambda m, x, y: tuple(m.frexp(x))),
    ("heaviside", lambda m, x, y: m.heaviside(x.round(), y)),
    ("signbit", lambda m, x, y: m.signbit(x)),
    ("gcd", lambda m, x, y: m.gcd((x * 10).to(m.int64), (y * 10).to(m.int64))),
    ("lcm", lambda m, x, y: m.lcm((x * 10).to(m.int64), (y * 10).to(m.int64))),
    ("nextafter", lambda m, x, y: m.nextafter(x, y)),
    ("isin", lambda m, x, y: m.isin(x.round(), y.round())),
    ("greater_equal", lambda m, x, y: m.greater_equal(x, y)),
    ("logical_xor", lambda m, x, y: m.logical_xor((x * 2).to(m.int64), (y * 2).to(m.int64))),
    ("tril_indices", lambda m, x, y: m.tril_indices(4, 5, -1)),
    ("triu_indices", lambda m, x, y: m.triu_indices(5, 3, 1)),
    ("unravel_index", lambda m, x, y: m.unravel_index(m.tensor([0, 5, 11, -2]), (3, 4))),
    ("argwhere", lambda m, x, y: m.argwhere(x > 0)),
    ("hsplit", lambda m, x, y: m.hsplit(x.reshape(2, 3, 2), [1])),
    ("diagflat", lambda m, x, y: m.diagflat(x.reshape(2, 6), -1)),
    ("inner", lambda m, x, y: m.inner(x.reshape(4, 3), y.reshape(2, 2, 3))),
    ("dist", lambda m, x, y: m.dist(x, y, 1.5)),
    ("msort", lambda m, x, y: m.msort(x.reshape(3, 4))),
    ("select_scatter", lambda m, x, y: m.select_scatter(x.reshape(3, 4), y[:3], 1, 1)),
    ("slice_scatter", lambda m, x, y: m.slice_scatter(x.reshape(3, 4), y.reshape(3, 4)[:, :2],
                                                       1, 1, None, 2)),
    ("diagonal_scatter", lambda m, x, y: m.diagonal_scatter(x.reshape(3, 4), y[:3], 1)),
    ("as_strided", lambda m, x, y: m.as_strided(x, (3, 3), (3, 1), 2)),
    ("masked_scatter", lambda m, x, y: m.masked_scatter(x, x > 0, y)),
    ("index_reduce", lambda m, x, y: m.index_reduce(x.reshape(3, 4), 1, m.tensor([0, 3, 0]),
                                                     y[:9].reshape(3, 3), "amin",
                                                     include_self=False)),
    ("addbmm", lambda m, x, y: m.addbmm(x[:4].reshape(2, 2), x.reshape(3, 2, 2),
                                        y.reshape(3, 2, 2), beta=0.5)),
    ("addr", lambda m, x, y: m.addr(x.reshape(3, 4), y[:3], y[4:8], alpha=2)),
    ("vander", lambda m, x, y: m.vander(x[:4], 3)),
    ("trapezoid", lambda m, x, y: m.trapezoid(x.reshape(3, 4), y[:3].sort().values, dim=0)),
    ("cumulative_trapezoid", lambda m, x, y: m.cumulative_trapezoid(x.reshape(3, 4), dx=0.5)),
    ("histogram", lambda m, x, y: tuple(m.histogram(x, 5, range=(-1.0, 1.0)))),
    ("scalar_tensor", lambda m, x, y: m.scalar_tensor(2.5)),
    ("hann_window", lambda m, x, y: m.hann_window(8, dtype=m.float64)),
    ("kaiser_window", lambda m, x, y: m.kaiser_window(8, True, 5.0, dtype=m.float64)),
    ("blackman_window", lambda m, x, y: m.blackman_window(5, False, dtype=m.float64)),
    ("split_with_sizes", lambda m, x, y: m.split_with_sizes(x, [5, 7])),
    ("gradient", lambda m, x, y: m.gradient(x.reshape(3, 4), spacing=2.0)),
    ("gradient_coordinates", lambda m, x, y: m.gradient(
        x.reshape(3, 4), spacing=(y[:4].sort().values + m.arange(4.0, dtype=m.float64),),
        dim=1, edge_order=2)),
]


@pytest.mark.parametrize("name, fn", ORACLE, ids=[n for n, _ in ORACLE])
def test_matches_pytorch(name, fn, rng):
    torch = pytest.importorskip("torch")
    a, b = rng.uniform(-1.5, 1.5, 12), rng.uniform(-1.5, 1.5, 12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # PyTorch's "index_reduce() is in beta"
        want = fn(torch, torch.tensor(a), torch.tensor(b))
    got = fn(gpugrad, gpugrad.tensor(a), gpugrad.tensor(b))
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(to_numpy(g), w.numpy(), rtol=1e-7, atol=1e-12)


def test_top_level_aliases_of_functional_and_of_methods(device):
    import gpugrad.nn.functional as F
    for name in ("conv3d", "conv_transpose3d", "max_pool3d", "max_pool1d_with_indices",
                 "dropout", "alpha_dropout", "feature_alpha_dropout", "bilinear",
                 "channel_shuffle", "hardshrink", "rrelu", "threshold", "pdist", "layer_norm",
                 "rms_norm"):
        assert getattr(gpugrad, name) is getattr(F, name), name
    x = gpugrad.tensor([[1.0, -2.0, 3.0], [0.5, 0.0, -1.0]], device=device, requires_grad=True)
    filled = gpugrad.fill(x, 2.0)
    assert to_numpy(filled).tolist() == [[2.0] * 3] * 2 and not filled.requires_grad
    assert to_numpy(x).tolist() == [[1.0, -2.0, 3.0], [0.5, 0.0, -1.0]]   # out of place
    d = gpugrad.detach(x)
    assert not d.requires_grad and d._data is x._data
    z = gpugrad.zeros(4, device=device)
    idx = gpugrad.tensor([1, 3], device=device)
    assert to_numpy(gpugrad.put(z, idx, gpugrad.tensor([5.0, 6.0], device=device))).tolist() \
        == [0.0, 5.0, 0.0, 6.0]
    assert to_numpy(gpugrad.index_put(z, (idx,), gpugrad.tensor(7.0, device=device),
                                      accumulate=True)).tolist() == [0.0, 7.0, 0.0, 7.0]
    assert to_numpy(z).tolist() == [0.0] * 4
    assert to_numpy(gpugrad.narrow_copy(x, 1, 1, 2)).tolist() == [[-2.0, 3.0], [0.0, -1.0]]
    r = gpugrad.renorm(x, 2, 0, 1.0)   # rows of norm > 1 scaled to norm 1
    np.testing.assert_allclose(np.linalg.norm(to_numpy(r), axis=1), [1.0, 1.0], rtol=1e-6)
    assert to_numpy(gpugrad.dropout(x, 0.5, False)).tolist() == to_numpy(x).tolist()
    assert to_numpy(gpugrad.threshold(x, 0.6, 9.0)).tolist() == [[1.0, 9.0, 3.0],
                                                                 [9.0, 9.0, 9.0]]


# -- gradient: numpy.gradient's estimates, as recorded ops ---------------------------------------
F = np.array([[1.0, 2.0, 4.0, 8.0, 16.0], [10.0, 20.0, 35.0, 80.0, 100.0], [0, 1, 0, 1, 0]])


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_matches_numpy(device, edge_order):
    got = gpugrad.gradient(tensor(F, device), edge_order=edge_order)
    want = np.gradient(F, edge_order=edge_order)
    assert len(got) == 2
    for g, w in zip(got, want):
        np.testing.assert_allclose(to_numpy(g), w, rtol=1e-12)
    coords = np.array([0.0, 1.0, 1.5, 3.5, 4.0])
    [got] = gpugrad.gradient(tensor(F, device), spacing=(tensor(coords, device),), dim=-1,
                             edge_order=edge_order)
    np.testing.assert_allclose(to_numpy(got), np.gradient(F, coords, axis=-1,
                                                          edge_order=edge_order), rtol=1e-12)
    got = gpugrad.gradient(tensor(F, device), spacing=[0.5, 3], edge_order=edge_order)
    for g, w in zip(got, np.gradient(F, 0.5, 3, edge_order=edge_order)):
        np.testing.assert_allclose(to_numpy(g), w, rtol=1e-12)


def test_gradient_exact_values_and_dtypes(device):
    x = gpugrad.tensor([1.0, 4.0, 9.0, 16.0, 25.0], device=device)
    [g] = gpugrad.gradient(x)
    assert g.dtype == gpugrad.float32 and g.tolist() == [3.0, 4.0, 6.0, 8.0, 9.0]
    [g] = gpugrad.gradient(gpugrad.tensor([1, 2, 4], device=device))
    assert g.dtype == gpugrad.float32 and g.tolist() == [1.0, 1.5, 2.0]
    [g] = gpugrad.gradient(x, spacing=gpugrad.tensor(2.0, device=device), edge_order=2)
    assert g.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]   # exact for a parabola
    assert gpugrad.gradient(tensor(np.array(3.0), device)) == ()


@pytest.mark.parametrize("order", [1, 2])
def test_gradient_gradients(device, order):
    x = tensor(np.array([1.0, 3.0, 2.0, 5.0, 4.0]), device, requires_grad=True)
    c = tensor(np.array([0.0, 1.0, 3.0, 4.0, 7.0]), device, requires_grad=True)
    assert type(gpugrad.gradient(x)[0].grad_fn).__name__ == "CatBackward0"
    assert gradcheck(lambda x, c: gpugrad.gradient(x, spacing=(c,), edge_order=order)[0], (x, c))
    assert gradgradcheck(lambda x: gpugrad.gradient(x, spacing=0.5, edge_order=order)[0], (x,))


@pytest.mark.parametrize("kw, message", [
    ({"edge_order": 3}, "torch.gradient only supports edge_order=1 and edge_order=2."),
    ({"dim": 0, "edge_order": 2}, "torch.gradient expected each dimension size to be at least "
                                  "edge_order+1"),
    ({"spacing": [1.0, 2.0, 3.0]}, "torch.gradient expected spacing to be unspecified, a "
     "scalar, or a list of length equal to 'self.dim() = 2', since dim argument was not given, "
     "but got a list of length 3"),
    ({"dim": 1, "spacing": [1.0, 2.0]}, "torch.gradient expected spacing to be unspecified, a "
     "scalar or it's spacing and dim arguments to have the same length, but got a spacing "
     "argument of length 2 and a dim argument of length 1."),
    ({"dim": 1, "spacing": [np.ones((2, 2))]}, "torch.gradient expected each element of "
     "spacing to have one dimension, but got an element with 2 dimensions!"),
    ({"dim": 1, "spacing": [np.arange(3.0)]}, "torch.gradient expected the coordinates along "
     "dimension 1 to have one entry per element (4), but got 3"),
])
def test_gradient_errors(device, kw, message):
    x = tensor(np.arange(8.0).reshape(2, 4), device)
    if "spacing" in kw and isinstance(kw["spacing"][0], np.ndarray):
        kw = dict(kw, spacing=[tensor(kw["spacing"][0], device)])
    with pytest.raises(RuntimeError) as e:
        gpugrad.gradient(x, **kw)
    assert str(e.value) == message
    with pytest.raises(IndexError, match=r"^Dimension out of range"):
        gpugrad.gradient(x, dim=2)
