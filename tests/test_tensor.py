"""More Tensor methods of PyTorch's API: dtype shorthands, in-place forms of pointwise ops and
shape changes, renorm / narrow_copy / sum_to_size, storage queries, pin_memory, put_ /
index_put_, random fills, apply_ / map_, adjoint, new_empty_strided and the last aliases."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import cuda_available, tensor, to_numpy

import gpugrad


# -- Tensor methods -------------------------------------------------------------------------------
def test_dtype_shorthands():
    x = gpugrad.tensor([1.7, -2.2])
    assert (x.byte().dtype, x.char().dtype, x.short().dtype) == (gpugrad.uint8, gpugrad.int8,
                                                                 gpugrad.int16)
    np.testing.assert_array_equal(to_numpy(x.char()), [1, -2])


@pytest.mark.parametrize("name,ref", [("log_", np.log), ("floor_", np.floor), ("ceil_", np.ceil),
                                      ("trunc_", np.trunc), ("round_", np.round),
                                      ("sign_", np.sign), ("frac_", lambda a: a - np.trunc(a)),
                                      ("sin_", np.sin), ("rsqrt_", lambda a: a ** -0.5),
                                      ("log1p_", np.log1p), ("square_", np.square),
                                      ("exp2_", np.exp2)])
def test_in_place_unary(name, ref, device):
    a = np.array([0.4, 1.5, 2.5, 3.7])
    t = tensor(a, device)
    assert getattr(t, name)() is t
    np.testing.assert_allclose(to_numpy(t), ref(a), rtol=1e-12)
    assert t._version == 1


def test_in_place_unary_records_gradient(device):
    x = tensor([1.0, 2.0], device, requires_grad=True)
    y = x * 1
    y.log_()
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [1.0, 0.5])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation"):
        x.floor_()


def test_in_place_comparisons(device):
    t = tensor([1.0, 2.0, 3.0], device)
    t.ge_(2)
    np.testing.assert_array_equal(to_numpy(t), [0, 1, 1])
    assert t.dtype == gpugrad.float64
    u = tensor([1.0, 2.0, 3.0], device)
    u.eq_(tensor([1.0, 0.0, 3.0], device))
    np.testing.assert_array_equal(to_numpy(u), [1, 0, 1])


def test_in_place_shape_changes(device):
    t = tensor(np.arange(6.0).reshape(2, 3), device)
    assert t.unsqueeze_(0) is t and t.shape == (1, 2, 3)
    assert t.squeeze_().shape == (2, 3)
    t.t_()
    np.testing.assert_array_equal(to_numpy(t), np.arange(6.0).reshape(2, 3).T)
    x = tensor([1.0, 2.0], device, requires_grad=True)
    y = x * 3
    y.unsqueeze_(1)
    assert y.shape == (2, 1) and y.grad_fn.name() == "UnsqueezeBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [3, 3])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x.unsqueeze_(0)


def test_in_place_compound(device):
    t = tensor([1.0, 2.0], device)
    t.lerp_(tensor([3.0, 6.0], device), 0.5)
    np.testing.assert_array_equal(to_numpy(t), [2, 4])
    t.addcmul_(tensor([1.0, 2.0], device), tensor([3.0, 4.0], device), value=2)
    np.testing.assert_array_equal(to_numpy(t), [8, 20])
    t.addcdiv_(tensor([4.0, 5.0], device), tensor([2.0, 10.0], device))
    np.testing.assert_array_equal(to_numpy(t), [10, 20.5])
    t.cumsum_(0)
    np.testing.assert_array_equal(to_numpy(t), [10, 30.5])


def test_renorm_narrow_copy_sum_to_size(device):
    t = tensor([[3.0, 4.0], [0.3, 0.4]], device)
    np.testing.assert_allclose(to_numpy(t.renorm(2, 0, 1.0)),
                               [[0.6 / (1 + 1e-7 / 5) * 1, 0.8 / (1 + 1e-7 / 5)], [0.3, 0.4]],
                               rtol=1e-12)
    c = t.narrow_copy(1, 1, 1)
    c[0, 0] = 99.0
    assert float(t[0, 1]) == 4.0 and c.shape == (2, 1)   # a copy, not a view
    m = tensor(np.arange(6.0).reshape(2, 3), device)
    np.testing.assert_array_equal(to_numpy(m.sum_to_size(1, 3)), [[3, 5, 7]])
    np.testing.assert_array_equal(to_numpy(m.sum_to_size(2, 1)), [[3], [12]])
    np.testing.assert_array_equal(to_numpy(m.sum_to_size(3)), [3, 5, 7])
    with pytest.raises(RuntimeError, match=r"size \{\[3, 3\]\} is not expandable to size "
                                           r"\{\[2, 3\]\}\."):
        m.sum_to_size(3, 3)


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


def test_put_and_index_put(device):
    t = tensor(np.arange(6.0).reshape(2, 3), device)
    t.put_(tensor([0, -1], device, gpugrad.int64), tensor([10.0, 20.0], device))
    np.testing.assert_array_equal(to_numpy(t), [[10, 1, 2], [3, 4, 20]])
    t.put_(tensor([1, 1], device, gpugrad.int64), tensor([1.0, 2.0], device), accumulate=True)
    np.testing.assert_array_equal(to_numpy(t), [[10, 4, 2], [3, 4, 20]])
    with pytest.raises(IndexError, match="out of range: tried to access index 6 on a tensor of "
                                         "6 elements."):
        t.put_(tensor([6], device, gpugrad.int64), tensor([1.0], device))
    u = tensor(np.zeros((2, 3)), device)
    rows, cols = tensor([0, 1, 0], device, gpugrad.int64), tensor([2, 0, 2], device, gpugrad.int64)
    u.index_put_((rows, cols), tensor([1.0, 2.0, 3.0], device), accumulate=True)
    np.testing.assert_array_equal(to_numpy(u), [[0, 0, 4], [2, 0, 0]])
    u.index_put_((u > 1,), tensor(-1.0, device))
    np.testing.assert_array_equal(to_numpy(u), [[0, 0, -1], [-1, 0, 0]])
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 1 with size 3"):
        u.index_put_((rows, rows + 3), tensor(1.0, device))


def test_random_fills(device):
    gpugrad.manual_seed(0)
    g = tensor(np.zeros(4000), device).geometric_(0.25)
    vals = to_numpy(g)
    assert vals.min() >= 1 and np.all(vals == np.round(vals))
    assert abs(vals.mean() - 4.0) < 0.3                     # mean 1 / p
    c = to_numpy(tensor(np.zeros(4000), device).cauchy_(median=2.0))
    assert abs(np.median(c) - 2.0) < 0.15
    ln = to_numpy(tensor(np.zeros(4000), device).log_normal_(mean=0.5, std=0.2))
    assert ln.min() > 0 and abs(np.log(ln).mean() - 0.5) < 0.02
    assert abs(np.log(ln).std() - 0.2) < 0.02
    with pytest.raises(RuntimeError, match=r"geometric_ expects p to be in \(0, 1\), but got "
                                           r"p=1.5"):
        gpugrad.zeros(2).geometric_(1.5)


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
