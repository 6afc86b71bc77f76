"""Grad modes as PyTorch has them: the exact (grad, inference) state inside every nesting,
decorators with and without parentheses, generator functions that get the mode on every
resume, thread-locality, clone(), set_grad_enabled's type check, and the checks PyTorch makes
on inference tensors (version counter, requires_grad, in-place updates)."""
from __future__ import annotations

import asyncio
import inspect
import threading

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
from gpugrad.autograd.grad_mode import state as grad_state

NO_VERSION = "Inference tensors do not track version counter."
RG_OUTSIDE = "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
INPLACE_OUTSIDE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details.")


def st():
    return gpugrad.is_grad_enabled(), gpugrad.is_inference_mode_enabled()


@pytest.fixture(autouse=True)
def clean_mode():
    """Every test starts and ends with grad on and inference mode off."""
    assert st() == (True, False)
    yield
    leaked = st()
    gpugrad.autograd.grad_mode._set(True, False)
    assert leaked == (True, False), "a test left the grad mode switched"


def make_inference(*args, **kwargs):
    with gpugrad.inference_mode():
        return gpugrad.ones(*args, **kwargs)


MODES = {   # name -> (factory, state inside when entered with grad on, ... with grad off)
    "no_grad": (gpugrad.no_grad, (False, False), (False, False)),
    "enable_grad": (gpugrad.enable_grad, (True, False), (True, False)),
    "set_grad_enabled_false": (lambda: gpugrad.set_grad_enabled(False), (False, False),
                               (False, False)),
    "set_grad_enabled_true": (lambda: gpugrad.set_grad_enabled(True), (True, False),
                              (True, False)),
    "inference_mode": (gpugrad.inference_mode, (False, True), (False, True)),
    "inference_mode_false": (lambda: gpugrad.inference_mode(False), (True, False),
                             (True, False)),
}


# -- states ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", MODES)
@pytest.mark.parametrize("outer", [True, False])
def test_mode_state_and_restore(name, outer):
    make, on, off = MODES[name]
    gpugrad.set_grad_enabled(outer)
    with make() as entered:
        assert entered is None
        assert st() == (on if outer else off)
    assert st() == (outer, False)
    with pytest.raises(ValueError):
        with make():
            raise ValueError
    assert st() == (outer, False)
    gpugrad.set_grad_enabled(True)


def test_inference_mode_false_turns_grad_on():
    with gpugrad.inference_mode():
        with gpugrad.inference_mode(False):
            assert st() == (True, False)
        assert st() == (False, True)
    with gpugrad.no_grad():
        with gpugrad.inference_mode(False):
            assert st() == (True, False)
        assert st() == (False, False)
    gpugrad.set_grad_enabled(False)
    with gpugrad.inference_mode(mode=False):
        assert st() == (True, False)
    assert st() == (False, False)
    gpugrad.set_grad_enabled(True)


def test_grad_modes_inside_inference_mode():
    with gpugrad.inference_mode():
        with gpugrad.enable_grad():
            assert st() == (True, True)
        with gpugrad.no_grad():
            assert st() == (False, True)
        with gpugrad.set_grad_enabled(True):
            assert st() == (True, True)
        assert st() == (False, True)
        with gpugrad.inference_mode(False):
            with gpugrad.inference_mode():
                assert st() == (False, True)
            assert st() == (True, False)
    assert st() == (True, False)


def test_set_grad_enabled_switches_at_once_and_on_enter():
    mode = gpugrad.set_grad_enabled(False)
    assert st() == (False, False)
    assert (mode.mode, mode.prev) == (False, True)
    gpugrad.set_grad_enabled(True)
    with mode:                          # entering switches again
        assert st() == (False, False)
    assert st() == (True, False)        # the mode from when it was made


@pytest.mark.parametrize("value,kind", [(1, "int"), (None, "NoneType"), (0.0, "float"),
                                        (np.True_, f"numpy.{type(np.True_).__name__}"),
                                        (print, "builtin_function_or_method")])
