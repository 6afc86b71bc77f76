"""Custom ``autograd.Function`` as PyTorch 2.x has it: the ``forward(*args)`` +
``setup_context(ctx, inputs, output)`` style, apply's argument binding, non-tensor outputs,
``mark_dirty`` (versions, leaves, views), a Function's own ``jvp`` in forward-mode AD, and
``func.vmap`` over a Function. Error messages are PyTorch 2.13's, word for word."""
from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
import gpugrad.autograd.forward_ad as fwAD
from gpugrad.autograd import Function, gradcheck, gradgradcheck
from gpugrad.func import grad, vmap
from tests.autograd._tensors import t

DOCS = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"
DIRTY_LEAF = "a leaf Variable that requires grad has been used in an in-place operation."
NOT_RETURNED = ("Some elements marked as dirty during the forward method were not returned as "
                "output. The inputs that are modified inplace must all be outputs of the "
                "Function.")


def exact(message: str) -> str:
    return "^" + re.escape(message) + "$"


def make(name, forward, setup_context=None, backward=None, **attrs):
    """A Function subclass ``name`` from plain functions (each becomes a staticmethod)."""
    body = {k: staticmethod(v) if callable(v) else v for k, v in dict(
        attrs, forward=forward, setup_context=setup_context,
        backward=backward or (lambda ctx, g: g)).items() if v is not None}
    return type(name, (Function,), body)


def nothing(ctx, inputs, output):
    """A setup_context with nothing to set up."""


# -- the setup_context style ----------------------------------------------------------------
class Scale(Function):
    """y = x * k, k a number; the ctx is set up outside forward."""
    seen: list = []

    @staticmethod
    def forward(x, k):
        return x * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, k = inputs
        Scale.seen.append((len(inputs), ctx.needs_input_grad, type(output).__name__))
        ctx.k = k
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * ctx.k, None


def _mul_sin_backward(ctx, g):
    a, b = ctx.saved_tensors
    return g * (b + a.cos()), g * a


# y = a * b + sin(a), its backward in gpugrad ops (so differentiable again); exp saving its output
MulSin = make("MulSin", lambda a, b: a * b + a.sin(),
              lambda ctx, inputs, output: ctx.save_for_backward(*inputs), _mul_sin_backward)
Exp = make("Exp", lambda x: x.exp(), lambda ctx, inputs, output: ctx.save_for_backward(output),
           lambda ctx, g: g * ctx.saved_tensors[0])


def test_new_style_forward_setup_context_backward(device):
    Scale.seen.clear()
    x = t([1.0, 2.0], device, True)
    y = Scale.apply(x, 3.0)
    assert Scale.seen == [(2, (True, False), "Tensor")]
    assert y.grad_fn.name() == "ScaleBackward"
    np.testing.assert_array_equal(to_numpy(y), [3.0, 6.0])
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [3.0, 3.0])
    assert Scale.apply(t([1.0], device), 2.0).grad_fn is None   # setup_context still runs
    assert Scale.seen[1:] == [(2, (False, False), "Tensor")]


def test_new_style_gradcheck_and_double_backward(device):
    a, b = t([0.5, -1.5, 2.0], device, True), t([1.0, 2.0, -3.0], device, True)
    assert gradcheck(MulSin.apply, (a, b))
    assert gradgradcheck(MulSin.apply, (a, b))
    assert gradcheck(Exp.apply, (t([0.1, -0.7], device, True),))
    ga, gb = gpugrad.autograd.grad(MulSin.apply(a, b).sum(), (a, b))
    np.testing.assert_allclose(to_numpy(ga), [1.0, 2.0, -3.0] + np.cos([0.5, -1.5, 2.0]))
    np.testing.assert_array_equal(to_numpy(gb), [0.5, -1.5, 2.0])


