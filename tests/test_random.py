"""Random numbers: the generator state round trip, random fills of tensors, bernoulli and
multinomial drawing from the right distribution."""
from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad


# -- runtime --------------------------------------------------------------------------------------
def test_rng_state_round_trip():
    state = gpugrad.get_rng_state()
    assert state.dtype == gpugrad.uint8
    first = gpugrad.rand(5).tolist() + gpugrad.randn(3).tolist()
    gpugrad.set_rng_state(state)
    assert gpugrad.rand(5).tolist() + gpugrad.randn(3).tolist() == first
    assert gpugrad.rand(5).tolist() != first[:5]
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        gpugrad.set_rng_state(gpugrad.zeros(3))


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


def t(data, device="cpu", requires_grad=False, dtype=gpugrad.float64):
    return gpugrad.tensor(np.asarray(data), dtype=dtype, device=device,
                          requires_grad=requires_grad)


def test_bernoulli_and_multinomial_draw_from_the_right_distribution(device):
    gpugrad.manual_seed(3)
    probs = t(np.full(20000, 0.3), device)
    draws = gpugrad.bernoulli(probs)
    assert set(np.unique(to_numpy(draws))) <= {0.0, 1.0} and draws.dtype == gpugrad.float64
    assert abs(to_numpy(draws).mean() - 0.3) < 0.02
    counts = np.bincount(to_numpy(gpugrad.multinomial(t([1.0, 2.0, 7.0], device), 20000, True)),
                         minlength=3) / 20000
    np.testing.assert_allclose(counts, [0.1, 0.2, 0.7], atol=0.02)
    firsts = np.bincount(to_numpy(gpugrad.multinomial(
        t(np.tile([1.0, 1.0, 0.0, 5.0], (4000, 1)), device), 2))[:, 0], minlength=4) / 4000
    np.testing.assert_allclose(firsts, [1 / 7, 1 / 7, 0.0, 5 / 7], atol=0.03)
    rows = to_numpy(gpugrad.multinomial(t(np.ones((50, 4)), device), 4))
    assert all(sorted(r) == [0, 1, 2, 3] for r in rows)   # without replacement: a permutation
    r = gpugrad.randint_like(t(np.zeros(1000), device), 3, 6)
    assert set(np.unique(to_numpy(r))) == {3.0, 4.0, 5.0} and r.dtype == gpugrad.float64
    with pytest.raises(RuntimeError, match=re.escape(
            "Expected p_in >= 0 && p_in <= 1 to be true, but got false.")):
        gpugrad.bernoulli(t([1.5], device))
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size"):
        gpugrad.multinomial(t([1.0, 1.0], device), 3)
    with pytest.raises(RuntimeError, match="not enough non-negative category to sample"):
        gpugrad.multinomial(t([1.0, 0.0, 0.0], device), 2)
    with pytest.raises(RuntimeError, match="probability tensor contains either"):
        gpugrad.multinomial(t([1.0, -1.0], device), 1)


def test_random_fills_follow_the_generator(device):
    def draw(method, *args):
        g = gpugrad.Generator(device=device) if device == "cpu" else None
        if g is None:
            gpugrad.manual_seed(3)
        else:
            g.manual_seed(3)
        return getattr(gpugrad.empty(2000, device=device, dtype=gpugrad.float64), method)(
            *args, generator=g)
    for method, args in (("bernoulli_", (0.25,)), ("exponential_", (2.0,)),
                         ("random_", (3, 9))):
        a, b = draw(method, *args), draw(method, *args)
        assert a.tolist() == b.tolist()
    np.testing.assert_allclose(to_numpy(draw("bernoulli_", 0.25)).mean(), 0.25, atol=0.04)
    np.testing.assert_allclose(to_numpy(draw("exponential_", 2.0)).mean(), 0.5, atol=0.05)
    r = to_numpy(draw("random_", 3, 9))
    assert set(np.unique(r)) == {3.0, 4.0, 5.0, 6.0, 7.0, 8.0}
    ints = gpugrad.empty(500, dtype=gpugrad.int64, device=device).random_(5)
    assert ints.dtype == gpugrad.int64 and set(to_numpy(ints).tolist()) == {0, 1, 2, 3, 4}
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to'"):
        gpugrad.empty(3, device=device).random_(5, 2)


# -- randint's overloads, as PyTorch parses them --------------------------------------------------
RANDINT_CALLS = [
    "randint(5, (3,))", "randint(2, 5, (3,))", "randint(high=5, size=(3,))",
    "randint(low=2, high=5, size=(3,))", "randint(5, size=(2, 2))", "randint(2, 5, size=[2])",
    "randint(5, (3,), dtype=lib.float32)",
    "randint(5, (4,), generator=g, dtype=lib.int32, device='cpu')",
    "randint(high=7, size=(4,), generator=g)",
]
RANDINT_ERRORS = [
    "randint(5)", "randint(high=5)", "randint(5, 3)", "randint(2.5, (3,))", "randint(5, 2, (3,))",
    "randint(0, (3,))", "randint(5, (-1,))", "randint(300, (3,), dtype=lib.uint8)",
    "randint(5, (3,), dtype=lib.bool)", "randint(5, (3,), foo=1)", "randint(5, (3,), generator=1)",
    "randint(1, 2, 3, (3,))", "randint(5, (2,), requires_grad=True)", "randint(low=2, size=(3,))",
    "randint(2, low=1, size=(3,))", "randint(2, 5, (3,), low=1)",
]


@pytest.mark.parametrize("call", RANDINT_CALLS)
def test_randint_overloads_match_torch(call):
    torch = pytest.importorskip("torch")
    shapes = {}
    for lib in (torch, gpugrad):
        g = lib.Generator().manual_seed(0)
        r = eval(f"lib.{call}", {"lib": lib, "g": g})
        shapes[lib] = (tuple(r.shape), str(r.dtype).removeprefix("torch."))
        low, high = (2, 5) if "2, 5" in call or "low=2" in call else (0, 7 if "7" in call else 5)
        assert all(low <= v < high for v in r.flatten().tolist())
    assert shapes[torch] == shapes[gpugrad]
    if "generator" in call:   # a seeded generator repeats its draws
        g1, g2 = gpugrad.Generator().manual_seed(3), gpugrad.Generator().manual_seed(3)
        assert (eval(f"lib.{call}", {"lib": gpugrad, "g": g1}).tolist()
                == eval(f"lib.{call}", {"lib": gpugrad, "g": g2}).tolist())


@pytest.mark.parametrize("call", RANDINT_ERRORS)
def test_randint_errors_match_torch(call):
    torch = pytest.importorskip("torch")
    raised = {}
    for lib in (torch, gpugrad):
        with pytest.raises(Exception) as e:
            eval(f"lib.{call}", {"lib": lib})
        raised[lib] = e.type
    assert raised[gpugrad] is raised[torch]
