"""The backward engine: graph shapes (diamonds, shared leaves, deep chains), retain_graph and
the release of saved values, autograd.grad, double backward, backward(inputs=...), node names,
grad modes, printing, creation, and every error of PyTorch's that gpugrad reproduces (first
sentence word for word)."""
from __future__ import annotations

import gc
import re
import sys
import threading
import warnings
import weakref

import numpy as np
import pytest
from conftest import cuda_available, to_numpy

import gpugrad
from tests.autograd._errors import SECOND_BACKWARD, first
from tests.autograd._tensors import t

NONLEAF_GRAD = "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed."


# -- graph shapes -------------------------------------------------------------------------------
def test_diamond_sums_both_paths(device):
    x = t([1.0, 2.0], device, True)
    a = x * 2
    b = x * 3
    out = (a * b).sum()  # 6 x^2
    out.backward()
    np.testing.assert_allclose(to_numpy(x.grad), [12.0, 24.0])


def test_diamond_runs_the_shared_node_once_with_the_summed_gradient(device):
    x = t([1.0, 2.0], device, True)
    y = x.exp()
    seen = []
    y.register_hook(lambda g: seen.append(to_numpy(g)))
    z = (y * y + y * 3).sum()
    z.backward()
    assert len(seen) == 1  # y's node ran once, after both consumers delivered
    ey = np.exp([1.0, 2.0])
    np.testing.assert_allclose(seen[0], 2 * ey + 3)
    np.testing.assert_allclose(to_numpy(x.grad), (2 * ey + 3) * ey)


def test_shared_leaf_has_one_accumulator(device):
    x = t([2.0], device, True)
    w = t([3.0], device, True)
    outs = [x * w, x + w, x * x, x.exp()]
    accs = {id(e[0]) for o in outs for e in o.grad_fn.next_functions
            if type(e[0]).__name__ == "AccumulateGrad" and e[0].variable is x}
    assert len(accs) == 1
    sum(o.sum() for o in outs).backward()
    np.testing.assert_allclose(to_numpy(x.grad), [3.0 + 1.0 + 4.0 + np.exp(2.0)])
    np.testing.assert_allclose(to_numpy(w.grad), [2.0 + 1.0])


def test_accumulator_is_freed_with_the_last_graph():
    x = t([1.0], requires_grad=True)
    ref = weakref.ref((x * 2).grad_fn.next_functions[0][0])
    gc.collect()
    assert ref() is None  # no graph references it any more: it was freed
    acc = (x * 2).grad_fn.next_functions[0][0]
    assert acc.variable is x and (x * 3).grad_fn.next_functions[0][0] is acc


def test_deep_chain_of_100k_ops_backward_without_recursion(device):
    x = t([1.0], device, True)
    y = x
    for _ in range(50_000):
        y = y * 1.0
        y = y + 1.0
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # an engine that recursed per node could not get through
    try:
        y.backward()
    finally:
        sys.setrecursionlimit(limit)
    assert to_numpy(x.grad).tolist() == [1.0]
    assert to_numpy(y.detach()).tolist() == [50_001.0]
    del y  # freeing the chain must not recurse either


def test_deep_chain_autograd_grad(device):
    x = t(1.0, device, True)
    y = x
    for _ in range(20_000):
        y = y * 1.0001
    g, = gpugrad.autograd.grad(y, x)
    assert g.item() == pytest.approx(1.0001 ** 20_000)


def test_multiple_roots_and_grad_tensors(device):
    x = t([1.0, 2.0], device, True)
    a, b = x * 2, x * x
    gpugrad.autograd.backward([a, b], [t([1.0, 1.0], device), t([0.5, 2.0], device)])
    np.testing.assert_allclose(to_numpy(x.grad), [2 + 0.5 * 2, 2 + 2.0 * 4])