def test_new_style_tuple_output_and_ctx_methods(device):
    seen = []

    class Parts(Function):
        @staticmethod
        def forward(x):
            return x * 2, x * 3, x.argmax()

        @staticmethod
        def setup_context(ctx, inputs, output):
            seen.append((type(output).__name__, len(output)))
            ctx.mark_non_differentiable(output[1])
            ctx.set_materialize_grads(False)

        @staticmethod
        def backward(ctx, g1, g2, g3):
            seen.append((g2, g3))
            return g1 * 2

    x = t([1.0, 2.0], device, True)
    a, b, i = Parts.apply(x)
    assert a.requires_grad and not b.requires_grad and not i.requires_grad
    a.sum().backward()
    assert seen == [("tuple", 3), (None, None)]
    np.testing.assert_array_equal(to_numpy(x.grad), [2.0, 2.0])


def test_new_style_mark_dirty(device):
    Double = make("Double", lambda x: x.mul_(2),
                  lambda ctx, inputs, output: ctx.mark_dirty(inputs[0]), lambda ctx, g: g * 2)
    x = t([1.0, 2.0], device, True)
    y = x * 1
    assert Double.apply(y) is y and y.grad_fn.name() == "DoubleBackward" and y._version == 2
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [2.0, 2.0])
    with pytest.raises(RuntimeError, match=exact(DIRTY_LEAF)):
        Double.apply(t([1.0], device, True))


# -- how apply binds its arguments ------------------------------------------------------------
Defaults = make("Defaults", lambda x, k=2.0, w=None: x * k,
                lambda ctx, inputs, output: setattr(ctx, "inputs", inputs),
                lambda ctx, g: (g * ctx.inputs[1], None, None))


def test_new_style_binds_defaults_and_keywords():
    x = t([1.0, 2.0], requires_grad=True)
    for y, k in ((Defaults.apply(x), 2.0), (Defaults.apply(x, k=3.0), 3.0),
                 (Defaults.apply(w=None, x=x), 2.0)):
        assert y.grad_fn.inputs[1:] == (k, None)
        assert y.grad_fn.needs_input_grad == (True, False, False)
        x.grad = None
        y.sum().backward()
        np.testing.assert_array_equal(to_numpy(x.grad), [k, k])


class Keywords(Function):
    @staticmethod
    def forward(ctx, a, b=None, c=1.0):
        ctx.needs = ctx.needs_input_grad
        return a * b * c

    @staticmethod
    def backward(ctx, g):
        return (g * 2, g * 10) + (None,) * (len(ctx.needs) - 2)


def test_old_style_keywords_take_their_positions(device):
    x, w = t([1.0, 2.0], device, True), t([5.0, 7.0], device, True)
    for y in (Keywords.apply(x, c=2.0, b=w), Keywords.apply(c=2.0, b=w, a=x)):
        assert y.grad_fn.needs == (True, True, False)
        assert len(y.grad_fn.next_functions) == 2
        x.grad = w.grad = None
        y.sum().backward()
        np.testing.assert_array_equal(to_numpy(y), [10.0, 28.0])
        np.testing.assert_array_equal(to_numpy(x.grad), [2.0, 2.0])
        np.testing.assert_array_equal(to_numpy(w.grad), [10.0, 10.0])


KeywordOnly = make("KeywordOnly", lambda x, *, k=2.0: x * k, nothing)


@pytest.mark.parametrize("call, message", [
    (lambda x: Keywords.apply(x, zz=1), "forward() got an unexpected keyword argument 'zz'"),
    (lambda x: Keywords.apply(x, 1.0, b=2.0), "forward() got multiple values for argument 'b'"),
    (lambda x: Keywords.apply(x, c=2.0), "forward() missing required argument: 'b' (position 1)"),
    (lambda x: Defaults.apply(x, zz=1), "got an unexpected keyword argument 'zz'"),
    (lambda x: Defaults.apply(), "missing a required argument: 'x'"),
    (lambda x: Defaults.apply(x, 1, 2, 3), "too many positional arguments"),
    (lambda x: KeywordOnly.apply(x), "forward() got an unexpected keyword argument 'k'"),
])
def test_apply_argument_errors(call, message):
    with pytest.raises(TypeError, match=exact(message)):
        call(t([1.0], requires_grad=True))


