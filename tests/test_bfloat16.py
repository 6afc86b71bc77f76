"""bfloat16 (gpugrad/_bfloat16.py and where it is read): the dtype, its conversions bit for bit,
PyTorch's promotion, creation, ops computed in float32 and rounded at their output, gradients,
printing, autocast, checkpoints, and its refusal on CUDA. PyTorch is the oracle where it is
installed."""
from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest

import gpugrad
import gpugrad.nn.functional as F
from gpugrad import nn

BF16 = gpugrad.bfloat16
torch = pytest.importorskip("torch")


def bits(t) -> np.ndarray:
    """The 16 bits of each bfloat16 value of a gpugrad or PyTorch tensor."""
    if isinstance(t, torch.Tensor):
        return t.detach().view(torch.int16).numpy().view(np.uint16)
    return t._data.view(np.uint16)


def from_torch(t, requires_grad=False):
    """The same bfloat16 values (through float32, which holds each exactly)."""
    return gpugrad.tensor(t.detach().float().numpy()).to(BF16).requires_grad_(requires_grad)


def assert_close(got, want, rtol=2 ** -7, atol=None):
    """Within bfloat16's rounding of ``want`` (PyTorch's bfloat16 result), and bfloat16."""
    assert got.dtype == BF16 and want.dtype == torch.bfloat16
    g = got._data.astype(np.float32)
    w = want.detach().float().numpy()
    scale = float(np.abs(w).max()) if w.size else 1.0
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol if atol is not None else rtol * scale)


# -- the dtype -------------------------------------------------------------------------------------
def test_the_dtype_and_its_limits_are_pytorchs():
    assert BF16.itemsize == 2 and BF16.name == "bfloat16"
    assert gpugrad.as_dtype("torch.bfloat16") == BF16 and gpugrad.as_dtype("bfloat16") == BF16
    t = gpugrad.ones(3, dtype=BF16)
    assert t.dtype == BF16 and t.is_floating_point() and not t.is_complex()
    assert t.element_size() == 2 and t.nbytes == 6 and t.type() == "gpugrad.BFloat16Tensor"
    mine, theirs = gpugrad.finfo(BF16), torch.finfo(torch.bfloat16)
    for name in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(mine, name) == getattr(theirs, name), name
    assert repr(mine) == repr(theirs)


def _edge_floats():
    rng = np.random.default_rng(0)
    r = rng.standard_normal(2000).astype(np.float32) * np.float32(10) ** rng.integers(
        -40, 38, 2000).astype(np.float32)
    # the halfway cases: the 16 dropped bits are exactly 0x8000, with an even and an odd kept
    # bit (ties to even), one below and one above
    base = rng.integers(0, 2 ** 16, 64, dtype=np.uint32) << 16
    ties = np.concatenate([base | 0x8000, base | 0x18000, base | 0x7FFF, base | 0x8001])
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 3.4e38, -3.39e38, 1.17e-38],
                       np.float32)
    return np.concatenate([r, ties.astype(np.uint32).view(np.float32), special])


@pytest.mark.parametrize("src", [np.float32, np.float64, np.float16])
def test_conversion_to_bfloat16_rounds_as_pytorch_bit_for_bit(src):
    with np.errstate(over="ignore"):   # (to float16: the large ones overflow to inf)
        x = _edge_floats().astype(src)
    mine = gpugrad.tensor(x).to(BF16)
    theirs = torch.from_numpy(x).to(torch.bfloat16)
    nan = np.isnan(x)   # NOTE: a NaN stays a NaN; its payload bits are PyTorch's kernel's choice
    np.testing.assert_array_equal(bits(mine)[~nan], bits(theirs)[~nan])
    assert np.isnan(mine.float().numpy()[nan]).all()
    # and back: a bfloat16 is the top half of a float32, exactly
    np.testing.assert_array_equal(mine.float().numpy(), theirs.float().numpy())
    np.testing.assert_array_equal(mine.bfloat16().float().numpy(), theirs.float().numpy())


def test_conversions_between_bfloat16_and_integers_match_pytorch():
    x = np.array([-3.7, -0.5, 0.0, 0.4, 2.5, 126.9, 300.0], np.float32)
    mine, theirs = gpugrad.tensor(x).bfloat16(), torch.from_numpy(x).bfloat16()
    for d, td in ((gpugrad.int64, torch.int64), (gpugrad.int32, torch.int32),
                  (gpugrad.bool, torch.bool)):
        assert mine.to(d).tolist() == theirs.to(td).tolist()
    i = gpugrad.tensor([1, 257, -3, 65537])
    np.testing.assert_array_equal(bits(i.to(BF16)), bits(torch.tensor([1, 257, -3, 65537])
                                                         .to(torch.bfloat16)))