def test_set_grad_enabled_needs_a_bool(value, kind):
    with pytest.raises(TypeError) as e:
        gpugrad.set_grad_enabled(value)
    assert str(e.value) == ("set_grad_enabled(): argument 'enabled' (position 1) must be bool, "
                            f"not {kind}")
    with pytest.raises(TypeError) as e:
        gpugrad.set_grad_enabled(mode=value)
    assert str(e.value).endswith(f"must be bool, not {kind}")
    assert st() == (True, False)


def test_set_grad_enabled_is_not_a_bare_decorator():
    with pytest.raises(TypeError) as e:
        @gpugrad.set_grad_enabled
        def f():
            pass
    assert str(e.value) == ("set_grad_enabled(): argument 'enabled' (position 1) must be bool, "
                            "not function")


# -- clone -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", MODES)
def test_clone_is_a_fresh_instance_of_the_same_mode(name):
    make, on, _ = MODES[name]
    mode = make()
    gpugrad.set_grad_enabled(True)
    copy = mode.clone()
    assert type(copy) is type(mode) and copy is not mode
    with copy:
        assert st() == on
    gpugrad.set_grad_enabled(True)


def test_set_grad_enabled_clone_switches_like_a_new_one():
    mode = gpugrad.set_grad_enabled(False)
    copy = mode.clone()
    assert st() == (False, False) and copy.mode is False and copy.prev is False
    with copy:
        assert st() == (False, False)
    assert st() == (False, False)
    gpugrad.set_grad_enabled(True)


def test_inference_mode_clone_keeps_its_mode():
    copy = gpugrad.inference_mode(False).clone()
    assert copy.mode is False
    with gpugrad.inference_mode():
        with copy:
            assert st() == (True, False)


# -- decorators ------------------------------------------------------------------------------
DECORATORS = {   # name -> (decorator, state inside)
    "no_grad()": (gpugrad.no_grad(), (False, False)),
    "no_grad": (gpugrad.no_grad, (False, False)),
    "enable_grad()": (gpugrad.enable_grad(), (True, False)),
    "enable_grad": (gpugrad.enable_grad, (True, False)),
    "inference_mode()": (gpugrad.inference_mode(), (False, True)),
    "inference_mode": (gpugrad.inference_mode, (False, True)),
    "inference_mode(mode=False)": (gpugrad.inference_mode(mode=False), (True, False)),
    "set_grad_enabled(False)": ("set_grad_enabled(False)", (False, False)),
}


def decorator(name):
    deco, inside = DECORATORS[name]
    if isinstance(deco, str):   # made here: making it switches the mode until it decorates
        deco = gpugrad.set_grad_enabled(False)
    return deco, inside


@pytest.mark.parametrize("name", DECORATORS)
@pytest.mark.parametrize("outer", [True, False])
def test_decorated_function(name, outer):
    gpugrad.set_grad_enabled(outer)
    deco, inside = decorator(name)

    def f(a, b=2):
        """doc"""
        return st(), a + b

    g = deco(f)
    assert st() == (outer, False)     # decorating switches nothing
    assert g.__name__ == "f" and g.__doc__ == "doc" and g.__wrapped__ is f
    assert g(1, b=3) == (inside, 4)
    assert st() == (outer, False)
    gpugrad.set_grad_enabled(True)


@pytest.mark.parametrize("name", DECORATORS)
@pytest.mark.parametrize("outer", [True, False])
def test_decorated_generator_gets_the_mode_on_every_resume(name, outer):
    gpugrad.set_grad_enabled(outer)
    deco, inside = decorator(name)

    @deco
    def gen(start):
        got = yield start, st()
        try:
            got = yield got, st()
        except KeyError:
            got = yield "caught", st()
        yield got, st()
        return "done"

    assert inspect.isgeneratorfunction(gen) and gen.__name__ == "gen"
    here = (outer, False)
    g = gen(0)
    assert st() == here
    assert next(g) == (0, inside) and st() == here
    assert g.send(5) == (5, inside) and st() == here
    assert g.throw(KeyError("k")) == ("caught", inside) and st() == here
    assert g.send(7) == (7, inside) and st() == here
    with pytest.raises(StopIteration) as stop:
        next(g)
    assert stop.value.value == "done" and st() == here
    gpugrad.set_grad_enabled(True)


