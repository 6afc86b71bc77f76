"""Every schedule of gpugrad.optim.lr_scheduler replayed against torch.optim.lr_scheduler
(skipped without PyTorch): alone, with a hand edit of the lr, resumed through state_dict or
last_epoch, next to a second schedule; their state dicts, warnings and errors."""
from __future__ import annotations

import warnings

import pytest

import gpugrad

from .params import messages

METRICS = [1.0, 0.9, 0.9, 0.9, 0.95, 0.9, 0.9, 0.8, 0.8, 0.8] + [0.8, 0.7] * 15
SCHEDULES = {   # kw: last_epoch, when resuming
    "StepLR": lambda L, o, **kw: L.StepLR(o, 3, 0.5, **kw),
    "MultiStepLR": lambda L, o, **kw: L.MultiStepLR(o, [2, 5, 5, 9], 0.3, **kw),
    "ConstantLR": lambda L, o, **kw: L.ConstantLR(o, 0.4, total_iters=4, **kw),
    "LinearLR": lambda L, o, **kw: L.LinearLR(o, 0.25, 0.9, total_iters=6, **kw),
    "ExponentialLR": lambda L, o, **kw: L.ExponentialLR(o, 0.9, **kw),
    "PolynomialLR": lambda L, o, **kw: L.PolynomialLR(o, total_iters=8, power=2.0, **kw),
    "CosineAnnealingLR": lambda L, o, **kw: L.CosineAnnealingLR(o, 7, eta_min=0.01, **kw),
    "LambdaLR": lambda L, o, **kw: L.LambdaLR(o, [lambda e: 0.9 ** e, lambda e: 1 / (e + 1)],
                                              **kw),
    "MultiplicativeLR": lambda L, o, **kw: L.MultiplicativeLR(o, lambda e: 0.95, **kw),
    "SequentialLR": lambda L, o, **kw: L.SequentialLR(
        o, [L.LinearLR(o, 0.1, total_iters=4), L.CosineAnnealingLR(o, 6)], [5], **kw),
    "ChainedScheduler": lambda L, o: L.ChainedScheduler([L.ConstantLR(o, 0.1, total_iters=4),
                                                         L.ExponentialLR(o, 0.9)]),
    "CyclicLR": lambda L, o, **kw: L.CyclicLR(o, [0.01, 0.02], 0.1, step_size_up=3,
                                              mode="triangular2", **kw),
    "OneCycleLR": lambda L, o, **kw: L.OneCycleLR(o, [1.0, 0.5], total_steps=70, **kw),
    "CosineAnnealingWarmRestarts": lambda L, o, **kw: L.CosineAnnealingWarmRestarts(
        o, 3, T_mult=2, eta_min=0.001, **kw),
    "ReduceLROnPlateau": lambda L, o: L.ReduceLROnPlateau(o, patience=2, factor=0.5),
}
PARTNERS = {   # (built before the schedule under test, the partner)
    "exp_after": (False, lambda L, o: L.ExponentialLR(o, 0.95)),
    "cosine_before": (True, lambda L, o: L.CosineAnnealingLR(o, 9, eta_min=0.001)),
}


def _opt(mod):
    ps = [mod.zeros(2, requires_grad=True), mod.zeros(2, requires_grad=True)]
    return mod.optim.SGD([{"params": [ps[0]]}, {"params": [ps[1]], "lr": 0.05}], lr=0.1,
                         momentum=0.9)


def _step(sched, i):
    sched.step(METRICS[i]) if type(sched).__name__ == "ReduceLROnPlateau" else sched.step()


def _snap(opt, scheds):
    return ([list(s.get_last_lr()) for s in scheds],
            [(g["lr"], g["momentum"]) for g in opt.param_groups])


def _resume(mod, name, opt, sched, how):
    """A fresh optimizer and scheduler that continue the run: through both state_dicts, or
    from the optimizer's state (holding initial_lr) and last_epoch."""
    L, fresh = mod.optim.lr_scheduler, _opt(mod)
    if how == "state_dict":
        new = SCHEDULES[name](L, fresh)
        fresh.load_state_dict(opt.state_dict())
        new.load_state_dict(sched.state_dict())
        return fresh, new
    fresh.load_state_dict(opt.state_dict())
    return fresh, SCHEDULES[name](L, fresh, last_epoch=sched.last_epoch)