# -- promotion -------------------------------------------------------------------------------------
_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
           "float64"]   # every dtype gpugrad names


@pytest.mark.parametrize("a", _DTYPES)
def test_promote_types_matches_pytorch_for_every_pair(a):
    for b in _DTYPES:
        want = str(torch.promote_types(getattr(torch, a), getattr(torch, b))).split(".")[1]
        assert gpugrad.promote_types(getattr(gpugrad, a), getattr(gpugrad, b)).name == want, b


@pytest.mark.parametrize("other, want", [
    (2.5, "bfloat16"), (3, "bfloat16"), (True, "bfloat16"), (1 + 2j, "complex64"),
    (("tensor", "float16"), "float32"), (("tensor", "float32"), "float32"),
    (("tensor", "float64"), "float64"), (("tensor", "int64"), "bfloat16"),
    (("tensor", "bool"), "bfloat16"), (("scalar", "float32"), "bfloat16"),
    (("scalar", "float64"), "bfloat16"), (("scalar", "int64"), "bfloat16"),
])
def test_arithmetic_promotes_as_pytorch(other, want):
    x = [0.5, 1.25, -3.0]
    mine, theirs = gpugrad.tensor(x, dtype=BF16), torch.tensor(x, dtype=torch.bfloat16)
    if isinstance(other, tuple):
        kind, name = other
        v = [2, 1, 3] if kind == "tensor" else 2
        o_mine = gpugrad.tensor(v, dtype=getattr(gpugrad, name))
        o_theirs = torch.tensor(v, dtype=getattr(torch, name))
    else:
        o_mine = o_theirs = other
    for f in (lambda a, b: a + b, lambda a, b: b * a, lambda a, b: a / b):
        r_mine, r_theirs = f(mine, o_mine), f(theirs, o_theirs)
        assert str(r_theirs.dtype) == f"torch.{want}"
        assert r_mine.dtype.name == want
        if want == "bfloat16":
            np.testing.assert_array_equal(bits(r_mine), bits(r_theirs))
    assert gpugrad.result_type(mine, o_mine).name == want


def test_an_integer_tensor_with_a_bfloat16_tensor_is_bfloat16():
    i = gpugrad.tensor([1, 2, 3])
    b = gpugrad.tensor([0.5, 1.5, 2.5], dtype=BF16)
    assert (i * b).dtype == BF16 and (i * b).tolist() == [0.5, 3.0, 7.5]


# -- creation --------------------------------------------------------------------------------------
def test_creation_functions_take_bfloat16():
    made = [gpugrad.zeros(2, 3, dtype=BF16), gpugrad.ones(2, dtype=BF16),
            gpugrad.empty(4, dtype=BF16), gpugrad.full((2,), 1.3, dtype=BF16),
            gpugrad.tensor([1.0, 2.0], dtype=BF16), gpugrad.randn(5, dtype=BF16),
            gpugrad.rand(5, dtype=BF16), gpugrad.arange(0, 1, 0.1, dtype=BF16),
            gpugrad.zeros_like(gpugrad.ones(2), dtype=BF16),
            gpugrad.ones(2, dtype=BF16, requires_grad=True)]
    assert all(t.dtype == BF16 for t in made)
    assert made[-1].requires_grad
    np.testing.assert_array_equal(bits(made[3]), bits(torch.full((2,), 1.3,
                                                                 dtype=torch.bfloat16)))
    np.testing.assert_array_equal(bits(made[7]), bits(torch.arange(0, 1, 0.1,
                                                                   dtype=torch.bfloat16)))
    assert gpugrad.ones(2, dtype=BF16).new_zeros(3).dtype == BF16


