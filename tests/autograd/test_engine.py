"""The backward engine and everything around it: graph shapes (diamonds, shared leaves, deep
chains), retain_graph and the release of saved values, autograd.grad, double backward, hooks,
grad modes, in-place semantics, custom Functions, anomaly mode, gradcheck, printing, creation,
and every error of PyTorch's that gpugrad reproduces (first sentence word for word)."""
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
from gpugrad.autograd import Function, GradcheckError, gradcheck, once_differentiable

SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_INPLACE = ("a view of a leaf Variable that requires grad is being used in an "
                        "in-place operation.")
NONLEAF_GRAD = "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed."


def first(sentence: str) -> str:
    """A ``match=`` pattern: the message starts with ``sentence``, verbatim."""
    return "^" + re.escape(sentence)


def t(data, device="cpu", requires_grad=False, dtype=gpugrad.float64):
    return gpugrad.tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


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


# -- hooks ------------------------------------------------------------------------------------
def test_tensor_hook_replaces_the_gradient(device):
    x = t(1.0, device, True)
    y = x * 2
    y.register_hook(lambda g: g * 10)
    (y * 1).backward()
    assert x.grad.item() == 20.0


def test_leaf_hook_replaces_before_accumulation_and_remove(device):
    x = t(1.0, device, True)
    handle = x.register_hook(lambda g: g * 10)
    (x * 2).backward()
    assert x.grad.item() == 20.0
    handle.remove()
    (x * 2).backward()
    assert x.grad.item() == 22.0
    handle.remove()  # removing twice is harmless


def test_hook_returning_none_keeps_the_gradient(device):
    x = t(1.0, device, True)
    seen = []
    x.register_hook(lambda g: seen.append(g.item()))
    (x * 3).backward()
    assert seen == [3.0] and x.grad.item() == 3.0


def test_hook_order_matches_pytorch(device):
    log = []
    x = t(1.0, device, True)
    y = x * 2
    z = y * y
    z.grad_fn.register_prehook(lambda go: log.append(("pre", go[0].item())))
    z.grad_fn.register_hook(lambda gi, go: log.append(("post", gi[0].item(), go[0].item())))
    y.register_hook(lambda g: log.append(("y", g.item())))
    x.register_hook(lambda g: log.append(("x", g.item())))
    x.register_post_accumulate_grad_hook(lambda v: log.append(("acc", v.grad.item())))
    z.backward()
    assert log == [("pre", 1.0), ("post", 2.0, 1.0), ("y", 4.0), ("x", 8.0), ("acc", 8.0)]


def test_node_hooks_may_replace_gradients(device):
    x = t(1.0, device, True)
    y = x * 3
    y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
    y.backward()
    assert x.grad.item() == 6.0
    x.grad = None
    y = x * 3
    handle = y.grad_fn.register_hook(lambda gi, go: (gi[0] * 5, gi[1]))
    y.backward(retain_graph=True)
    assert x.grad.item() == 15.0
    handle.remove()
    y.backward()
    assert x.grad.item() == 18.0


@pytest.mark.parametrize("retain_first", [True, False])
def test_retain_grad_stores_the_post_hook_value(device, retain_first):
    x = t(1.0, device, True)
    y = x * 2
    if retain_first:
        y.retain_grad()
    y.register_hook(lambda g: g * 10)
    if not retain_first:
        y.retain_grad()
    (y * 1).backward()
    assert y.grad.item() == 10.0
    assert x.grad.item() == 20.0


def test_post_accumulate_grad_hook_sees_the_final_grad(device):
    x = t([1.0], device, True)
    seen = []
    x.register_post_accumulate_grad_hook(lambda v: seen.append(to_numpy(v.grad).tolist()))
    (x * 2 + x * 3).sum().backward()
    assert seen == [[5.0]]  # once, after both paths were summed
    with pytest.raises(RuntimeError):
        (x * 2).register_post_accumulate_grad_hook(lambda v: None)


def test_hook_errors_on_tensors_without_grad(device):
    x = t([1.0], device)
    with pytest.raises(RuntimeError, match=first(
            "cannot register a hook on a tensor that doesn't require gradient")):
        x.register_hook(lambda g: g)
    with pytest.raises(RuntimeError, match=first(
            "can't retain_grad on Tensor that has requires_grad=False")):
        x.retain_grad()


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


