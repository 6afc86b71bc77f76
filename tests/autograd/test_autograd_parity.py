"""Autograd behaviour checked against what PyTorch does in the corners users reach: hooks that
change a gradient's size, type or count, ``is_grads_batched``, the dtype of a returned gradient,
``retain_grad`` across an in-place op, in-place writes to views made under ``no_grad``, and
random fills of non-leaves. Expected values and messages are PyTorch's."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad


def _xy(device):
    x = tensor([1.0, 2.0], device, dtype=gpugrad.float32, requires_grad=True)
    return x, x * 2


def myhook(g):
    return g.double()


@pytest.mark.parametrize("where", ["tensor", "leaf", "pre", "post"])
def test_hooks_may_not_change_a_gradients_size_or_type(device, where):
    def install(hook):
        x, y = _xy(device)
        if where == "tensor":
            y.register_hook(hook)
        elif where == "leaf":
            x.register_hook(hook)
        elif where == "pre":
            y.grad_fn.register_prehook(lambda gs: (hook(gs[0]),))
        else:
            y.grad_fn.register_hook(lambda gi, go: (hook(gi[0]),) + gi[1:])
        return y.sum()
    name = "<lambda>" if where in ("pre", "post") else "myhook"
    with pytest.raises(RuntimeError) as e:
        install(myhook).backward()
    kind = "cuda." if device == "cuda" else ""
    assert str(e.value) == (f"hook '{name}' has changed the type of value (was "
                            f"gpugrad.{kind}FloatTensor got gpugrad.{kind}DoubleTensor)")

    def shorten(g):
        return g[:1]
    with pytest.raises(RuntimeError) as e:
        install(shorten).backward()
    assert str(e.value) == f"hook '{'<lambda>' if where in ('pre', 'post') else 'shorten'}' " \
                           "has changed the size of value"


def test_hook_return_values_are_checked(device):
    x, y = _xy(device)
    y.register_hook(lambda g: 3)
    with pytest.raises(TypeError, match=r"^expected Variable, but hook returned 'int'$"):
        y.sum().backward()
    x, y = _xy(device)   # x * 2 has two inputs, the second a number (gradient None)
    y.grad_fn.register_hook(lambda gi, go: (gi[0],))
    with pytest.raises(RuntimeError, match=r"^hook '<lambda>' has returned an incorrect number "
                                           r"of values \(got 1, but expected 2\)$"):
        y.sum().backward()
    x, y = _xy(device)
    y.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="^can't replace a None gradient with a non-None "
                                           "value$"):
        y.sum().backward()
    x, y = _xy(device)
    y.grad_fn.register_prehook(lambda go: (go[0], go[0]))
    with pytest.raises(RuntimeError, match=r"^hook '<lambda>' has returned an incorrect number "
                                           r"of values \(got 2, but expected 1\)$"):
        y.sum().backward()
    # a valid replacement goes through, and the next hook sees it
    x, y = _xy(device)
    y.grad_fn.register_hook(lambda gi, go: (gi[0] * 7, None))
    y.grad_fn.register_hook(lambda gi, go: (gi[0] + 1, None))
    y.sum().backward()
    assert x.grad.tolist() == [15.0, 15.0]


def test_grad_outputs_are_cast_to_the_outputs_dtype(device):
    x, y = _xy(device)
    g64 = tensor([1.0, 1.0], device, dtype=gpugrad.float64)
    [g] = gpugrad.autograd.grad(y, x, grad_outputs=g64, retain_graph=True)
    assert g.dtype == gpugrad.float32 and g.tolist() == [2.0, 2.0]
    y.backward(tensor([1, 3], device, dtype=gpugrad.int64))
    assert x.grad.dtype == gpugrad.float32 and x.grad.tolist() == [2.0, 6.0]


def test_is_grads_batched(device):
    x = tensor([1.0, 2.0], device, requires_grad=True)
    z = tensor([1.0], device, requires_grad=True)
    eye = tensor(np.eye(2), device)
    [j] = gpugrad.autograd.grad(x * x, x, grad_outputs=eye, is_grads_batched=True)
    np.testing.assert_array_equal(to_numpy(j), [[2.0, 0.0], [0.0, 4.0]])
    j, unused = gpugrad.autograd.grad(x * x, (x, z), grad_outputs=eye, is_grads_batched=True,
                                      allow_unused=True)
    assert unused is None and tuple(j.shape) == (2, 2)
    _, zero = gpugrad.autograd.grad(x * x, (x, z), grad_outputs=eye, is_grads_batched=True,
                                    materialize_grads=True)
    assert zero.tolist() == [0.0]   # materialised unbatched, as PyTorch does
    [j] = gpugrad.autograd.grad(x * x, x, grad_outputs=eye, is_grads_batched=True,
                                create_graph=True)
    [h] = gpugrad.autograd.grad(j.sum(), x)
    assert h.tolist() == [2.0, 2.0]
    [rows] = gpugrad.autograd.grad(x.sum(), x, grad_outputs=tensor([1.0, 2.0, 3.0], device),
                                   is_grads_batched=True)
    np.testing.assert_array_equal(to_numpy(rows), [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    y = x * x
    gpugrad.autograd.grad(y, x, grad_outputs=eye, is_grads_batched=True)
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second"):
        gpugrad.autograd.grad(y, x, grad_outputs=eye, is_grads_batched=True)
    with pytest.raises(RuntimeError) as e:
        gpugrad.autograd.grad(x * x, x, grad_outputs=tensor(np.ones((2, 3)), device),
                              is_grads_batched=True)
    assert str(e.value) == (
        "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the "
        "batch dimension. The sizes of the remaining dimensions are expected to match the shape "
        "of corresponding output, but a mismatch was detected: grad_output[0] has a shape of "
        "gpugrad.Size([3]) and output[0] has a shape of gpugrad.Size([2]). If you only want some "
        "tensors in `grad_output` to be considered batched, consider using vmap.")


def test_retain_grad_follows_the_tensor_through_an_in_place_op(device):
    x, _ = _xy(device)
    y = x * 1
    y.retain_grad()
    y.mul_(2)
    assert y.retains_grad
    y.sum().backward()
    assert y.grad.tolist() == [1.0, 1.0]   # the gradient of the new value
    assert x.grad.tolist() == [2.0, 2.0]


NO_GRAD_VIEW = ("created in no_grad mode and is being modified inplace with grad mode "
                "enabled. Given that this use case is ambiguous and error-prone, it is forbidden. "
                "You can clarify your code by moving both the view and the inplace either both "
                "inside the no_grad block (if you don't want the inplace to be tracked) or both "
                "outside (if you want the inplace to be tracked).")


def test_in_place_on_a_view_made_under_no_grad(device):
    x, y = _xy(device)
    with gpugrad.no_grad():
        v, w = y[:1], x[:1]
    for t in (v, w):
        with pytest.raises(RuntimeError) as e:
            t.mul_(2)
        assert str(e.value) == "A view was " + NO_GRAD_VIEW
    with pytest.raises(RuntimeError) as e:
        v[:1].mul_(2)
    assert str(e.value) == "A view of a view which was " + NO_GRAD_VIEW
    a = tensor([0.0, 0.0, 0.0], device, dtype=gpugrad.float32)
    with gpugrad.no_grad():
        b = a[:2]
    with pytest.raises(RuntimeError) as e:
        b.add_(x)   # the write would have to be recorded
    assert str(e.value) == "A view was " + NO_GRAD_VIEW
    b.add_(1)   # nothing to record: allowed
    with gpugrad.no_grad():
        w.mul_(3)   # both under no_grad: allowed
    assert a.tolist() == [1.0, 1.0, 0.0] and x.tolist() == [3.0, 2.0]


@pytest.mark.parametrize("fill", ["uniform_", "normal_"])
def test_random_fill_of_a_non_leaf_stays_in_the_graph(device, fill):
    x, _ = _xy(device)
    y = x * 1
    getattr(y, fill)()
    assert y.grad_fn is not None and not y.is_leaf and y._version == 1
    y.add_(1)   # not a leaf: allowed
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]   # the old values no longer reach the result


def test_graph_misuse_messages(device):
    x, y = _xy(device)
    with pytest.raises(RuntimeError, match=r"^`inputs` argument to `backward\(\)` cannot be "
                                           r"empty\.$"):
        y.sum().backward(inputs=[])
    with pytest.raises(RuntimeError, match="^all inputs have to be Tensors or GradientEdges, but "
                                           "got int$"):
        gpugrad.autograd.grad(y.sum(), [x, 3])
    with pytest.warns(UserWarning, match=r"^Using backward\(\) with create_graph=True will create "
                                         r"a reference cycle between the parameter and its "
                                         r"gradient"):
        (x * x).sum().backward(create_graph=True)
    assert x.grad.grad_fn is not None


def test_nodes_can_be_called_and_report_their_order(device):
    x = tensor([1.0, 2.0], device, requires_grad=True)
    y = x * x
    z = y * 2
    assert y.grad_fn._sequence_nr() < z.grad_fn._sequence_nr()
    assert y.grad_fn.next_functions[0][0]._sequence_nr() == 2 ** 64 - 1
    ones = tensor([1.0, 1.0], device)
    with gpugrad.no_grad():
        a, b = y.grad_fn(ones)
    assert a.tolist() == b.tolist() == [1.0, 2.0] and a.grad_fn is None
    a, b = y.grad_fn(ones)   # grad mode on: the result is differentiable
    assert type(a.grad_fn).__name__ == "MulBackward0"
    assert y.grad_fn.next_functions[0][0](ones) == () and x.grad.tolist() == [1.0, 1.0]
    y.sum().backward()   # calling the node kept its saved values
    assert x.grad.tolist() == [3.0, 5.0]
    assert (x._is_view(), y[:1]._is_view(), y.view(2)._is_view(), y.detach()._is_view()) == (
        False, True, True, False)


def test_gradcheck_reports_as_pytorch_does():
    from gpugrad.autograd import GradcheckError, gradcheck, gradgradcheck

    class Wrong(gpugrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x   # half the true derivative
    x = gpugrad.tensor([1.0, 2.0], dtype=gpugrad.float64, requires_grad=True)
    with pytest.raises(GradcheckError) as e:
        gradcheck(Wrong.apply, (x,))
    assert str(e.value) == (
        "Jacobian mismatch for output 0 with respect to input 0,\n"
        "numerical:tensor([[2.0000, 0.0000],\n        [0.0000, 4.0000]], dtype=gpugrad.float64)\n"
        "analytical:tensor([[1., 0.],\n        [0., 2.]], dtype=gpugrad.float64)\n")
    assert gradcheck(Wrong.apply, (x,), raise_exception=False) is False
    for check in (gradcheck, gradgradcheck):
        with pytest.raises(ValueError, match="^gradcheck expects at least one input tensor to "
                                             "require gradient, but none of them have "
                                             r"requires_grad=True\.$"):
            check(lambda a: a * 2, (x.detach(),))


@pytest.mark.parametrize("pieces", [
    lambda x: x.unbind(0), lambda x: x.split(3, 0), lambda x: x.chunk(1, 0),
    lambda x: x.split([3]), lambda x: x.split(2, 1), lambda x: x.unbind(1)])
def test_a_split_into_one_piece_has_the_right_gradient(device, pieces):
    """An op whose output count varies receives its gradients as a list even when there is
    only one output (each row used to get the first row's gradient)."""
    from gpugrad.autograd import gradcheck, gradgradcheck
    x = tensor(np.arange(6.0).reshape(3, 2), device, requires_grad=True)
    p = pieces(x)[0]
    weights = tensor(np.arange(p.numel(), dtype=np.float64).reshape(tuple(p.shape)), device)
    (p * weights).sum().backward()
    want = np.zeros((3, 2))
    want[tuple(slice(None, s) for s in p.shape) if p.ndim == 2 else
         (slice(None), 0) if p.shape[0] == 3 else (0,)] = to_numpy(weights)
    np.testing.assert_array_equal(to_numpy(x.grad), want)
    assert gradcheck(lambda a: pieces(a)[0] * 1.5, (x,))
    assert gradgradcheck(lambda a: pieces(a)[0] ** 2, (x,))


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_recurrent_layers_on_a_sequence_of_one_step(device, cls):
    gpugrad.manual_seed(0)
    layer = getattr(gpugrad.nn, cls)(4, 3, num_layers=2).to(device)
    x = gpugrad.randn(1, 2, 4, device=device, requires_grad=True)
    out, _ = layer(x)
    out.sum().backward()
    step, _ = layer(x[0:1].detach())   # the same step again: same output
    np.testing.assert_allclose(to_numpy(step), to_numpy(out.detach()), rtol=1e-6)
    assert x.grad.shape == (1, 2, 4) and np.isfinite(to_numpy(x.grad)).all()


def _modified(device, case):
    x = tensor([1.0, 2.0, 3.0], device, requires_grad=True)
    y = x * 1
    if case == "value":
        z = y * y
        y.add_(1)
    elif case == "output":
        y = x.exp()
        z = y
        y.add_(1)
    elif case == "view saved, base written":
        v = y[:2]
        z = v * v
        y.mul_(2)
    elif case == "view saved, view written":
        v = y[:1]
        z = v.sin()
        v.mul_(2)
    elif case == "base saved, item written":
        z = y.sin()
        y[0] = 5.0
    else:   # written under no_grad: the node that made it is named
        z = y * y
        with gpugrad.no_grad():
            y.add_(1)
    with pytest.raises(RuntimeError) as e:
        z.sum().backward()
    return str(e.value)


@pytest.mark.parametrize("case, which", [
    ("value", "Add"), ("output", "Exp"), ("view saved, base written", "AsStrided"),
    ("view saved, view written", "AsStrided"),
    ("base saved, item written", "torch::autograd::CopySlices"), ("no_grad", "Mul")])
def test_a_modified_saved_value_is_named_as_pytorch_names_it(device, case, which):
    message = _modified(device, case)
    assert message.startswith("one of the variables needed for gradient computation has been "
                              "modified by an inplace operation: [gpugrad.")
    assert f"], which is output 0 of {which}, is at version 1; expected version 0 instead." \
        in message


def test_the_version_counter_does_not_keep_an_old_graph_alive():
    import gc
    import weakref
    x = gpugrad.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y.add_(1)
    node = weakref.ref(y.grad_fn)
    kept = y.detach()   # shares y's version counter, as a carried hidden state does
    del y
    gc.collect()
    assert node() is None and kept.tolist() == [2.0, 3.0]