# -- reading values back ---------------------------------------------------------------------------
def test_item_tolist_and_numpy_as_pytorch():
    x = [0.1, 1.5, -2.25, 3e38]
    mine, theirs = gpugrad.tensor(x, dtype=BF16), torch.tensor(x, dtype=torch.bfloat16)
    assert mine.tolist() == theirs.tolist()
    assert mine[0].item() == theirs[0].item() and isinstance(mine[0].item(), float)
    assert float(mine[1]) == 1.5
    with pytest.raises(TypeError, match="^Got unsupported ScalarType BFloat16$"):
        mine.numpy()
    with pytest.raises(TypeError) as theirs_error:
        theirs.numpy()
    assert "Got unsupported ScalarType BFloat16" in str(theirs_error.value)
    assert mine.float().numpy().dtype == np.float32


@pytest.mark.parametrize("x", [[1.0, 2.0], [0.1234, 1.5], [1e-5, 1e5], [0.1], [[1.5, -2.0],
                                                                             [3.25, 4.0]]])
def test_printing_as_pytorch(x):
    mine, theirs = gpugrad.tensor(x, dtype=BF16), torch.tensor(x, dtype=torch.bfloat16)
    assert repr(mine) == repr(theirs).replace("torch.", "gpugrad.")
    assert repr(mine[0]) == repr(theirs[0]).replace("torch.", "gpugrad.")


# -- ops: float32 compute, rounded at the output ---------------------------------------------------
def _pair(shape, seed, requires_grad=True, scale=1.0):
    v = torch.Generator().manual_seed(seed)
    t = (torch.randn(shape, generator=v) * scale).to(torch.bfloat16)
    return from_torch(t, requires_grad), t.clone().requires_grad_(requires_grad)


_OPS = {
    "add": (lambda m, a, b: a + b, [(4, 5), (5,)]),
    "sub_mul_div": (lambda m, a, b: (a - b) * a / (b.abs() + 1), [(4, 5), (4, 5)]),
    "scalar": (lambda m, a: a * 0.3 + 1.7, [(3, 4)]),
    "matmul": (lambda m, a, b: a @ b, [(6, 40), (40, 7)]),
    "linear": (lambda m, x, w, b: m.nn.functional.linear(x, w, b), [(5, 64), (8, 64), (8,)]),
    "relu": (lambda m, a: m.relu(a), [(20,)]),
    "gelu": (lambda m, a: m.nn.functional.gelu(a), [(30,)]),
    "gelu_tanh": (lambda m, a: m.nn.functional.gelu(a, approximate="tanh"), [(30,)]),
    "softmax": (lambda m, a: m.softmax(a, -1), [(4, 33)]),
    "log_softmax": (lambda m, a: m.log_softmax(a, 1), [(4, 33)]),
    "layer_norm": (lambda m, a, w, b: m.nn.functional.layer_norm(a, (48,), w, b),
                   [(3, 48), (48,), (48,)]),
    "sum": (lambda m, a: a.sum(), [(300,)]),
    "sum_dim": (lambda m, a: a.sum(1), [(5, 200)]),
    "mean": (lambda m, a: a.mean(0), [(300, 3)]),
    "exp_tanh": (lambda m, a: a.exp() + a.tanh(), [(20,)]),
}


@pytest.mark.parametrize("name", list(_OPS))
def test_op_values_and_gradients_match_pytorch_in_bfloat16(name):
    f, shapes = _OPS[name]
    pairs = [_pair(s, i) for i, s in enumerate(shapes)]
    mine = f(gpugrad, *(p[0] for p in pairs))
    theirs = f(torch, *(p[1] for p in pairs))
    assert mine.dtype == BF16 and mine.shape == tuple(theirs.shape)
    assert type(mine.grad_fn).__name__ == type(theirs.grad_fn).__name__
    assert_close(mine, theirs)
    g = _pair(tuple(theirs.shape), 99, requires_grad=False)
    mine.backward(g[0])
    theirs.backward(g[1])
    for (m, t) in pairs:
        assert m.grad.dtype == BF16
        assert_close(m.grad, t.grad, rtol=2 ** -6)


def test_double_backward_through_bfloat16():
    # under create_graph the backward's own ops compute (and round) as any bfloat16 op does
    for f in (lambda m, a: (a * a * a).sum(), lambda m, a: m.nn.functional.gelu(a).sum()):
        mine, theirs = _pair((8,), 4)
        (gm,) = gpugrad.autograd.grad(f(gpugrad, mine), mine, create_graph=True)
        (gt,) = torch.autograd.grad(f(torch, theirs), theirs, create_graph=True)
        assert_close(gm, gt)
        (hm,) = gpugrad.autograd.grad(gm.sum(), mine)
        (ht,) = torch.autograd.grad(gt.sum(), theirs)
        assert_close(hm, ht, rtol=2 ** -5)