# -- in-place ---------------------------------------------------------------------------------
def test_version_counter(device):
    a = t([1.0, 2.0], device)
    assert a._version == 0
    a.add_(1)
    assert a._version == 1
    a.mul_(2)
    a[0] = 5.0
    assert a._version == 3
    b = a + 1
    assert b._version == 0


def legacy_type(device, name):
    """PyTorch's legacy type name in its messages: torch.FloatTensor, torch.cuda.FloatTensor."""
    return f"gpugrad.{'cuda.' if device.startswith('cuda') else ''}{name}"


def test_modified_by_inplace_error(device):
    x = t([1.0, 2.0, 3.0], device, True, dtype=gpugrad.float32)
    y = x.sigmoid()
    y.mul_(2)
    with pytest.raises(RuntimeError, match=first(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{legacy_type(device, 'FloatTensor')} [3]], which is output 0 "
            "of Sigmoid, is at "
            "version 1; expected version 0 instead.")) as err:
        y.sum().backward()
    assert "Hint: enable anomaly detection" in str(err.value)


def test_modified_by_inplace_through_detach(device):
    x = t([1.0, 2.0], device, True)
    y = x.exp()
    d = y.detach()
    d.zero_()
    with pytest.raises(RuntimeError, match=first(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{legacy_type(device, 'DoubleTensor')} [2]], which is output 0 "
            "of Exp, is at "
            "version 1; expected version 0 instead.")):
        y.sum().backward()


def test_modified_saved_input_error(device):
    x = t([1.0, 2.0], device, True)
    h = x * 1
    z = h * h
    h.add_(1)
    with pytest.raises(RuntimeError, match=first(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{legacy_type(device, 'DoubleTensor')} [2]]")):
        z.sum().backward()


def test_inplace_on_leaf_errors(device):
    x = t([1.0, 2.0], device, True)
    with pytest.raises(RuntimeError, match=first(LEAF_INPLACE)):
        x.add_(1)
    with pytest.raises(RuntimeError, match=first(LEAF_INPLACE)):
        x += 1
    with pytest.raises(RuntimeError, match=first(VIEW_OF_LEAF_INPLACE)):
        x[0:1].mul_(2)
    with pytest.raises(RuntimeError, match=first(VIEW_OF_LEAF_INPLACE)):
        x[0] = 2.0
    assert x._version == 0 and to_numpy(x).tolist() == [1.0, 2.0]


def test_inplace_allowed_under_no_grad(device):
    x = t([1.0, 2.0], device, True)
    g = t([0.5, 0.5], device)
    with gpugrad.no_grad():
        x.sub_(g)
        x[0] = 3.0
        x.mul_(2)
    assert x.requires_grad and x.is_leaf and x.grad_fn is None
    assert x._version == 3
    np.testing.assert_allclose(to_numpy(x), [6.0, 3.0])
    (x * x).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [12.0, 6.0])


def test_setitem_records_copyslices_gradients(device):
    x = t([1.0, 2.0, 3.0], device, True)
    v = t(5.0, device, True)
    y = x * 2
    y[1] = v * 3
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    assert type(y.grad_fn).__name__ == "CopySlices"
    np.testing.assert_allclose(to_numpy(y), [2.0, 15.0, 6.0])
    (y * t([1.0, 2.0, 3.0], device)).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 0.0, 6.0])
    assert v.grad.item() == 6.0


def test_setitem_gradcheck(device):
    def f(x, v):
        y = x.clone()
        y[:, 1:] = v
        y[0, 0] = v[0, 0] * v[1, 1]
        return y * y

    x = t(np.arange(6.0).reshape(2, 3), device, True)
    v = t([[0.5, 1.5], [2.5, -1.0]], device, True)
    assert gradcheck(f, (x, v))
    assert gpugrad.autograd.gradgradcheck(f, (x, v))


def test_inplace_on_view_of_non_leaf_updates_the_base(device):
    def f(x):
        b = x * 1
        v = b.t()[1]          # a view of a view
        v.exp_()
        b[0, 0] = b[0, 0] * 2
        return b * t([[1.0, 2.0], [3.0, 4.0]], device)

    x = t([[0.1, 0.2], [0.3, 0.4]], device, True)
    out = f(x)
    ref = np.array([[0.2, np.exp(0.2)], [0.3, np.exp(0.4)]]) * [[1.0, 2.0], [3.0, 4.0]]
    np.testing.assert_allclose(to_numpy(out), ref)
    out.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad),
                               [[2.0, 2 * np.exp(0.2)], [3.0, 4 * np.exp(0.4)]])
    assert gradcheck(f, (x,))
    assert gpugrad.autograd.gradgradcheck(f, (x,))