# -- retain_graph and release ---------------------------------------------------------------------
def test_retain_graph_allows_repeated_backward(device):
    x = t([1.0, 2.0], device, True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(to_numpy(x.grad), [6.0, 12.0])
    with pytest.raises(RuntimeError, match=first(SECOND_BACKWARD)) as err:
        y.backward()
    assert "(node: SumBackward0" in str(err.value)  # the root: the first released node reached


def test_second_backward_raises_even_for_nodes_that_saved_nothing(device):
    # design decision: unlike PyTorch (which raises only when a freed *saved* value is read),
    # gpugrad always refuses to run a released node, and names it
    a = t([1.0], device, True)
    b = a + 1
    b.backward()
    with pytest.raises(RuntimeError, match=first(SECOND_BACKWARD)) as err:
        b.backward()
    assert "(node: AddBackward0" in str(err.value)
    assert to_numpy(a.grad).tolist() == [1.0]


def test_second_autograd_grad_raises(device):
    x = t([1.0], device, True)
    y = (x * 3).sum()
    gpugrad.autograd.grad(y, x)
    with pytest.raises(RuntimeError, match=first(SECOND_BACKWARD)):
        gpugrad.autograd.grad(y, x)


def test_saved_output_is_released_by_backward():
    gc.disable()  # refcounts alone must free it: no cycles keep the graph alive
    try:
        x = t([1.0, 2.0], requires_grad=True)
        y = x.exp()
        node = y.grad_fn
        assert type(node).__name__ == "ExpBackward0"
        saved = node._saved[0]
        assert isinstance(saved, np.ndarray)
        ref = weakref.ref(saved)
        loss = y.sum()
        del saved, y
        assert ref() is not None  # held by the node until it runs
        loss.backward()
        assert node._saved is None
        assert ref() is None
    finally:
        gc.enable()


def test_saved_values_are_released_by_del_when_retained():
    gc.disable()
    try:
        x = t([1.0, 2.0], requires_grad=True)
        y = x.exp()
        ref = weakref.ref(y.grad_fn._saved[0])
        inner = x.sin()  # MulBackward0 below saves this intermediate array
        ref_inner = weakref.ref(inner._data)
        loss = (y * inner).sum()
        del y, inner
        loss.backward(retain_graph=True)
        assert ref() is not None and ref_inner() is not None  # retained for another backward
        loss.backward()
        assert ref() is None and ref_inner() is None
    finally:
        gc.enable()


def test_graph_is_freed_with_its_output():
    gc.disable()
    try:
        x = t([1.0, 2.0], requires_grad=True)
        y = x.exp() * x.sin()
        node = weakref.ref(y.grad_fn)
        saved = weakref.ref(y.grad_fn.next_functions[0][0]._saved[0])
        del y
        assert node() is None and saved() is None
    finally:
        gc.enable()


def test_saved_attribute_after_backward_raises():
    x = t([1.0, 2.0], requires_grad=True)
    y = x * x
    np.testing.assert_allclose(to_numpy(y.grad_fn._saved_self), [1.0, 2.0])
    y.sum().backward()
    with pytest.raises(RuntimeError, match=first(SECOND_BACKWARD)):
        y.grad_fn._saved_self


# -- autograd.grad ------------------------------------------------------------------------------
def test_autograd_grad_returns_without_accumulating(device):
    x = t([1.0, 2.0], device, True)
    w = t([3.0, 4.0], device, True)
    gx, gw = gpugrad.autograd.grad((x * w).sum(), [x, w])
    np.testing.assert_allclose(to_numpy(gx), [3.0, 4.0])
    np.testing.assert_allclose(to_numpy(gw), [1.0, 2.0])
    assert x.grad is None and w.grad is None
    assert not gx.requires_grad


def test_autograd_grad_unused_input_error(device):
    x = t([1.0], device, True)
    y = t([2.0], device, True)
    with pytest.raises(RuntimeError, match=first(
            "The differentiated Tensor at index 1 appears to not have been used in the graph. "
            "Set allow_unused=True if this is the desired behavior.")):
        gpugrad.autograd.grad((x * 2).sum(), [x, y])


def test_autograd_grad_allow_unused(device):
    x = t([1.0], device, True)
    y = t([2.0], device, True)
    gx, gy = gpugrad.autograd.grad((x * 2).sum(), [x, y], allow_unused=True)
    assert to_numpy(gx).tolist() == [2.0] and gy is None
    gx, gy = gpugrad.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True)
    assert to_numpy(gy).tolist() == [0.0]


def test_autograd_grad_of_a_non_leaf(device):
    x = t([1.0, 2.0], device, True)
    h = x * 3
    g, = gpugrad.autograd.grad((h * h).sum(), h)
    np.testing.assert_allclose(to_numpy(g), [6.0, 12.0])
    assert x.grad is None


def test_autograd_grad_of_a_zero_dim_graph_returns_a_zero_dim_tensor(device):
    x = t(2.0, device, True)
    g, = gpugrad.autograd.grad(x * x, x)
    assert g.shape == () and g.item() == 4.0
    assert repr(g).startswith("tensor(4.")


def test_create_graph_grad_does_not_alias_the_seed(device):
    x = t([1.0, 2.0], device, True)
    v = t([1.0, 1.0], device)
    (x + 0).backward(v, create_graph=True)
    (x + 0).backward(v)  # accumulates into x.grad in place: must not write into v
    assert to_numpy(v).tolist() == [1.0, 1.0]
    assert to_numpy(x.grad).tolist() == [2.0, 2.0]