CtxAndSetup = make("CtxAndSetup", lambda ctx, x: x * 2, nothing)   # setup_context: new style


class NoCtx(Function):   # forward without ctx, but no setup_context: old style
    @staticmethod
    def forward(x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g


class ShortSetup(Function):
    @staticmethod
    def forward(x):
        return x * 2

    @staticmethod
    def setup_context(ctx, inputs):
        pass

    @staticmethod
    def backward(ctx, g):
        return g


@pytest.mark.parametrize("cls, message", [
    (CtxAndSetup, "missing a required argument: 'x'"),
    (NoCtx, "NoCtx.forward() takes 1 positional argument but 2 were given"),
    (ShortSetup, "ShortSetup.setup_context() takes 2 positional arguments but 3 were given"),
])
def test_mixing_the_two_styles(cls, message):
    with pytest.raises(TypeError, match=exact(message)):
        cls.apply(t([1.0], requires_grad=True))


# -- outputs that are not tensors (or not differentiable) -------------------------------------
@pytest.mark.parametrize("materialize", [True, False])
def test_non_tensor_outputs_get_none(device, materialize):
    seen = []

    class Mixed(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            kept = x * 3
            ctx.mark_non_differentiable(kept)
            return x * 2, 5, kept, x.argmax()

        @staticmethod
        def backward(ctx, g, g_int, g_kept, g_idx):
            seen.append((g_int, g_kept, g_idx))
            return g * 2

    class IntFirst(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return 7, x * 2

        @staticmethod
        def backward(ctx, g_int, g):
            seen.append(g_int)
            return g * 2

    x = t([1.0, 2.0], device, True)
    a, five, kept, idx = Mixed.apply(x)
    assert five == 5 and not kept.requires_grad and not idx.requires_grad
    a.sum().backward()
    g_int, g_kept, g_idx = seen.pop()
    assert g_int is None
    if materialize:   # PyTorch materialises zeros for every tensor output, of its dtype
        np.testing.assert_array_equal(to_numpy(g_kept), [0.0, 0.0])
        assert to_numpy(g_idx).tolist() == 0 and g_idx.dtype == gpugrad.int64
    else:
        assert g_kept is None and g_idx is None
    seven, b = IntFirst.apply(x)
    assert seven == 7
    b.sum().backward()
    assert seen == [None]
    np.testing.assert_array_equal(to_numpy(x.grad), [4.0, 4.0])


# -- mark_dirty -------------------------------------------------------------------------------
class MulTwo(Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_mark_dirty_leaf_message_and_versions(device):
    x = t([1.0, 2.0], device, True)
    with pytest.raises(RuntimeError, match=exact(DIRTY_LEAF)):
        MulTwo.apply(x)
    y = t([1.0, 2.0], device, True).clone()
    assert MulTwo.apply(y) is y and y._version == 2   # the mul_ and mark_dirty, as PyTorch
    z = t([1.0, 2.0], device)
    assert MulTwo.apply(z) is z and z._version == 2   # also when nothing is recorded
    with gpugrad.no_grad():
        MulTwo.apply(x)   # a leaf may be modified without grad
    assert x._version == 4


def test_mark_dirty_must_return_the_tensor(device):
    NotReturned = make("NotReturned", lambda x: x.mul_(2) * 1,
                       lambda ctx, inputs, output: ctx.mark_dirty(inputs[0]))
    for requires_grad in (True, False):
        with pytest.raises(RuntimeError, match=exact(NOT_RETURNED)):
            NotReturned.apply(t([1.0], device, requires_grad))


def test_mark_dirty_on_a_view_rebases_its_base(device):
    ScaleBy = make("ScaleBy", lambda w, v: v.mul_(w),   # the dirtied view is the second input
                   lambda ctx, inputs, output: ctx.mark_dirty(inputs[1]),
                   lambda ctx, g: (None, g * 3))
    x = t([1.0, 2.0, 3.0], device, True)
    y = x * 1
    out = MulTwo.apply(y[:2])
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    assert out.grad_fn.name() == "AsStridedBackward0"
    np.testing.assert_array_equal(to_numpy(y), [2.0, 4.0, 3.0])
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [2.0, 2.0, 1.0])
    x.grad = None
    y = x * 1
    ScaleBy.apply(t([3.0, 3.0], device), y[:2])
    y.sum().backward()   # NOTE: PyTorch 2.13 gives [3, 3, 0] here; d(sum y)/dx is [3, 3, 1]
    np.testing.assert_array_equal(to_numpy(x.grad), [3.0, 3.0, 1.0])


def test_mark_dirty_on_a_view_refusals(device):
    class Two(Function):
        @staticmethod
        def forward(ctx, v):
            v.mul_(3)
            ctx.mark_dirty(v)
            return v, v.sum()

        @staticmethod
        def backward(ctx, g, gs):
            return g * 3

    with pytest.raises(RuntimeError, match=re.escape(
            "If your Function modifies inplace an input that is a view of another Tensor, your "
            "Function cannot return more than one Tensor.")):
        Two.apply((t([1.0, 2.0, 3.0], device, True) * 1)[:2])
    with pytest.raises(RuntimeError, match=exact(
            "a view of a leaf Variable that requires grad is being used in an in-place "
            "operation.")):
        MulTwo.apply(t([1.0, 2.0, 3.0], device, True)[:2])


# -- forward-mode AD with the Function's own jvp ---------------------------------------------
class ScaleJvp(Function):
    """Old style; its jvp is deliberately not the derivative, to show it is the one used."""
    seen: list = []

    @staticmethod
    def forward(ctx, x, k, w):
        ctx.k = k
        ctx.save_for_backward(x)
        return x * k * w

    @staticmethod
    def backward(ctx, g):
        return None

    @staticmethod
    def jvp(ctx, tx, tk, tw):
        ScaleJvp.seen.append((to_numpy(tx).tolist(), tk, to_numpy(tw).tolist(),
                              ctx.saved_tensors))
        return tx * 100 * ctx.k


def _save_both(ctx, inputs, output):
    ctx.save_for_forward(inputs[0])
    ctx.save_for_backward(inputs[0])


Square = make("Square", lambda x: x * x, _save_both,
              lambda ctx, g: 2 * ctx.saved_tensors[0] * g,
              jvp=lambda ctx, tx: 2 * ctx.saved_tensors[0] * tx)


def test_jvp_is_used(device):
    ScaleJvp.seen.clear()
    x, w = t([1.0, 2.0], device), t([3.0, 4.0], device)
    with fwAD.dual_level():
        y = ScaleJvp.apply(fwAD.make_dual(x, t([1.0, 1.0], device)), 2.0, w)
        np.testing.assert_array_equal(to_numpy(fwAD.unpack_dual(y).tangent), [200.0, 200.0])
    # a zero tangent for a tensor input without one, None for a number; saved_tensors in jvp
    # is what save_for_forward kept (nothing here)
    assert ScaleJvp.seen == [([1.0, 1.0], None, [0.0, 0.0], ())]


def test_new_style_jvp_with_save_for_forward(device):
    x = t([1.0, 2.0], device)
    with fwAD.dual_level():
        y = Square.apply(fwAD.make_dual(x, t([1.0, 0.5], device)))
        p, tangent = fwAD.unpack_dual(y)
        np.testing.assert_array_equal(to_numpy(p), [1.0, 4.0])
        np.testing.assert_array_equal(to_numpy(tangent), [2.0, 2.0])
        y = Defaults.apply(x=fwAD.make_dual(x, t([1.0, 1.0], device)), k=5.0)
        np.testing.assert_array_equal(to_numpy(fwAD.unpack_dual(y).tangent), [5.0, 5.0])


def test_jvp_tangent_keeps_a_graph(device):
    x = t([1.0, 2.0], device, True)
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(Square.apply(fwAD.make_dual(x, t([1.0, 1.0], device)))).tangent
        assert tangent.requires_grad
        tangent.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [2.0, 2.0])


def test_jvp_several_outputs_and_errors(device):
    def make(result):
        class Pair(Function):
            @staticmethod
            def forward(ctx, x):
                kept = x * 3
                ctx.mark_non_differentiable(kept)
                return x * 2, kept

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 * 2

            @staticmethod
            def jvp(ctx, tx):
                return result(tx)
        return Pair

    x = t([1.0, 2.0], device)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t([1.0, 1.0], device))
        a, b = make(lambda tx: (tx * 2, None)).apply(d)
        np.testing.assert_array_equal(to_numpy(fwAD.unpack_dual(a).tangent), [2.0, 2.0])
        assert fwAD.unpack_dual(b).tangent is None
        for result, message in [
                (lambda tx: tx * 2, "Function's jvp returned an invalid number of forward "
                                    "gradients (expected 2 but got 1)"),
                (lambda tx: (tx * 2, tx * 3), "Function's jvp returned a gradient at position 1, "
                 "but  the corresponding forward output is not a differentiable Tensor.You "
                 "should return None at that position instead."),
                (lambda tx: (tx.sum(), None), "Trying to set a forward gradient that has a "
                 "different size than that of the original Tensor, this is not supported. "
                 "Tensor is of size [2] while the given forward gradient is of size []."),
                (lambda tx: (3, None), "expected Variable or None (got int) for grad output 0.")]:
            with pytest.raises(RuntimeError, match=exact(message)):
                make(result).apply(d)


def test_without_jvp_the_tangent_comes_from_backward(device):
    x = t([1.0, 2.0], device)
    with fwAD.dual_level():
        y = MulSin.apply(fwAD.make_dual(x, t([1.0, 0.0], device)), t([3.0, 4.0], device))
        np.testing.assert_allclose(to_numpy(fwAD.unpack_dual(y).tangent),
                                   [3.0 + np.cos(1.0), 0.0])


# -- vmap -------------------------------------------------------------------------------------
Batched = make("Batched", lambda x, k: (x * k, x.sum()),
               lambda ctx, inputs, output: setattr(ctx, "k", inputs[1]),
               lambda ctx, g, g_sum: (g * ctx.k + g_sum, None), generate_vmap_rule=True)


def test_vmap_with_generate_vmap_rule(device):
    x = t([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], device, True)
    scaled, sums = vmap(Batched.apply, in_dims=(1, None))(x, 3.0)
    np.testing.assert_array_equal(to_numpy(scaled), [[3.0, 9.0, 15.0], [6.0, 12.0, 18.0]])
    np.testing.assert_array_equal(to_numpy(sums), [9.0, 12.0])
    (scaled.sum() + sums.sum()).backward()
    np.testing.assert_array_equal(to_numpy(x.grad), np.full((3, 2), 4.0))
    per_sample = vmap(grad(lambda a: Batched.apply(a, 3.0)[0].sum()))(x.detach())
    np.testing.assert_array_equal(to_numpy(per_sample), np.full((3, 2), 3.0))


def test_vmap_refusals(device):
    def rule(info, in_dims, x):
        return x * 2, in_dims[0]

    NoRule = make("NoRule", lambda x: x * 2, nothing)
    OwnRule = make("OwnRule", lambda x: x * 2, nothing, vmap=rule)
    BothRules = make("BothRules", lambda x: x * 2, nothing, vmap=rule, generate_vmap_rule=True)
    OldStyle = make("OldStyle", lambda ctx, x: x * 2, generate_vmap_rule=True)
    x, c = t([[1.0, 2.0], [3.0, 4.0]], device), t([1.0, 1.0], device)
    np.testing.assert_array_equal(to_numpy(vmap(OwnRule.apply)(x)), [[2.0, 4.0], [6.0, 8.0]])
    for call, message in [
            (lambda: vmap(OldStyle.apply)(x),
             "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, "
             "jacrev, ...), it must override the setup_context staticmethod. " + DOCS),
            (lambda: vmap(NoRule.apply)(x), "You tried to vmap over NoRule, but it does not have "
             "vmap support. Please override and implement the vmap staticmethod or set "
             "generate_vmap_rule=True. " + DOCS),
            (lambda: vmap(lambda a: a + NoRule.apply(c))(x),   # also on unbatched inputs
             "You tried to vmap over NoRule, but it does not have vmap support. Please "
             "override and implement the vmap staticmethod or set generate_vmap_rule=True. "
             + DOCS),
            (lambda: vmap(BothRules.apply)(x), "You tried to vmap over BothRules, but it has "
             "both generate_vmap_rule=True and an overridden vmap staticmethod. Please set "
             "generate_vmap_rule=False or delete the overridden vmap staticmethod to avoid "
             "ambiguity. " + DOCS)]:
        with pytest.raises(RuntimeError, match=exact(message)):
            call()
    np.testing.assert_array_equal(to_numpy(NoRule.apply(c)), [2.0, 2.0])   # outside: fine


def test_vmap_state_is_per_thread():
    import threading

    done = []

    def other_thread():
        done.append(to_numpy(MulTwo.apply(t([1.0]))).tolist())   # old style: fine out of vmap

    def per_sample(a):
        th = threading.Thread(target=other_thread)
        th.start()
        th.join()
        return a * 2

    vmap(per_sample)(t([[1.0], [2.0]]))
    assert done == [[2.0], [2.0]]


# -- PyTorch as the oracle --------------------------------------------------------------------
def _classes(mod):
    """The same Functions written against ``mod`` (gpugrad or torch)."""
    class Dirty(mod.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Cube(mod.autograd.Function):
        @staticmethod
        def forward(x, k=1.0):
            return x ** 3 * k, 5

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g, g_five):
            x, = ctx.saved_tensors
            ctx.g_five = g_five
            return 3 * x * x * g * ctx.k, None

        @staticmethod
        def jvp(ctx, tx, tk):
            return 3 * ctx.saved_tensors[0] ** 2 * tx * ctx.k, None

    class Cube4(Cube):
        @staticmethod
        def setup_context(ctx, inputs, output):
            Cube.setup_context(ctx, inputs, output)
            ctx.save_for_forward(inputs[0])

    return Cube, Cube4, Dirty


def test_against_torch():
    torch = pytest.importorskip("torch")
    values = [0.5, -1.25, 2.0]
    results = []
    for mod in (gpugrad, torch):
        cube, cube4, dirty = _classes(mod)
        x = mod.tensor(values, dtype=mod.float64, requires_grad=True)
        y, five = cube.apply(x, k=2.0)
        y.sum().backward()
        with mod.autograd.forward_ad.dual_level():
            d = mod.autograd.forward_ad.make_dual(x.detach(), mod.ones(3, dtype=mod.float64))
            tangent = mod.autograd.forward_ad.unpack_dual(cube4.apply(d, 2.0)[0]).tangent
        z = mod.tensor(values, dtype=mod.float64, requires_grad=True).clone()
        dirty.apply(z)
        results.append((y.detach().numpy(), five, x.grad.numpy(), y.grad_fn.g_five,
                        y.grad_fn.name(), tangent.numpy(), z._version,
                        y.grad_fn.needs_input_grad))
    ours, theirs = results
    for a, b in zip(ours, theirs):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        else:
            assert a == b