def test_generator_close_and_uncaught_throw_run_under_the_mode():
    seen = []

    @gpugrad.no_grad
    def gen():
        try:
            yield 1
            yield 2
        finally:
            seen.append(st())

    g = gen()
    next(g)
    g.close()
    assert seen == [(False, False)] and st() == (True, False)

    g = gen()
    next(g)
    with pytest.raises(ZeroDivisionError):
        g.throw(ZeroDivisionError())
    assert seen[-1] == (False, False) and st() == (True, False)

    @gpugrad.inference_mode()
    def failing():
        yield st()
        raise ValueError(st())

    g = failing()
    assert next(g) == (False, True)
    with pytest.raises(ValueError) as e:
        next(g)
    assert e.value.args == ((False, True),) and st() == (True, False)


def test_generator_mode_changes_do_not_leak_or_persist():
    @gpugrad.no_grad()
    def gen():
        gpugrad.set_grad_enabled(True)   # switched inside: seen until the next yield only
        yield st()
        yield st()

    g = gen()
    assert next(g) == (True, False) and st() == (True, False)
    with gpugrad.enable_grad():          # the caller's grad mode does not reach the body
        assert next(g) == (False, False)
    g = gen()
    next(g)
    with gpugrad.inference_mode():       # no_grad leaves inference mode as it finds it
        assert next(g) == (False, True)
        assert st() == (False, True)


def test_generator_for_loop_and_yield_from():
    @gpugrad.enable_grad()
    def inner():
        yield st()
        return "r"

    @gpugrad.no_grad()
    def outer():
        res = yield from inner()
        yield res, st()

    with gpugrad.no_grad():
        assert list(outer()) == [(True, False), ("r", (False, False))]


def test_decorated_generator_records_per_mode():
    x = gpugrad.ones(2, requires_grad=True)

    @gpugrad.no_grad()
    def gen():
        while True:
            yield x * 2

    g = gen()
    assert not next(g).requires_grad
    assert (x * 2).requires_grad
    assert not next(g).requires_grad


def test_async_functions_are_not_special():
    """As in PyTorch: the mode covers making the coroutine or async generator, not its body."""
    @gpugrad.no_grad()
    async def coro():
        return st()

    @gpugrad.no_grad()
    async def agen():
        yield st()

    async def collect():
        return [v async for v in agen()]

    assert asyncio.run(coro()) == (True, False)
    assert asyncio.run(collect()) == [(True, False)]


# -- threads ---------------------------------------------------------------------------------
def run_in_thread(fn):
    out = {}

    def target():
        out["value"] = fn()

    th = threading.Thread(target=target)
    th.start()
    th.join()
    return out["value"]


@pytest.mark.parametrize("name", MODES)
def test_modes_are_thread_local(name):
    make, on, _ = MODES[name]
    with make():
        assert run_in_thread(st) == (True, False)   # a new thread starts with the defaults
        assert st() == on

    def switch():
        with gpugrad.inference_mode():
            gpugrad.set_grad_enabled(False)
            return st()

    assert run_in_thread(switch) == (False, True) and st() == (True, False)


def test_generator_resumed_in_another_thread():
    @gpugrad.inference_mode()
    def gen():
        while True:
            yield st()

    g = gen()
    assert next(g) == (False, True)

    def resume():
        with gpugrad.no_grad():
            return next(g), st()

    assert run_in_thread(resume) == ((False, True), (False, False))
    assert st() == (True, False)