def test_leaf_grads_never_alias_user_tensors_or_each_other(device):
    x = t([1.0, 2.0], device, True)
    w = t([3.0, 4.0], device, True)
    (x + w).sum().backward()  # AddBackward0 hands the same gradient to both leaves
    x.grad.add_(100)
    assert to_numpy(w.grad).tolist() == [1.0, 1.0]

    x.grad = w.grad = None
    v = t([1.0, 2.0, 3.0, 4.0], device)
    gpugrad.cat([x, w]).backward(v)  # the leaves' gradients are views of the seed
    x.grad.add_(100)
    w.grad.add_(100)
    assert to_numpy(v).tolist() == [1.0, 2.0, 3.0, 4.0]

    x.grad = None
    kept = []
    x.register_hook(lambda g: kept.append(g))
    (x * 1).sum().backward()
    (x * 1).sum().backward()  # accumulates into x.grad in place
    assert [to_numpy(g).tolist() for g in kept] == [[1.0, 1.0], [1.0, 1.0]]
    assert to_numpy(x.grad).tolist() == [2.0, 2.0]


# -- double backward ------------------------------------------------------------------------------
def test_second_derivative_of_cube(device):
    x = t([1.0, -2.0, 3.0], device, True)
    y = (x ** 3).sum()
    g, = gpugrad.autograd.grad(y, x, create_graph=True)
    assert g.requires_grad
    np.testing.assert_allclose(to_numpy(g), 3 * np.array([1.0, -2.0, 3.0]) ** 2)
    g2, = gpugrad.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(to_numpy(g2), 6 * np.array([1.0, -2.0, 3.0]))


def test_second_derivative_through_backward_create_graph(device):
    x = t(2.0, device, True)
    (x ** 3).backward(create_graph=True)
    g = x.grad
    assert g.item() == 12.0 and g.requires_grad
    x.grad = None
    g.backward()
    assert x.grad.item() == 12.0  # 6x


def test_third_derivative(device):
    x = t(1.5, device, True)
    y = x.sin() * x
    g1, = gpugrad.autograd.grad(y, x, create_graph=True)
    g2, = gpugrad.autograd.grad(g1, x, create_graph=True)
    g3, = gpugrad.autograd.grad(g2, x)
    v = 1.5
    assert g3.item() == pytest.approx(-3 * np.sin(v) - v * np.cos(v))


# -- backward(inputs=...) and errors at the roots ---------------------------------------------
def test_backward_inputs_accumulates_only_those(device):
    x = t([2.0], device, True)
    w = t([3.0], device, True)
    (x * w).sum().backward(inputs=[x])
    assert to_numpy(x.grad).tolist() == [3.0] and w.grad is None
    h = x * 2
    (h * h).sum().backward(inputs=[h])
    assert to_numpy(h.grad).tolist() == [8.0]
    assert to_numpy(x.grad).tolist() == [3.0]


def test_backward_on_non_scalar_needs_gradient(device):
    x = t([1.0, 2.0, 3.0], device, True)
    with pytest.raises(RuntimeError, match=first(
            "grad can be implicitly created only for scalar outputs")):
        (x * 2).backward()
    (x * 2).backward(t([1.0, 0.5, 0.0], device))
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 1.0, 0.0])


def test_backward_gradient_shape_mismatch(device):
    x = t([1.0, 2.0, 3.0], device, True)
    with pytest.raises(RuntimeError, match=first(
            "Mismatch in shape: grad_output[0] has a shape of gpugrad.Size([4]) and output[0] "
            "has a shape of gpugrad.Size([3]).")):
        (x * 2).backward(t([1.0, 1.0, 1.0, 1.0], device))


def test_backward_on_tensor_without_graph(device):
    with pytest.raises(RuntimeError, match=first(
            "element 0 of tensors does not require grad and does not have a grad_fn")):
        t([1.0], device).sum().backward()


@pytest.mark.gpu
@pytest.mark.skipif(not cuda_available(), reason="needs a CUDA device next to the CPU")
def test_device_mismatch_error():
    a = t([1.0], "cuda", True)
    b = t([2.0], "cpu")
    with pytest.raises(RuntimeError, match=first(
            "Expected all tensors to be on the same device, but found at least two devices, "
            "cuda:0 and cpu!")):
        a * b


def test_backward_inside_no_grad_still_works(device):
    x = t([1.0, 2.0], device, True)
    y = (x * x).sum()
    with gpugrad.no_grad():
        y.backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 4.0])


# -- gradients at the edges of an op's domain, node names -----------------------------------
def test_std_of_a_constant_has_zero_gradient(device):
    x = t([[1.0, 1.0], [2.0, 3.0]], device, True)
    (x.std(1).sum() + x.std()).backward()
    g = to_numpy(x.grad)
    assert np.isfinite(g).all()
    s = np.std([1, 1, 2, 3], ddof=1)
    np.testing.assert_allclose(g[0], [(1 - 1.75) / (3 * s)] * 2)  # only the overall std
    x = t([2.0, 2.0, 2.0], device, True)
    gx, = gpugrad.autograd.grad(x.std(), x, create_graph=True)
    assert to_numpy(gx).tolist() == [0.0, 0.0, 0.0]