def _run(mod, scenario, name, partner=None, n=30):
    """Every scheduler's last lr and the groups' lr and momentum after construction and after
    each of n epochs; then the warnings raised (an exception ends the trace)."""
    L = mod.optim.lr_scheduler
    out = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            opt = _opt(mod)
            before, other = partner or (False, None)
            scheds = [SCHEDULES[name](L, opt)]
            if other is not None:
                scheds.insert(0 if before else 1, other(L, opt))
            out.append(_snap(opt, scheds))
            for i in range(n):
                opt.step()
                for s in scheds:
                    _step(s, i)
                if scenario == "edit" and i == 5:
                    for g in opt.param_groups:
                        g["lr"] *= 0.5
                if scenario in ("state_dict", "last_epoch") and i == 9:
                    opt, new = _resume(mod, name, opt, scheds[0], scenario)
                    scheds = [new]
                out.append(_snap(opt, scheds))
        except Exception as e:   # both libraries must fail alike
            out.append((type(e).__name__, str(e)))
    out.append(sorted({str(w.message) for w in caught}))
    return out


def _close(a, b, path="trace"):
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), f"{path}: {a!r} != {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{path}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert float(a) == pytest.approx(float(b), rel=1e-12, abs=1e-15), f"{path}: {a} != {b}"
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


@pytest.mark.parametrize("scenario", ["alone", "edit", "state_dict", "last_epoch"])
@pytest.mark.parametrize("name", SCHEDULES)
def test_schedule_matches_torch(torch, name, scenario):
    if scenario == "last_epoch" and name in ("ChainedScheduler", "ReduceLROnPlateau"):
        pytest.skip("no last_epoch argument")
    _close(_run(gpugrad, scenario, name), _run(torch, scenario, name))


@pytest.mark.parametrize("partner", PARTNERS)
@pytest.mark.parametrize("name", SCHEDULES)
def test_two_schedules_match_torch(torch, name, partner):
    _close(_run(gpugrad, "alone", name, PARTNERS[partner]),
           _run(torch, "alone", name, PARTNERS[partner]))


@pytest.mark.parametrize("name", SCHEDULES)
def test_state_dict_matches_torch(torch, name):
    got = []
    for mod in (gpugrad, torch):
        opt = _opt(mod)
        sched = SCHEDULES[name](mod.optim.lr_scheduler, opt)
        for i in range(3):
            opt.step()
            _step(sched, i)
        sd = sched.state_dict()
        got.append((list(sd), repr({k: v for k, v in sd.items() if k != "_schedulers"}),
                    [list(s) for s in sd.get("_schedulers", [])]))
    assert got[0] == got[1]


def _warning_cases(mod):
    L = mod.optim.lr_scheduler
    mk = lambda: mod.optim.SGD([mod.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)

    def before_creation():
        o = mk()
        o.step()
        return L.StepLR(o, 2)

    def second_scheduler():
        o = mk()
        s = L.StepLR(o, 2)
        o.step()
        s.step()
        return L.ExponentialLR(o, 0.9)

    def stepped(s, *args):
        s.optimizer.step()
        s.step(*args)
        return s

    return [
        lambda: L.StepLR(mk(), 2).step(),
        lambda: stepped(L.StepLR(mk(), 2), 5).get_last_lr(),
        lambda: stepped(L.StepLR(mk(), 2)).get_lr(),
        lambda: before_creation().step(),
        lambda: second_scheduler().step(),
        lambda: L.StepLR(mk(), 2, last_epoch=3),
        lambda: L.ReduceLROnPlateau(mk()).step(1.0, 3),
        lambda: vars(stepped(L.CosineAnnealingWarmRestarts(mk(), 3, T_mult=2), 7.5)),
        lambda: L.OneCycleLR(mk(), 0.1, total_steps=5, pct_start=1),
        lambda: L.OneCycleLR(mk(), 0.1, epochs=2.0, steps_per_epoch=3),
        lambda: L.CosineAnnealingWarmRestarts(mk(), 3, eta_min="a"),
        lambda: L.ReduceLROnPlateau(mk(), mode="x"),
        lambda: L.CyclicLR(mk(), 0.1, [1.0, 2.0]),
        lambda: L.SequentialLR(mk(), [], []),
    ]


def test_warnings_and_errors_match_torch(torch):
    def record(case):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = case()
                if isinstance(result, dict):   # vars() of a scheduler
                    result = {k: v for k, v in result.items() if k != "optimizer"}
                result = repr(result)
            except Exception as e:
                result = (type(e).__name__, e.args)
        return result, messages(caught)

    ours, theirs = _warning_cases(gpugrad), _warning_cases(torch)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert record(a) == record(b), f"case {i}"