def test_sums_accumulate_in_float32_as_pytorch():
    # numpy's bfloat16 sum would stop at 256 (256 + 1 rounds back to 256)
    mine = gpugrad.ones(1000, dtype=BF16)
    theirs = torch.ones(1000, dtype=torch.bfloat16)
    assert mine.sum().item() == theirs.sum().item() == 1000.0
    assert (mine @ mine).item() == (theirs @ theirs).item()
    assert mine.cumsum(0)[-1].item() == theirs.cumsum(0)[-1].item()


def test_cross_entropy_values_and_gradients_match_pytorch():
    mine, theirs = _pair((6, 10), 3, scale=2.0)
    target = [1, 0, 9, 3, 3, 7]
    lm = F.cross_entropy(mine, gpugrad.tensor(target))
    lt = torch.nn.functional.cross_entropy(theirs, torch.tensor(target))
    assert lm.dtype == BF16
    assert_close(lm, lt)
    lm.backward()
    lt.backward()
    assert_close(mine.grad, theirs.grad, rtol=2 ** -6)


def test_views_and_in_place_writes_keep_bfloat16_and_share_memory():
    x = gpugrad.arange(6, dtype=gpugrad.float32).bfloat16()
    v = x.view(2, 3).t()
    assert v.dtype == BF16 and v._data.base is not None
    v[0, 1] = 2.5
    assert x[3].item() == 2.5
    x.add_(1.0)
    x.mul_(gpugrad.full((6,), 0.5))   # a float32 operand is written back as bfloat16
    assert x.dtype == BF16 and v[0, 1].item() == 1.75
    assert gpugrad.cat([x, x]).dtype == BF16 and x[x > 1].dtype == BF16


def test_float32_ops_keep_their_own_nodes():
    a = gpugrad.ones(3, requires_grad=True)
    b = gpugrad.ones(3, dtype=BF16, requires_grad=True)
    fa, fb = (a * a).grad_fn, (b * b).grad_fn
    assert type(fa).__name__ == type(fb).__name__ == "MulBackward0"
    assert type(fa) is type(fb).__mro__[1] and fa._in_meta is None


def test_mixed_bfloat16_and_float32_gradients_keep_each_inputs_dtype():
    w = gpugrad.ones(3, requires_grad=True)
    b = gpugrad.full((3,), 0.1, dtype=BF16, requires_grad=True)
    y = (w * b).sum()
    assert y.dtype == gpugrad.float32
    y.backward()
    assert w.grad.dtype == gpugrad.float32 and b.grad.dtype == BF16
    np.testing.assert_array_equal(w.grad.numpy(), np.full(3, b[0].item(), np.float32))


def test_a_bfloat16_module_trains():
    gpugrad.manual_seed(0)
    m = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 4)).bfloat16()
    assert all(p.dtype == BF16 for p in m.parameters())
    opt = gpugrad.optim.AdamW(m.parameters(), lr=1e-2)
    x, y = gpugrad.randn(32, 8, dtype=BF16), gpugrad.randint(0, 4, (32,))
    losses = []
    for _ in range(30):
        opt.zero_grad()
        loss = F.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(p.dtype == BF16 and p.grad.dtype == BF16 for p in m.parameters())
    assert losses[-1] < 0.5 * losses[0]


# -- autocast --------------------------------------------------------------------------------------
def test_cpu_autocast_defaults_to_bfloat16_as_pytorch():
    assert gpugrad.get_autocast_dtype("cpu") == BF16
    assert torch.get_autocast_dtype("cpu") == torch.bfloat16
    mine, theirs = _pair((4, 16), 5)
    wm, wt = _pair((16, 8), 6)
    with gpugrad.autocast("cpu"):
        assert gpugrad.is_autocast_enabled("cpu")
        assert gpugrad.get_autocast_dtype("cpu") == BF16
        ym = mine.float() @ wm.float()
        # NOTE: gpugrad's float32 list is one for all devices (docs/design.md); PyTorch's CPU
        # list leaves softmax in bfloat16
        assert gpugrad.softmax(ym, -1).dtype == gpugrad.float32
    with torch.autocast("cpu"):
        yt = theirs.float() @ wt.float()
    assert ym.dtype == BF16 and yt.dtype == torch.bfloat16
    assert_close(ym, yt)
    with gpugrad.autocast("cpu", dtype=BF16):
        assert F.linear(gpugrad.ones(2, 3), gpugrad.ones(4, 3)).dtype == BF16