def test_var_without_degrees_of_freedom_gives_nan_not_an_exception(device):
    x = t([1.0], device, True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        v = x.var()
        v.backward()
        assert np.isnan(v.item()) and np.isnan(to_numpy(x.grad)).all()
        s = t([1.0], device, True).std()
        assert np.isnan(s.item())


def test_indexing_node_is_named_after_the_last_component(device):
    x = t(np.zeros((2, 3, 4)), device, True)
    names = [x[idx].grad_fn.name() for idx in
             [(0,), (slice(None), 1), (Ellipsis, 1), (slice(1, None), 0), (0, slice(1, None)),
              (slice(None),), (slice(None), slice(None), slice(None, None, 2)), (0, 1, 2),
              ([0, 1],), (0, [1])]]
    assert names == [
        "SelectBackward0", "SelectBackward0", "SelectBackward0", "SelectBackward0",
        "SliceBackward0", "SliceBackward0", "SliceBackward0", "SelectBackward0",
        "IndexBackward0", "IndexBackward0"]


def test_basic_index_records_one_view_node_per_component(device):
    # PyTorch applies x[a, b, ...] left to right, one view op per non-trivial component
    x = t(np.arange(12.0).reshape(3, 4), device, True)

    def chain(y):
        names, node = [], y.grad_fn
        while node.name() != "torch::autograd::AccumulateGrad":
            names.append(node.name())
            node = node.next_functions[0][0]
        return names

    assert chain(x[0, 1:]) == ["SliceBackward0", "SelectBackward0"]
    assert chain(x[None, 0, 1:, None]) == [
        "UnsqueezeBackward0", "SliceBackward0", "SelectBackward0", "UnsqueezeBackward0"]
    assert chain(x[..., None, 1]) == ["SelectBackward0", "UnsqueezeBackward0"]
    assert chain(x[None]) == ["UnsqueezeBackward0"]
    assert chain(x[:, 1]) == ["SelectBackward0"]
    y = x[1:, ::2, None]
    assert chain(y) == ["UnsqueezeBackward0", "SliceBackward0", "SliceBackward0"]
    assert y.shape == (2, 2, 1) and to_numpy(y)[:, :, 0].tolist() == [[4.0, 6.0], [8.0, 10.0]]
    (x[0, 1:] * 2).sum().backward()
    assert to_numpy(x.grad).tolist() == [[0, 2, 2, 2], [0, 0, 0, 0], [0, 0, 0, 0]]
    with pytest.raises(IndexError, match=r"^index 5 is out of bounds for dimension 1 with size 4"):
        x[0, 5]


def test_scalar_rsub_has_one_edge(device):
    x = t([1.0], device, True)
    y = 1 - x
    assert y.grad_fn.name() == "RsubBackward1"
    assert len(y.grad_fn.next_functions) == 1
    y.sum().backward()
    assert to_numpy(x.grad).tolist() == [-1.0]


def test_reshape_of_non_contiguous_records_clone_and_unsafe_view(device):
    x = t(np.arange(6.0).reshape(2, 3), device, True)
    y = x.t().reshape(6)
    assert y.grad_fn.name() == "UnsafeViewBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "CloneBackward0"
    assert x.reshape(3, 2).grad_fn.name() == "ViewBackward0"
    y.sum().backward()
    assert to_numpy(x.grad).tolist() == [[1.0] * 3] * 2


# -- grad modes -----------------------------------------------------------------------------------
def test_no_grad_outputs_and_restoration(device):
    x = t([1.0], device, True)
    with gpugrad.no_grad():
        y = x * 2
        with gpugrad.enable_grad():
            z = x * 2
        assert not gpugrad.is_grad_enabled()
    assert gpugrad.is_grad_enabled()
    assert (y.requires_grad, y.grad_fn, y.is_leaf) == (False, None, True)
    assert z.requires_grad and z.grad_fn is not None


def test_grad_mode_restored_after_exceptions():
    with pytest.raises(ValueError):
        with gpugrad.no_grad():
            raise ValueError
    assert gpugrad.is_grad_enabled()
    with pytest.raises(ValueError):
        with gpugrad.set_grad_enabled(False):
            raise ValueError
    assert gpugrad.is_grad_enabled()
    with pytest.raises(ValueError):
        with gpugrad.inference_mode():
            raise ValueError
    assert gpugrad.is_grad_enabled() and not gpugrad.is_inference_mode_enabled()

    @gpugrad.no_grad()
    def fails():
        raise KeyError

    with pytest.raises(KeyError):
        fails()
    assert gpugrad.is_grad_enabled()


def test_grad_mode_is_thread_local():
    seen = {}
    x = t([1.0], requires_grad=True)

    def worker():
        seen["enabled"] = gpugrad.is_grad_enabled()
        seen["records"] = (x * 2).requires_grad

    with gpugrad.no_grad():
        th = threading.Thread(target=worker)
        th.start()
        th.join()
        assert not (x * 2).requires_grad
    assert seen == {"enabled": True, "records": True}

    def worker_off():
        gpugrad.set_grad_enabled(False)
        seen["inner"] = gpugrad.is_grad_enabled()

    th = threading.Thread(target=worker_off)
    th.start()
    th.join()
    assert seen["inner"] is False and gpugrad.is_grad_enabled()


def test_grad_mode_decorators():
    x = t([1.0], requires_grad=True)

    @gpugrad.no_grad()
    def called(a):
        return a * 2

    @gpugrad.no_grad
    def bare(a):
        return a * 2

    @gpugrad.set_grad_enabled(False)
    def switched_off(a):
        return a * 2

    @gpugrad.enable_grad()
    def switched_on(a):
        return a * 2

    @gpugrad.inference_mode()
    def inferred(a):
        return a * 2

    assert gpugrad.is_grad_enabled()  # decorating switched nothing
    for fn in (called, bare, switched_off, inferred):
        assert not fn(x).requires_grad, fn.__name__
        assert gpugrad.is_grad_enabled()
    with gpugrad.no_grad():
        assert switched_on(x).requires_grad
    assert called.__name__ == "called" and bare.__name__ == "bare"


def test_inference_mode(device):
    x = t([1.0], device, True)
    with gpugrad.inference_mode():
        assert gpugrad.is_inference_mode_enabled() and not gpugrad.is_grad_enabled()
        y = x * 2
        c = gpugrad.ones(1, device=device)
    assert not y.requires_grad and y.is_inference() and c.is_inference()
    assert not x.is_inference()
    with gpugrad.inference_mode(False):
        assert not gpugrad.is_inference_mode_enabled() and gpugrad.is_grad_enabled()
    (x + c).sum().backward()  # AddBackward0 saves nothing: allowed
    with pytest.raises(RuntimeError, match=first(
            "Inference tensors cannot be saved for backward. Please do not use Tensors created "
            "in inference mode in computation tracked by autograd.")):
        x * c


# -- printing -----------------------------------------------------------------------------------
def test_tensor_reprs():
    x = gpugrad.arange(4.0)
    assert repr(x) == "tensor([0., 1., 2., 3.])"
    x.requires_grad = True
    assert repr(x) == "tensor([0., 1., 2., 3.], requires_grad=True)"
    y = 2 * gpugrad.dot(x, x)
    assert repr(y) == "tensor(28., grad_fn=<MulBackward0>)"
    assert repr(x * 2) == "tensor([0., 2., 4., 6.], grad_fn=<MulBackward0>)"
    m = gpugrad.tensor([[1.5, 2.0], [3.0, 4.0]], requires_grad=True)
    assert repr(m) == ("tensor([[1.5000, 2.0000],\n"
                       "        [3.0000, 4.0000]], requires_grad=True)")
    assert repr(gpugrad.tensor([[1.0, 2.0], [3.0, 4.0]])) == ("tensor([[1., 2.],\n"
                                                              "        [3., 4.]])")
    assert repr(gpugrad.zeros(2, dtype=gpugrad.float64)) == (
        "tensor([0., 0.], dtype=gpugrad.float64)")
    assert repr(gpugrad.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(gpugrad.tensor([True, False])) == "tensor([ True, False])"
    assert repr(gpugrad.tensor(3.0)) == "tensor(3.)"
    assert repr(gpugrad.tensor([1e-5, 1.0])) == "tensor([1.0000e-05, 1.0000e+00])"
    assert repr(gpugrad.tensor([4.0], requires_grad=True) * 1) == (
        "tensor([4.], grad_fn=<MulBackward0>)")


def test_tensor_reprs_of_nonfinite_zero_and_large_tensors():
    nan, inf = float("nan"), float("inf")
    assert repr(gpugrad.tensor([nan, 1.0, inf, -inf])) == "tensor([nan, 1., inf, -inf])"
    assert repr(gpugrad.tensor([-0.0, 0.0])) == "tensor([-0., 0.])"
    assert repr(gpugrad.tensor([-1.5, 2.25, 3.0])) == "tensor([-1.5000,  2.2500,  3.0000])"
    assert repr(gpugrad.tensor([[1, -20], [300, 4]])) == ("tensor([[  1, -20],\n"
                                                          "        [300,   4]])")
    assert repr(gpugrad.arange(2000.0)) == (
        "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
        "        1.9990e+03])")
    assert repr(gpugrad.arange(8.0).reshape(2, 2, 2)) == (
        "tensor([[[0., 1.],\n         [2., 3.]],\n\n        [[4., 5.],\n         [6., 7.]]])")
    assert repr(gpugrad.zeros(2, 0)) == "tensor([], size=(2, 0))"


def test_size_repr_and_str_formatting():
    x = gpugrad.zeros(2, 3)
    assert repr(x.shape) == "gpugrad.Size([2, 3])" and x.shape == (2, 3)
    assert f"{gpugrad.tensor(0.5):.2f}" == "0.50"
    assert str(gpugrad.tensor([1.0])) == repr(gpugrad.tensor([1.0]))


# -- creation -----------------------------------------------------------------------------------
def test_creation_dtypes():
    assert gpugrad.tensor([1.0]).dtype == gpugrad.float32
    assert gpugrad.tensor([1]).dtype == gpugrad.int64
    assert gpugrad.tensor([True]).dtype == gpugrad.bool
    assert gpugrad.tensor(np.array([1.0])).dtype == gpugrad.float64  # numpy keeps its dtype
    assert gpugrad.zeros(2).dtype == gpugrad.float32
    assert gpugrad.ones(2, dtype=gpugrad.float64).dtype == gpugrad.float64
    assert gpugrad.randn(2).dtype == gpugrad.float32
    assert gpugrad.arange(3).dtype == gpugrad.int64
    assert gpugrad.arange(3.0).dtype == gpugrad.float32
    assert gpugrad.full((2,), 7).dtype == gpugrad.int64
    assert gpugrad.full((2,), 7.0).dtype == gpugrad.float32
    assert gpugrad.zeros_like(gpugrad.zeros(2, dtype=gpugrad.float64)).dtype == gpugrad.float64
    assert gpugrad.get_default_dtype() == gpugrad.float32


def test_set_default_dtype():
    gpugrad.set_default_dtype(gpugrad.float64)
    assert gpugrad.tensor([1.0]).dtype == gpugrad.float64
    assert gpugrad.zeros(1).dtype == gpugrad.float64
    assert gpugrad.randn(1).dtype == gpugrad.float64
    assert gpugrad.tensor([1]).dtype == gpugrad.int64
    with pytest.raises(TypeError):
        gpugrad.set_default_dtype(gpugrad.int64)
    # the autouse fixture in conftest.py restores float32 afterwards


def test_manual_seed_determinism(device):
    gpugrad.manual_seed(123)
    a = to_numpy(gpugrad.randn(3, 2, device=device))
    b = to_numpy(gpugrad.rand(4, device=device))
    gpugrad.manual_seed(123)
    np.testing.assert_array_equal(to_numpy(gpugrad.randn(3, 2, device=device)), a)
    np.testing.assert_array_equal(to_numpy(gpugrad.rand(4, device=device)), b)
    assert not np.array_equal(to_numpy(gpugrad.randn(3, 2, device=device)), a)
    g = gpugrad.Generator(device).manual_seed(5)
    c = to_numpy(gpugrad.randn(3, generator=g, device=device))
    g.manual_seed(5)
    np.testing.assert_array_equal(to_numpy(gpugrad.randn(3, generator=g, device=device)), c)


def test_randn_shapes(device):
    a = gpugrad.randn(size=(), device=device)
    assert a.shape == () and a.dim() == 0
    assert gpugrad.randn(2, 3, device=device).shape == (2, 3)
    assert gpugrad.randn((2, 3), device=device).shape == (2, 3)
    assert gpugrad.zeros(size=(4,), device=device).shape == (4,)
    r = gpugrad.randn(3, requires_grad=True, device=device)
    assert r.requires_grad and r.is_leaf


def test_tensor_from_data_copies(device):
    a = np.array([1.0, 2.0])
    x = gpugrad.tensor(a, device=device)
    a[0] = 9.0
    assert to_numpy(x).tolist() == [1.0, 2.0]
    assert x.device == gpugrad.device(device) or x.device.type == device


def test_integer_division_and_argmax_stay_integer(device):
    x = gpugrad.tensor([-7, 7, 2 ** 40 + 1], device=device)
    assert (x // 2).dtype == gpugrad.int64
    assert to_numpy(x // 2).tolist() == [-4, 3, 2 ** 39]
    assert to_numpy(gpugrad.div(x, -2, rounding_mode="trunc")).tolist() == [3, -3, -2 ** 39]
    assert to_numpy(x % 3).tolist() == [2, 1, 2] and (x % 3).dtype == gpugrad.int64
    assert to_numpy(gpugrad.tensor([-7.5, 7.5], device=device) // 2).tolist() == [-4.0, 3.0]
    m = gpugrad.tensor([[1.0, 3.0], [4.0, 2.0]], device=device)
    assert m.argmax().item() == 2 and m.argmax().shape == ()
    assert repr(gpugrad.tensor([[1.0, 3.0], [4.0, 2.0]]).argmax()) == "tensor(2)"
    assert to_numpy(m.argmax(1)).tolist() == [1, 0]


# -- attribute errors ---------------------------------------------------------------------------
def test_grad_setter_shape_error(device):
    x = t([1.0, 2.0, 3.0], device, True)
    with pytest.raises(RuntimeError, match=first(
            "attempting to assign a gradient of size '[4]' to a tensor of size '[3]'. Please "
            "ensure that the gradient and the tensor are the same size")):
        x.grad = t([1.0, 1.0, 1.0, 1.0], device)
    x.grad = t([1.0, 1.0, 1.0], device)
    assert to_numpy(x.grad).tolist() == [1.0, 1.0, 1.0]
    x.grad = None
    assert x.grad is None


def test_requires_grad_on_integer_tensor_error(device):
    with pytest.raises(RuntimeError, match=first(
            "Only Tensors of floating point and complex dtype can require gradients")):
        gpugrad.tensor([1, 2], device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="(?i)^only Tensors of floating point"):
        gpugrad.tensor([1, 2], device=device).requires_grad = True


def test_requires_grad_on_non_leaf_error(device):
    y = t([1.0], device, True) * 2
    with pytest.raises(RuntimeError, match=first(
            "you can only change requires_grad flags of leaf variables.")):
        y.requires_grad = False
    assert y.requires_grad_() is y  # asking a non-leaf for what it has is a no-op
    with pytest.raises(RuntimeError, match=first(
            "you can only change requires_grad flags of leaf variables.")):
        y.requires_grad_(False)


def test_non_leaf_grad_warning(device):
    x = t([1.0], device, True)
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning, match=first(NONLEAF_GRAD)):
        assert y.grad is None
    y2 = x * 2
    y2.retain_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert y2.grad is None  # retaining: no warning
        assert x.grad is not None


@pytest.mark.parametrize("make, dtype", [
    (lambda m: m.arange(4) * 1.5, "float32"),
    (lambda m: m.ones(3) * m.arange(3), "float32"),
    (lambda m: m.ones(3) * m.tensor(2.0, dtype=m.float64), "float32"),
    (lambda m: m.arange(3) * m.tensor(2.0, dtype=m.float64), "float64"),
    (lambda m: m.ones(3, dtype=m.float64) * m.ones(3), "float64"),
    (lambda m: m.arange(3) + True, "int64"),
    (lambda m: m.arange(3) / 2, "float32"),
    (lambda m: m.ones(2, dtype=m.float16) + 1.0, "float16"),
])
def test_type_promotion_follows_pytorch(make, dtype):
    assert make(gpugrad).dtype == np.dtype(dtype)


def test_promoted_result_sends_gradient_back_in_input_dtype():
    x = gpugrad.ones(3, requires_grad=True)
    y = x * gpugrad.tensor(2.0, dtype=gpugrad.float64)
    y.sum().backward()
    assert y.dtype == np.float32 and x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_operand_of_the_wrong_type_is_a_type_error():
    with pytest.raises(TypeError, match="unsupported operand type"):
        gpugrad.ones(2) * "a"
    with pytest.raises(RuntimeError, match=re.escape(
            "The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
            "dimension 0")):
        gpugrad.ones(2) + gpugrad.ones(3)


@pytest.mark.parametrize("make", [
    lambda x, y: (gpugrad.ops.pointwise.arithmetic.MulBackward0, (x, y)),
    lambda x, y: (gpugrad.ops.pointwise.arithmetic.MulBackward0, (x, 2.5)),
    lambda x, y: (gpugrad.ops.pointwise.arithmetic.AddBackward0, (x, y[0])),
    lambda x, y: (gpugrad.ops.pointwise.unary.TanhBackward0, (x,)),
    lambda x, y: (gpugrad.ops.linalg.products.MmBackward0, (x.reshape(2, 3), y.reshape(3, 2))),
])
def test_generated_apply_matches_the_generic_path(make):
    # the specialised apply/_run (ops/_specialize.py) must record exactly what the generic does
    x = gpugrad.randn(6, dtype=gpugrad.float64, requires_grad=True)
    y = gpugrad.randn(6, dtype=gpugrad.float64, requires_grad=True)
    results = []
    for generic in (False, True):
        cls, args = make(x, y)
        out = cls._apply_generic(args, {}) if generic else cls.apply(*args)
        node = out.grad_fn
        assert type(node) is cls
        edges = [(type(n).__name__ if n is not None else None, nr)
                 for n, nr in node.next_functions]
        x.grad = y.grad = None
        out.sum().backward()
        results.append((out.numpy(force=True).tolist(), edges,
                        None if x.grad is None else x.grad.numpy().tolist(),
                        None if y.grad is None else y.grad.numpy().tolist()))
    assert results[0] == results[1]


def test_cat_of_many_tensors_takes_the_generic_path_and_is_correct():
    parts = [gpugrad.randn(2, dtype=gpugrad.float64, requires_grad=True) for _ in range(10)]
    assert gpugrad.autograd.gradcheck(lambda *p: gpugrad.cat(p) * gpugrad.arange(20.0,
                                      dtype=gpugrad.float64), parts)


def test_special_values_are_returned_without_numpy_warnings():
    # log(0), 1/0 and overflow give inf/nan silently, as in PyTorch; numpy called from user
    # code keeps warning. A fresh interpreter with every RuntimeWarning an error proves both.
    import subprocess
    code = """if True:
        import numpy as np, gpugrad
        x = gpugrad.tensor([0.0, 1.0], requires_grad=True)
        y = gpugrad.log(x)
        y.sum().backward()
        q = gpugrad.tensor([1.0, 0.0]) / gpugrad.tensor([0.0, 0.0])
        e = gpugrad.exp(gpugrad.tensor([1000.0]))
        print(y.tolist(), x.grad.tolist(), q.tolist(), e.tolist())
        try:
            np.log(np.zeros(1))
        except RuntimeWarning as w:
            print("user numpy:", w)
    """
    out = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", code],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["[-inf, 0.0] [inf, 1.0] [inf, nan] [inf]",
                   "user numpy: divide by zero encountered in log"]


def test_accumulating_a_used_graph_warns_about_the_leak():
    # `total += loss` after (or before) loss.backward() chains every step's graph into total
    w = gpugrad.tensor([1.0, 2.0], requires_grad=True)
    for backward_first in (True, False):
        total = 0
        with pytest.warns(UserWarning, match=re.escape("`total += loss` chains every step")):
            for _ in range(3):
                loss = (w * w).sum()
                if backward_first:
                    loss.backward()
                    total += loss
                else:
                    total += loss
                    loss.backward()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        total = 0.0
        for _ in range(3):   # the fix: numbers (or detached tensors) carry no graph
            loss = (w * w).sum()
            loss.backward()
            total += loss.item()
        y = w * 2
        y += 1               # an ordinary in-place op on a graph nobody ran backward through
        kept = (w * w).sum()
        kept.backward(retain_graph=True)
        kept += 1            # retained: the graph is still whole


# -- threads ------------------------------------------------------------------------------------
def test_threads_running_backward_into_shared_leaves_lose_no_update():
    """numpy lets go of the GIL inside a large in-place add: without the accumulator's lock two
    threads' ``grad += g`` interleave and updates are lost (hundreds of elements a round)."""
    n, threads, steps = 1 << 20, 4, 10
    for _ in range(4):
        w = gpugrad.zeros(n, dtype=gpugrad.float64, requires_grad=True)
        b = gpugrad.zeros(1, dtype=gpugrad.float64, requires_grad=True)   # first one in wins
        c = gpugrad.arange(n, dtype=gpugrad.float64)
        start = threading.Barrier(threads)

        def work(w, b, c, start):
            start.wait()
            for _ in range(steps):
                (w * c + b).sum().backward()

        pool = [threading.Thread(target=work, args=(w, b, c, start)) for _ in range(threads)]
        for th in pool:
            th.start()
        for th in pool:
            th.join()
        assert np.array_equal(w.grad.numpy(), np.arange(n) * float(threads * steps))
        assert b.grad.item() == n * threads * steps


def test_a_hook_sees_the_backward_of_its_own_thread():
    """A multi-grad hook asks which tensors its backward reaches: while another thread runs a
    backward of its own, the answer is still about this thread's."""
    this_inside, other_inside, this_done = threading.Event(), threading.Event(), threading.Event()
    got = []

    def other():   # starts its backward while this thread's is running, ends after it
        u = gpugrad.ones(2, requires_grad=True)
        v = u * 1
        v.register_hook(lambda g: (other_inside.set(), this_done.wait(10)) and None)
        this_inside.wait(10)
        v.sum().backward()

    x = gpugrad.ones(2, requires_grad=True)
    y = gpugrad.ones(2, requires_grad=True)
    s = x * 2 + y * 3
    s.register_hook(lambda g: (this_inside.set(), other_inside.wait(10)) and None)
    gpugrad.autograd.graph.register_multi_grad_hook(
        (x, y), lambda grads: got.append([g.tolist() for g in grads]))
    th = threading.Thread(target=other)
    th.start()
    try:
        s.sum().backward()
    finally:
        this_done.set()
        th.join()
    assert got == [[[2.0, 2.0], [3.0, 3.0]]]