def test_sibling_view_sees_the_inplace_update(device):
    x = t([1.0, 2.0, 3.0], device, True)
    y = x * 1
    v = y[1:]
    w = y[:2]
    v.mul_(2)
    np.testing.assert_allclose(to_numpy(w), [1.0, 4.0])
    (w * w).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 16.0, 0.0])


def test_inplace_on_an_input_whose_value_no_gradient_reads(device):
    # x * c (c constant) reads only c for x's gradient: x may change in place afterwards,
    # as in PyTorch, which saves only what the needed gradients read
    x = t([1.0, 2.0], device, True)
    c = t([3.0, 4.0], device)
    m = t([[1.0, 2.0], [3.0, 4.0]], device)
    for f, want in ((lambda h: h * 2, [2.0, 2.0]), (lambda h: c * h, [3.0, 4.0]),
                    (lambda h: h / 2, [0.5, 0.5]), (lambda h: h @ m, [3.0, 7.0]),
                    (lambda h: gpugrad.dot(h, c), [3.0, 4.0])):
        x.grad = None
        h = x * 1
        out = f(h)
        h.add_(1)
        out.sum().backward()
        np.testing.assert_allclose(to_numpy(x.grad), want)
    h = x * 1
    out = c / h  # the divisor is read for its own gradient
    h.add_(1)
    with pytest.raises(RuntimeError, match=first(
            "one of the variables needed for gradient computation has been modified by an "
            "inplace operation")):
        out.sum().backward()


def test_inplace_on_a_value_read_by_its_own_op(device):
    x = t([1.0, 2.0, 3.0], device, True)
    y = x * 1
    y.mul_(y)  # the node keeps its own copy of the overwritten input
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 4.0, 6.0])


def test_detach_shares_storage_and_version(device):
    x = t([1.0, 2.0], device, True)
    y = x * 1
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    d[0] = 5.0
    assert to_numpy(y).tolist() == [5.0, 2.0]
    assert y._version == d._version == 1
    d.add_(1)
    assert y._version == 2


def test_detach_inplace(device):
    x = t([1.0], device, True)
    y = x * 2
    y.detach_()
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf


# -- custom Function ----------------------------------------------------------------------------
def test_function_needs_input_grad(device):
    seen = []

    class F(Function):
        @staticmethod
        def forward(ctx, a, b, k):
            seen.append(ctx.needs_input_grad)
            return a * b * k

        @staticmethod
        def backward(ctx, g):
            seen.append(ctx.needs_input_grad)
            return g * 2, None, None

    a, b = t([1.0], device, True), t([1.0], device)
    F.apply(a, b, 3).sum().backward()
    assert seen == [(True, False, False), (True, False, False)]
    assert a.grad.item() == 2.0


def test_function_mark_dirty(device):
    class Double(Function):
        @staticmethod
        def forward(ctx, a):
            a.mul_(2)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = t([1.0, 2.0], device, True)
    y = x * 1
    z = Double.apply(y)
    assert z is y and y.grad_fn.name() == "DoubleBackward"
    assert y._version >= 1
    np.testing.assert_allclose(to_numpy(y), [2.0, 4.0])
    z.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 2.0])
    with pytest.raises(RuntimeError, match=first("a leaf Variable that requires grad")):
        Double.apply(t([1.0], device, True))


def test_function_mark_non_differentiable(device):
    class SortLike(Function):
        @staticmethod
        def forward(ctx, a):
            idx = a.argmax()
            flag = a * 0
            ctx.mark_non_differentiable(idx, flag)
            return a * 2, idx, flag

        @staticmethod
        def backward(ctx, g, g_idx, g_flag):
            assert g_flag is not None and not to_numpy(g_flag).any()  # materialized zeros
            return g * 2

    x = t([1.0, 3.0], device, True)
    y, idx, flag = SortLike.apply(x)
    assert y.requires_grad
    assert not idx.requires_grad and not flag.requires_grad and flag.grad_fn is None
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 2.0])


@pytest.mark.parametrize("materialize", [True, False])
def test_function_set_materialize_grads(device, materialize):
    seen = []

    class Two(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(materialize)
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append(g2)
            return g1 * 2 if g2 is None else g1 * 2 + g2 * 3

    x = t([1.0, 1.0], device, True)
    y, _ = Two.apply(x)
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 2.0])
    if materialize:
        assert to_numpy(seen[0]).tolist() == [0.0, 0.0]
    else:
        assert seen == [None]


