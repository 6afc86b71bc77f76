"""Creation functions: tensor / scalar_tensor / range / empty_strided, asarray, frombuffer,
arange's bounds, logspace, the signal windows, the legacy typed constructors and the default
dtype they use."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad import _creation


def test_logspace_poisson(device):
    np.testing.assert_allclose(to_numpy(gpugrad.logspace(-1, 2, 4, device=device)),
                               [0.1, 1, 10, 100], rtol=1e-6)
    two = gpugrad.logspace(0, 3, 4, base=2, dtype=gpugrad.int64)
    np.testing.assert_array_equal(to_numpy(two), [1, 2, 4, 8])
    rates = tensor([0.0, 4.0, 100.0], device, gpugrad.float32)
    gpugrad.manual_seed(3)
    first = gpugrad.poisson(rates.expand(2000, 3))
    gpugrad.manual_seed(3)
    again = gpugrad.poisson(rates.expand(2000, 3))
    assert first.dtype == gpugrad.float32
    np.testing.assert_array_equal(to_numpy(first), to_numpy(again))
    mean = to_numpy(first).mean(0)
    assert mean[0] == 0 and abs(mean[1] - 4) < 0.3 and abs(mean[2] - 100) < 1.5
    with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be "
                                           "non-negative"):
        gpugrad.poisson(gpugrad.tensor([-1.0]))


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


def test_arange_reads_tensor_bounds_and_checks_them():
    for y in (gpugrad.arange(gpugrad.tensor(3.5)), gpugrad.arange(0, gpugrad.tensor(3.5)),
              gpugrad.arange(gpugrad.tensor(3.5, dtype=gpugrad.float64))):
        assert y.dtype == gpugrad.float32 and y.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert gpugrad.arange(gpugrad.tensor(3)).dtype == gpugrad.int64
    assert gpugrad.arange(0, 3, gpugrad.tensor(0.5)).tolist() == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]
    assert gpugrad.arange(np.float32(2.0)).dtype == gpugrad.float32
    assert gpugrad.arange(5, 0, -1).tolist() == [5, 4, 3, 2, 1]
    for args in ((0, 5, -1), (5, 0, 1), (0.0, 1.0, -0.5)):
        with pytest.raises(RuntimeError, match="^upper bound and lower bound inconsistent with "
                                               "step sign$"):
            gpugrad.arange(*args)
    with pytest.raises(RuntimeError, match="^step must be nonzero$"):
        gpugrad.arange(0, 5, 0)
    with pytest.raises(RuntimeError, match="^unsupported range: 0 -> nan$"):
        gpugrad.arange(0.0, float("nan"))
    with pytest.raises(RuntimeError, match="^unsupported range: 0.5 -> inf$"):
        gpugrad.arange(0.5, float("inf"))


def test_tensor_takes_the_dtype_numpy_entries_carry():
    assert gpugrad.tensor([np.float64(1.5), 2.0]).dtype == gpugrad.float64
    assert gpugrad.tensor([1, np.float64(2.0)]).dtype == gpugrad.float64
    assert gpugrad.tensor([np.float32(1.5), np.float64(2.0)]).dtype == gpugrad.float64
    assert gpugrad.tensor([np.float16(1.5), 2.0]).dtype == gpugrad.float32
    assert gpugrad.tensor([np.int32(1), 2]).dtype == gpugrad.int64
    assert gpugrad.tensor([np.int32(1), 2.5]).dtype == gpugrad.float32
    assert gpugrad.tensor([np.array([1.5]), np.array([2.0])]).dtype == gpugrad.float64
    assert gpugrad.tensor([gpugrad.tensor(1.0, dtype=gpugrad.float64)] * 2).dtype == \
        gpugrad.float64
    assert gpugrad.tensor([[1.5], [2.0]]).dtype == gpugrad.float32
    assert gpugrad.tensor(np.float64(1.5)).dtype == gpugrad.float64


# -- legacy constructors and Tensor.type -----------------------------------------------------------
def test_typed_constructors():
    FloatTensor, LongTensor = _creation.FloatTensor, _creation.LongTensor
    y = FloatTensor([1, 2])
    assert type(y) is gpugrad.Tensor and y.dtype == gpugrad.float32 and y.tolist() == [1.0, 2.0]
    assert tuple(FloatTensor(2, 3).shape) == (2, 3) and tuple(FloatTensor().shape) == (0,)
    assert tuple(FloatTensor(gpugrad.Size([2])).shape) == (2,)
    assert FloatTensor((2, 3)).tolist() == [2.0, 3.0]
    z = LongTensor(3)
    assert tuple(z.shape) == (3,) and z.dtype == gpugrad.int64
    assert LongTensor([-1.7, 2]).tolist() == [-1, 2]
    assert LongTensor(np.array([1.5, 2])).tolist() == [1, 2]
    for name, dtype in (("DoubleTensor", "float64"), ("HalfTensor", "float16"),
                        ("IntTensor", "int32"), ("ShortTensor", "int16"),
                        ("CharTensor", "int8"), ("ByteTensor", "uint8"), ("BoolTensor", "bool")):
        assert getattr(_creation, name)([1, 0]).dtype == np.dtype(dtype)
    t = gpugrad.tensor([1.0, 2.0])
    assert FloatTensor(t)._data is t._data   # shares the data, as in PyTorch
    with pytest.raises(TypeError, match="^expected float32 tensor \\(got int64 tensor\\)$"):
        FloatTensor(gpugrad.tensor([1, 2]))
    with pytest.raises(TypeError, match="^new\\(\\): data must be a sequence \\(got float\\)$"):
        FloatTensor(3.0)
    with pytest.raises(TypeError, match="^new\\(\\): argument 'size' failed to unpack the object "
                                        "at pos 2 with error \"type must be tuple of ints,but "
                                        "got float\"$"):
        LongTensor(2, 3.5)
    assert isinstance(t, FloatTensor) and not isinstance(t, LongTensor)
    assert isinstance(gpugrad.tensor([1]), LongTensor) and not isinstance(3, FloatTensor)
    assert repr(FloatTensor) == "<class 'gpugrad.FloatTensor'>" and FloatTensor.__name__ == \
        "FloatTensor"
    assert FloatTensor.dtype == gpugrad.float32 and FloatTensor.is_cuda is False
    assert FloatTensor != gpugrad.Tensor


def test_legacy_tensor_data():
    a = _creation.legacy_array
    assert a(([1, 2],)).dtype == np.float32 and a(([True, False],)).tolist() == [1.0, 0.0]
    assert a(()).shape == (0,) and a((2, 3)).shape == (2, 3)
    assert a((np.array([1, 2]),)).dtype == np.float32
    assert a((gpugrad.tensor([1, 2]),)).dtype == np.int64   # a tensor keeps its dtype
    with pytest.raises(TypeError, match="^new\\(\\): invalid data type 'str'$"):
        a(("ab",))


def test_tensor_constructor_uses_the_default_dtype():
    assert gpugrad.Tensor([1, 2]).dtype == gpugrad.float32
    assert gpugrad.Tensor().shape == (0,) and gpugrad.Tensor(2, 3).shape == (2, 3)
    assert gpugrad.Tensor(gpugrad.Size([4])).shape == (4,)
    base = gpugrad.tensor([1.0, 2.0])
    shared = gpugrad.Tensor(base)
    shared[0] = 5.0
    assert base.tolist() == [5.0, 2.0]
    assert gpugrad.FloatTensor([1, 2]).dtype == gpugrad.float32
    assert gpugrad.LongTensor([1, 2]).dtype == gpugrad.int64