# -- checkpoints -----------------------------------------------------------------------------------
def _weights():
    w = gpugrad.tensor(_edge_floats()[:200]).bfloat16()
    return {"w": w, "view": w[10:20], "p": nn.Parameter(gpugrad.ones(3, dtype=BF16))}


def test_pytorch_zip_round_trips_with_torch_bit_for_bit(tmp_path):
    sd = _weights()
    gpugrad.save(sd, tmp_path / "m.pt", format="torch")
    theirs = torch.load(tmp_path / "m.pt")
    for k in sd:
        assert theirs[k].dtype == torch.bfloat16
        np.testing.assert_array_equal(bits(theirs[k]), bits(sd[k]))
    torch.save(theirs, tmp_path / "t.pt")
    back = gpugrad.load(tmp_path / "t.pt")
    for k in sd:
        assert back[k].dtype == BF16
        np.testing.assert_array_equal(bits(back[k]), bits(sd[k]))


def test_gpugrad_format_and_safetensors_keep_bfloat16(tmp_path):
    sd = _weights()
    buf = io.BytesIO()
    gpugrad.save({**sd, "dtype": BF16}, buf)
    buf.seek(0)
    back = gpugrad.load(buf)
    assert back["dtype"] == BF16
    for k in sd:
        assert back[k].dtype == BF16
        np.testing.assert_array_equal(bits(back[k]), bits(sd[k]))
    from safetensors.torch import load_file
    flat = {"w": sd["w"], "p": sd["p"].detach()}
    gpugrad.save(flat, tmp_path / "m.safetensors")
    theirs = load_file(tmp_path / "m.safetensors")
    back = gpugrad.load(tmp_path / "m.safetensors")
    for k in flat:
        assert theirs[k].dtype == torch.bfloat16 and back[k].dtype == BF16
        np.testing.assert_array_equal(bits(theirs[k]), bits(flat[k]))
        np.testing.assert_array_equal(bits(back[k]), bits(flat[k]))


# -- CUDA and a missing ml_dtypes ------------------------------------------------------------------
ON_CUDA = ("bfloat16 tensors are not supported on CUDA devices by gpugrad: CuPy has no bfloat16 "
           "dtype; use float16 or float32")


def test_cuda_says_it_has_no_bfloat16():
    assert gpugrad.cuda.is_bf16_supported() is False
    assert "CuPy has no bfloat16" in gpugrad.cuda.is_bf16_supported.__doc__


@pytest.mark.gpu
def test_a_bfloat16_tensor_on_cuda_is_refused_with_the_reason():
    if not gpugrad.cuda.is_available():
        pytest.skip("no CUDA device")
    x = gpugrad.ones(2, dtype=BF16)
    for make in (lambda: x.cuda(), lambda: x.to("cuda"), lambda: gpugrad.ones(2).cuda().to(BF16),
                 lambda: gpugrad.ones(2).cuda().bfloat16(),
                 lambda: gpugrad.zeros(2, dtype=BF16, device="cuda"),
                 lambda: gpugrad.randn(2, dtype=BF16, device="cuda"),
                 lambda: gpugrad.arange(3, dtype=BF16, device="cuda"),
                 lambda: gpugrad.tensor([1.0], dtype=BF16, device="cuda")):
        with pytest.raises(TypeError, match="^" + ON_CUDA + "$"):
            make()
    with pytest.warns(UserWarning, match="CUDA Autocast only supports dtype of gpugrad.float16"):
        gpugrad.autocast("cuda", dtype=BF16)


def test_without_ml_dtypes_the_name_exists_and_a_tensor_asks_for_it():
    code = ("import sys; sys.modules['ml_dtypes'] = None\n"
            "import gpugrad\n"
            "print(repr(gpugrad.bfloat16), gpugrad.ones(2).dtype)\n"
            "try:\n"
            "    gpugrad.zeros(2, dtype=gpugrad.bfloat16)\n"
            "except ImportError as e:\n"
            "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out == ["gpugrad.bfloat16 float32",
                   "gpugrad.bfloat16 needs the ml_dtypes package (numpy has no bfloat16 "
                   "dtype): pip install ml_dtypes"]