def test_threads_record_independently():
    x = gpugrad.ones(2, requires_grad=True)
    barrier = threading.Barrier(2)
    results = {}

    def worker(key, make):
        with make():
            barrier.wait()
            results[key] = (x * 2).requires_grad
            barrier.wait()

    threads = [threading.Thread(target=worker, args=("off", gpugrad.no_grad)),
               threading.Thread(target=worker, args=("on", gpugrad.enable_grad))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert results == {"off": False, "on": True}


# -- inference tensors -----------------------------------------------------------------------
def test_enable_grad_inside_inference_mode_does_not_record(device):
    x = gpugrad.ones(3, device=device, requires_grad=True)
    with gpugrad.inference_mode():
        w = gpugrad.ones(3, device=device, requires_grad=True)
        assert w.requires_grad and w.is_inference()
        with gpugrad.enable_grad():
            assert grad_state.enabled is False
            for y in (x * 2, w * 2, gpugrad.ones(3, device=device) * 2):
                assert not y.requires_grad and y.grad_fn is None and y.is_inference()
    y = x * 2
    assert y.requires_grad and y.grad_fn.name() == "MulBackward0" and not y.is_inference()


def test_backward_inside_inference_mode(device):
    x = gpugrad.ones(2, device=device, requires_grad=True)
    y = (x * x).sum()
    with gpugrad.inference_mode():
        y.backward(retain_graph=True)
        with gpugrad.enable_grad():
            (g,) = gpugrad.autograd.grad(y, x)
    np.testing.assert_array_equal(to_numpy(x.grad), [2.0, 2.0])
    np.testing.assert_array_equal(to_numpy(g), [2.0, 2.0])


def test_inference_tensor_has_no_version_counter(device):
    t = make_inference(3, device=device)
    for inside in (False, True):
        with gpugrad.inference_mode(inside):
            with pytest.raises(RuntimeError) as e:
                t._version
            assert str(e.value) == NO_VERSION
    normal = gpugrad.ones(3, device=device)
    with gpugrad.inference_mode():
        normal.add_(1)
        assert normal._version == 1


def test_requires_grad_on_inference_tensor(device):
    t = make_inference(3, device=device)
    with pytest.raises(RuntimeError) as e:
        t.requires_grad_()
    assert str(e.value) == RG_OUTSIDE
    with pytest.raises(RuntimeError) as e:
        t.requires_grad = True
    assert str(e.value) == RG_OUTSIDE
    assert not t.requires_grad
    assert t.requires_grad_(False) is t and not t.requires_grad
    t.requires_grad = False
    with gpugrad.inference_mode():
        assert t.requires_grad_() is t and t.requires_grad
    clone = make_inference(3, device=device).clone()
    assert not clone.is_inference() and clone.requires_grad_().requires_grad


def test_requires_grad_dtype_check_comes_first(device):
    t = make_inference(3, device=device, dtype=gpugrad.int64)
    with pytest.raises(RuntimeError) as e:
        t.requires_grad_()
    assert "floating point" in str(e.value)


INPLACE = {
    "add_": lambda t: t.add_(1),
    "mul_": lambda t: t.mul_(2),
    "zero_": lambda t: t.zero_(),
    "fill_": lambda t: t.fill_(2.0),
    "copy_": lambda t: t.copy_(gpugrad.zeros(4, device=t.device)),
    "setitem": lambda t: t.__setitem__(0, 5.0),
    "iadd": lambda t: t.__iadd__(1),
    "unsqueeze_": lambda t: t.unsqueeze_(0),
}


@pytest.mark.parametrize("op", INPLACE)
def test_inplace_on_inference_tensor_inside_inference_mode(op, device):
    t = make_inference(4, device=device)
    with gpugrad.inference_mode():
        INPLACE[op](t)
        assert t.is_inference()


@pytest.mark.parametrize("grad", [True, False])
@pytest.mark.parametrize("op", INPLACE)
def test_inplace_on_inference_tensor_outside_inference_mode(op, grad, device):
    t = make_inference(4, device=device)
    with gpugrad.set_grad_enabled(grad):
        with pytest.raises(RuntimeError) as e:
            INPLACE[op](t)
    assert str(e.value) == INPLACE_OUTSIDE