def test_function_with_two_outputs_gets_both_gradients(device):
    class Split(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    x = t([1.0, 2.0], device, True)
    y, z = Split.apply(x)
    assert y.grad_fn is z.grad_fn and (y.output_nr, z.output_nr) == (0, 1)
    (y * z).sum().backward()  # d/dx 6 x^2 = 12 x
    np.testing.assert_allclose(to_numpy(x.grad), [12.0, 24.0])


class Square(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a ** 2

    @staticmethod
    def backward(ctx, g):
        a, = ctx.saved_tensors
        return g * 2 * a


def test_function_double_backward(device):
    x = t(3.0, device, True)
    g, = gpugrad.autograd.grad(Square.apply(x), x, create_graph=True)
    assert g.item() == 6.0
    g2, = gpugrad.autograd.grad(g, x)
    assert g2.item() == 2.0
    assert gradcheck(Square.apply, (t([1.0, -2.0], device, True),))
    assert gpugrad.autograd.gradgradcheck(Square.apply, (t([1.0, -2.0], device, True),))


def test_once_differentiable(device):
    class Sq(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a ** 2

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            assert not gpugrad.is_grad_enabled()
            a, = ctx.saved_tensors
            return g * 2 * a

    x = t(3.0, device, True)
    y = Sq.apply(x)
    g, = gpugrad.autograd.grad(y, x, create_graph=True)
    assert g.item() == 6.0
    y = Sq.apply(x)
    seed = t(1.0, device, True)
    g, = gpugrad.autograd.grad(y, x, seed, create_graph=True)
    assert g.requires_grad
    with pytest.raises(RuntimeError, match=first(
            "trying to differentiate twice a function that was marked with "
            "@once_differentiable")):
        g.backward()


def test_function_wrong_number_of_gradients(device):
    class F3(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            return g, g

    with pytest.raises(RuntimeError, match=first(
            "function F3Backward returned an incorrect number of gradients (expected 1, "
            "got 2)")):
        F3.apply(t([1.0, 2.0, 3.0], device, True)).sum().backward()


class _Scaled(Function):
    """A Function with a number and a string among its inputs."""
    @staticmethod
    def forward(ctx, k, a, tag):
        ctx.k = k
        return a * k

    @staticmethod
    def backward(ctx, g):
        return None, g * ctx.k, None


def test_function_edges_go_to_tensor_inputs_only(device):
    x = t([1.0, 2.0], device, True)
    y = _Scaled.apply(3.0, x, "tag")
    # as PyTorch: one edge per tensor input; backward still returns one gradient per input
    assert len(y.grad_fn.next_functions) == 1
    assert y.grad_fn.next_functions[0][0].variable is x
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [3.0, 3.0])


def test_function_gradient_for_a_non_tensor_input(device):
    class Wrong(_Scaled):
        @staticmethod
        def backward(ctx, g):
            return g, g * ctx.k, None

    with pytest.raises(RuntimeError, match=first(
            "function WrongBackward returned a gradient different than None at position 1, but "
            "the corresponding forward input was not a Variable")):
        Wrong.apply(3.0, t([1.0], device, True), "tag").sum().backward()
    with pytest.raises(RuntimeError, match=first(
            "function ShortBackward returned an incorrect number of gradients (expected 3, "
            "got 1)")):
        class Short(_Scaled):
            @staticmethod
            def backward(ctx, g):
                return g
        Short.apply(3.0, t([1.0], device, True), "tag").sum().backward()


def test_function_wrong_gradient_shape(device):
    class Bad(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            return gpugrad.ones(5, dtype=g.dtype, device=g.device)

    with pytest.raises(RuntimeError, match=first(
            "Function BadBackward returned an invalid gradient at index 0 - got [5] but "
            "expected shape compatible with [3]")):
        Bad.apply(t([1.0, 2.0, 3.0], device, True)).sum().backward()


def test_function_broadcastable_gradient_is_summed(device):
    class Wide(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            return gpugrad.ones(2, 3, dtype=g.dtype, device=g.device)

    x = t([1.0, 2.0, 3.0], device, True)
    Wide.apply(x).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 2.0, 2.0])


def test_save_for_backward_type_error(device):
    class F(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a, 3)
            return a * 1

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(TypeError, match=first(
            "save_for_backward can only save variables, but argument 1 is of type int")):
        F.apply(t([1.0], device, True))


def test_saved_tensors_after_backward(device):
    y = Square.apply(t([1.0, 2.0], device, True))
    assert y.grad_fn.saved_tensors[0].requires_grad
    y.sum().backward()
    with pytest.raises(RuntimeError, match=first(SECOND_BACKWARD)):
        y.grad_fn.saved_tensors


def test_function_without_grad_inputs_records_nothing(device):
    y = Square.apply(t([2.0], device))
    assert not y.requires_grad and y.grad_fn is None
    with gpugrad.no_grad():
        y = Square.apply(t([2.0], device, True))
    assert not y.requires_grad and y.grad_fn is None


def test_function_repr_and_name():
    y = Square.apply(t([2.0], requires_grad=True))
    assert re.fullmatch(r"<gpugrad\.autograd\.function\.SquareBackward object at 0x[0-9a-f]+>",
                        repr(y.grad_fn))
    assert y.grad_fn.name() == "SquareBackward"
    assert repr(y) == "tensor([4.], dtype=gpugrad.float64, grad_fn=<SquareBackward>)"


# -- anomaly mode --------------------------------------------------------------------------------
def test_detect_anomaly_warns_on_entry():
    with pytest.warns(UserWarning, match=first(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.")):
        with gpugrad.autograd.detect_anomaly():
            assert gpugrad.autograd.is_anomaly_enabled()
    assert not gpugrad.autograd.is_anomaly_enabled()


def _make_failing_node(device):
    class MyFunc(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom in backward")

    return MyFunc.apply(t([1.0], device, True))  # the forward call anomaly mode remembers


def test_detect_anomaly_names_the_node_and_its_forward_stack(device):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with gpugrad.autograd.detect_anomaly():
            y = _make_failing_node(device)
    with pytest.warns(UserWarning) as record, gpugrad.autograd.detect_anomaly():
        with pytest.raises(ValueError, match="boom in backward"):
            y.sum().backward()
    msgs = [str(w.message) for w in record]
    hit = [m for m in msgs if m.startswith(
        "Error detected in MyFuncBackward. Traceback of forward call that caused the error:")]
    assert hit, msgs
    assert "_make_failing_node" in hit[0] and "MyFunc.apply" in hit[0]


def test_detect_anomaly_nan_check(device):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with gpugrad.autograd.detect_anomaly():
            x = t([0.0], device, True)
            y = t([0.0], device, True)
            z = x / y
            line = sys._getframe().f_lineno - 1
            with pytest.raises(RuntimeError) as e:
                z.sum().backward()
            # the user's line, not the code gpugrad generates
            assert str(e.value) == ("Function 'DivBackward0' returned nan values in its 1th "
                                    f"output. (created at {__file__}:{line})")
            # as PyTorch, a warning with the forward call's traceback comes first
            [w] = [str(w.message) for w in caught if "Error detected" in str(w.message)]
            assert w.startswith("Error detected in DivBackward0. Traceback of forward call "
                                "that caused the error:\n") and f"line {line}" in w
            with gpugrad.autograd.set_detect_anomaly(True, check_nan=False):
                (x / y).sum().backward()  # NaN gradients pass when the check is off
    assert np.isnan(to_numpy(y.grad)).all()


def test_anomaly_hint_in_inplace_error(device):
    x = t([1.0], device, True)
    y = x.exp()
    y.add_(1)
    with gpugrad.autograd.set_detect_anomaly(True), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="Hint: the backtrace further above"):
            y.sum().backward()


# -- gradcheck ----------------------------------------------------------------------------------
class WrongSquare(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a ** 2

    @staticmethod
    def backward(ctx, g):
        a, = ctx.saved_tensors
        return g * 3 * a  # should be 2 a


def test_gradcheck_catches_a_wrong_backward(device):
    x = t([1.0, 2.0], device, True)
    with pytest.raises(GradcheckError, match=first(
            "Jacobian mismatch for output 0 with respect to input 0,")) as err:
        gradcheck(WrongSquare.apply, (x,))
    assert "numerical:" in str(err.value) and "analytical:" in str(err.value)
    assert isinstance(err.value, RuntimeError)
    assert gradcheck(WrongSquare.apply, (x,), raise_exception=False) is False
    assert gradcheck(Square.apply, (x,))


def test_gradcheck_perturbs_non_contiguous_inputs(device):
    # a transposed (non-contiguous) input: the finite differences must move the tensor's own
    # elements, or the numerical Jacobian is zero and a right backward looks wrong
    a = np.arange(1.0, 7.0).reshape(2, 3).T
    x = gpugrad.tensor(a, dtype=gpugrad.float64, device=device, requires_grad=True)
    assert not x.is_contiguous()
    assert gradcheck(lambda v: (v * v).sum(0), (x,))
    with pytest.raises(GradcheckError):
        gradcheck(WrongSquare.apply, (x,))


def test_gradgradcheck_catches_a_wrong_second_derivative(device):
    class WrongCube(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a ** 3

        @staticmethod
        def backward(ctx, g):
            a, = ctx.saved_tensors
            return g * 3 * (a.detach() ** 2)  # right value, but not differentiable in a

    x = t([1.0, 2.0], device, True)
    assert gradcheck(WrongCube.apply, (x,))
    with pytest.raises(GradcheckError):
        gpugrad.autograd.gradgradcheck(WrongCube.apply, (x,))


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
    lambda x, y: (gpugrad.ops.pointwise.MulBackward0, (x, y)),
    lambda x, y: (gpugrad.ops.pointwise.MulBackward0, (x, 2.5)),
    lambda x, y: (gpugrad.ops.pointwise.AddBackward0, (x, y[0])),
    lambda x, y: (gpugrad.ops.pointwise.TanhBackward0, (x,)),
    lambda x, y: (gpugrad.ops.linalg.MmBackward0, (x.reshape(2, 3), y.reshape(3, 2))),
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


# -- register_multi_grad_hook, increment_version ------------------------------------------------
def _grads_of(calls):
    return lambda grads: calls.append([None if g is None else to_numpy(g).tolist()
                                       for g in grads])


def test_multi_grad_hook_all_waits_for_every_reached_tensor(device):
    from gpugrad.autograd.graph import register_multi_grad_hook
    a, b, c = (t([1.0, 1.0], device, True) for _ in range(3))
    calls = []
    handle = register_multi_grad_hook((a, b, c), _grads_of(calls))
    (a * 2 + b * 3).sum().backward()
    assert calls == [[[2.0, 2.0], [3.0, 3.0], None]]   # c is not in this graph: None, no wait
    (a * c).sum().backward()
    assert calls[1] == [[1.0, 1.0], None, [1.0, 1.0]]
    handle.remove()
    (a * b).sum().backward()
    assert len(calls) == 2


def test_multi_grad_hook_any_and_non_leaves(device):
    from gpugrad.autograd.graph import register_multi_grad_hook
    a, b = t([1.0, 1.0], device, True), t([1.0, 1.0], device, True)
    first = []
    with register_multi_grad_hook((a, b), lambda g: first.append(to_numpy(g).tolist()),
                                  mode="any"):
        (a * 2 + b * 3).sum().backward()
    assert first == [[3.0, 3.0]]   # b's accumulator runs first, as in PyTorch
    x = t([1.0, 1.0], device, True)
    y = x * 2
    z = y * 3
    calls = []
    handle = register_multi_grad_hook((y, z), _grads_of(calls))
    gpugrad.autograd.grad(z.sum(), x)
    assert calls == [[[3.0, 3.0], [1.0, 1.0]]]
    handle.remove()


def test_multi_grad_hook_errors():
    from gpugrad.autograd.graph import register_multi_grad_hook
    a = gpugrad.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"^Expects mode to be one of \('all', 'any'\) but got "
                                         r"some$"):
        register_multi_grad_hook((a,), print, mode="some")
    handle = register_multi_grad_hook((a,), print)
    with pytest.raises(RuntimeError, match="^A leaf node was passed to _will_engine_execute_node "
                                           "but we are currently running autograd.grad()"):
        gpugrad.autograd.grad((a * 5).sum(), a)
    handle.remove()


def test_increment_version_makes_saved_value_checks_notice():
    x = gpugrad.ones(2, requires_grad=True)
    s = x.sigmoid()
    y = (s * 2).sum() + (s * s).sum()
    before = s._version
    gpugrad.autograd.graph.increment_version(s)
    assert s._version == before + 1
    with pytest.raises(RuntimeError, match="^one of the variables needed for gradient computation "
                                           "has been modified by an inplace operation"):
        y.backward()
