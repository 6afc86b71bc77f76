"""Tensor basics of PyTorch's API: dtype shorthands, storage queries, pin_memory, apply_ / map_,
adjoint and aliases, new_* constructors, resize_, type / to, queries real tensors answer
(conj, real, is_sparse, mH ...) and the result types values/indices print as."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import cuda_available, tensor, to_numpy

import gpugrad
from gpugrad import _creation
from gpugrad.autograd import gradcheck, gradgradcheck


def _check_grads(fn, *inputs):
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-6)
    assert gradgradcheck(fn, inputs, eps=1e-6, atol=1e-5)


def _leaf(rng, shape, device, lo=-2.0, hi=2.0):
    return tensor(rng.uniform(lo, hi, shape), device, requires_grad=True)


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


def test_device_predicates_as_torch_names_them(device):
    torch = pytest.importorskip("torch")
    x = tensor([1.0, 2.0], device)
    names = [n for n in dir(torch.zeros(1)) if n.startswith("is_")
             and not callable(getattr(torch.zeros(1), n))]
    assert {"is_xpu", "is_mps", "is_mtia", "is_meta", "is_cpu", "is_cuda"} <= set(names)
    for name in names:   # every property PyTorch answers, answered (a bool, not a method)
        assert getattr(x, name) is (name == "is_leaf" or name == f"is_{x.device.type}"), name
    assert gpugrad.backends.mps.is_available() is False is gpugrad.backends.mps.is_built()


def test_mh_is_differentiable(device, rng):
    x = _leaf(rng, (2, 3), device)
    _check_grads(lambda a: a.mH * 1.0, x)


# -- Tensor methods -------------------------------------------------------------------------------
def test_dtype_shorthands():
    x = gpugrad.tensor([1.7, -2.2])
    assert (x.byte().dtype, x.char().dtype, x.short().dtype) == (gpugrad.uint8, gpugrad.int8,
                                                                 gpugrad.int16)
    np.testing.assert_array_equal(to_numpy(x.char()), [1, -2])


def test_storage_queries(device):
    t = tensor(np.arange(12.0).reshape(3, 4), device)
    assert t.get_device() == (-1 if device == "cpu" else 0)
    assert t.is_cpu is (device == "cpu")
    view = t[1:, 2:]
    assert view.storage_offset() == 6 and t.storage_offset() == 0
    assert view.data_ptr() == t.data_ptr() + 6 * 8
    assert t.share_memory_() is t and t.is_shared()
    assert not tensor([1.0], device).is_shared()
    assert not t.is_pinned()


def test_pin_memory():
    t = gpugrad.tensor([1.0, 2.0])
    if not cuda_available():
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is "
                                               "available."):
            t.pin_memory()
        return
    p = t.pin_memory()
    assert p is not t and p.is_pinned() and p.pin_memory() is p
    np.testing.assert_array_equal(to_numpy(p), [1.0, 2.0])


def test_apply_and_map(device):
    t = tensor([1.0, 2.0, 3.0], device)
    if device != "cpu":
        with pytest.raises(TypeError, match="apply_ is only implemented on CPU tensors"):
            t.apply_(abs)
        return
    assert t.apply_(lambda v: v * v + 1) is t
    np.testing.assert_array_equal(to_numpy(t), [2, 5, 10])
    t.map_(tensor([1.0, 1.0, 4.0], device), lambda a, b: a - b)
    np.testing.assert_array_equal(to_numpy(t), [1, 4, 6])


def test_adjoint_and_the_remaining_aliases(device):
    m = tensor(np.arange(6.0).reshape(2, 3), device, requires_grad=True)
    a = m.adjoint()
    assert type(a.grad_fn).__name__ == "TransposeBackward0"
    np.testing.assert_array_equal(to_numpy(gpugrad.adjoint(m)), np.arange(6.0).reshape(2, 3).T)
    a.sum().backward()
    np.testing.assert_array_equal(to_numpy(m.grad), np.ones((2, 3)))
    with pytest.raises(RuntimeError, match=r"^tensor\.adjoint\(\) is only supported on matrices "
                                           r"or batches of matrices\. Got 1-D tensor\.$"):
        tensor([1.0, 2.0], device).adjoint()
    y = tensor([[1.0, 2.0], [3.0, 4.0]], device)
    assert y.subtract_(tensor([1.0, 1.0], device), alpha=2) is y
    assert y.multiply_(3) is y
    np.testing.assert_array_equal(to_numpy(y), [[-3.0, 0.0], [3.0, 6.0]])
    x = tensor([-1.0, 0.2, 0.7], device)
    np.testing.assert_array_equal(to_numpy(x.hardshrink(0.5)), [-1.0, 0.0, 0.7])
    np.testing.assert_allclose(to_numpy(x.prelu(tensor([0.25], device))), [-0.25, 0.2, 0.7])


def test_new_empty_strided(device):
    x = gpugrad.zeros(3, dtype=gpugrad.float64, device=device)
    e = x.new_empty_strided((2, 3), (1, 2))
    assert (tuple(e.shape), e.stride(), e.dtype, e.device) == ((2, 3), (1, 2), x.dtype, x.device)
    f = x.new_empty_strided((4,), (1,), dtype=gpugrad.int32, requires_grad=False)
    assert (f.dtype, f.is_contiguous()) == (gpugrad.int32, True)


def test_storages_tell_which_tensors_share_memory(device):
    x = tensor([1.0, 2.0, 3.0], device)
    u = x.untyped_storage()
    assert isinstance(u, gpugrad.UntypedStorage) and gpugrad.is_storage(u)
    assert (u.nbytes(), u.size(), len(u), u.element_size(), str(u.device)) == (
        24, 24, 24, 1, str(x.device))
    assert u.tolist()[-8:] == list(np.array([3.0]).view(np.uint8))
    assert x[1:].untyped_storage().data_ptr() == u.data_ptr() == x.data_ptr()
    m = tensor(np.arange(12.0).reshape(3, 4), device)
    assert m.t().untyped_storage().data_ptr() == m.untyped_storage().data_ptr()
    assert m.t().contiguous().untyped_storage().data_ptr() != m.untyped_storage().data_ptr()
    assert m.clone().untyped_storage().data_ptr() != m.untyped_storage().data_ptr()
    with pytest.warns(UserWarning, match="^TypedStorage is deprecated"):
        s = x[1:].storage()
    assert isinstance(s, gpugrad.TypedStorage) and s.dtype == gpugrad.float64
    assert (s.size(), len(s), s.element_size(), s.nbytes()) == (3, 3, 8, 24)
    assert s.tolist() == [1.0, 2.0, 3.0] and (s[1], s[-1]) == (2.0, 3.0)
    s[0] = 7.0   # a write through the storage is a write to every tensor viewing it
    assert x.tolist() == [7.0, 2.0, 3.0]
    with pytest.raises(IndexError, match="^index 3 out of range for storage of size 3$"):
        s[3]
    assert repr(s.cpu()) == (" 7.0\n 2.0\n 3.0\n[gpugrad.storage.TypedStorage(dtype=gpugrad."
                             "float64, device=cpu) of size 3]")
    assert str(gpugrad.zeros(0).untyped_storage()) == (
        " \n[gpugrad.storage.UntypedStorage(device=cpu) of size 0]")


def t(data, device="cpu", requires_grad=False, dtype=gpugrad.float64):
    return gpugrad.tensor(np.asarray(data), dtype=dtype, device=device,
                          requires_grad=requires_grad)


def idx(data, device="cpu"):
    return gpugrad.tensor(np.asarray(data), device=device)


def test_tensor_helpers_stride_new_full_type_as_and_logic(device):
    x = t(np.zeros((2, 3)), device, True)
    assert x.stride() == (3, 1) and x.t().stride() == (1, 3) and x.stride(1) == 1
    f = x.new_full((2,), 7.0)
    assert f.dtype == x.dtype and f.device == x.device and f.tolist() == [7.0, 7.0]
    assert x.new_empty(3).shape == (3,)
    i = x.type_as(idx([1], device))
    assert i.dtype == gpugrad.int64 and not i.requires_grad and i.grad_fn is None
    assert not x.long().requires_grad and x.double().requires_grad
    y = t([1.0, np.nan, np.inf], device)
    assert gpugrad.isnan(y).tolist() == [False, True, False]
    assert gpugrad.isinf(y).tolist() == [False, False, True]
    assert gpugrad.isfinite(y).tolist() == [True, False, False]
    assert gpugrad.any(y > 1).item() is True and gpugrad.all(y > 0).item() is False   # nan
    assert gpugrad.logical_and(y > 0, y < 2).tolist() == [True, False, False]


def test_values_indices_results_print_as_pytorchs_return_types():
    x = t([[1.0, 3.0], [2.0, 0.0]])
    r = x.max(1)
    assert repr(r) == ("gpugrad.return_types.max(\nvalues=tensor([3., 2.], "
                       "dtype=gpugrad.float64),\nindices=tensor([1, 0]))")
    assert type(x.topk(1)).__name__ == "topk" and type(x.sort()).__name__ == "sort"
    values, indices = x.min(0)   # still a tuple
    assert values.tolist() == [1.0, 0.0] and indices.tolist() == [0, 1] and r[0] is r.values


def test_type_converts_by_name_or_type():
    x = gpugrad.tensor([1, 2])
    for target in ("torch.FloatTensor", "gpugrad.FloatTensor", _creation.FloatTensor):
        y = x.type(target)
        assert y.dtype == gpugrad.float32 and y.tolist() == [1.0, 2.0]
    assert x.type(gpugrad.float64).dtype == gpugrad.float64
    assert x.type("torch.LongTensor") is x
    assert x.type() == "gpugrad.LongTensor"
    for bad in ("torch.FooTensor", "float", "torch.float32"):
        with pytest.raises(ValueError, match=f"^invalid type: '{bad}'$"):
            x.type(bad)


def test_to_with_copy_returns_a_copy():
    a = gpugrad.tensor([1.0, 2.0])
    b = a.to(gpugrad.float32, copy=True)
    b[0] = 9.0
    assert a.tolist() == [1.0, 2.0]
