"""LBFGS, Rprop, ASGD and the CyclicLR, MultiplicativeLR and ChainedScheduler schedules: first
steps by hand, argument errors with PyTorch's messages, and (when PyTorch is installed) several
float64 steps against torch.optim."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
import gpugrad.optim as optim

L = optim.lr_scheduler


def param(values, device="cpu"):
    return gpugrad.nn.Parameter(gpugrad.tensor(np.asarray(values, np.float64), device=device))


def set_grad(p, values):
    p.grad = gpugrad.tensor(np.asarray(values, np.float64), device=p.device)


def values(p):
    return to_numpy(p.detach())


# -- LBFGS ----------------------------------------------------------------------------------------
A = np.array([1.0, 4.0])          # f(x) = sum(A x^2) / 2, gradient A x


def quadratic_closure(opt, x):
    def closure():
        opt.zero_grad()
        loss = (gpugrad.tensor(A, device=x.device) * x * x).sum() / 2
        loss.backward()
        return loss
    return closure


def test_lbfgs_first_iteration_is_a_gradient_step_of_l1_length_one(device):
    x = param([1.0, -1.0], device)
    opt = optim.LBFGS([x], max_iter=1)
    loss = opt.step(quadratic_closure(opt, x))
    # g = [1, -4], |g|_1 = 5: t = min(1, 1 / 5) lr = 0.2, x = x - 0.2 g
    assert float(loss) == pytest.approx(2.5, abs=0)
    np.testing.assert_allclose(values(x), [0.8, -0.2], rtol=1e-15)
    st = opt.state[x]
    assert st["func_evals"] == 1 and st["n_iter"] == 1 and st["t"] == pytest.approx(0.2, abs=0)
    np.testing.assert_array_equal(to_numpy(st["d"]), [-1.0, 4.0])
    assert st["old_dirs"] == [] and st["H_diag"] == 1 and st["prev_loss"] == 2.5


def test_lbfgs_second_iteration_is_the_bfgs_update(device):
    x = param([1.0, -1.0], device)
    opt = optim.LBFGS([x], lr=1, max_iter=2, max_eval=10)   # default max_eval: 2 * 5 // 4
    opt.step(quadratic_closure(opt, x))
    x0, x1 = np.array([1.0, -1.0]), np.array([0.8, -0.2])
    g0, g1 = A * x0, A * x1
    s, y = x1 - x0, g1 - g0
    rho, gamma = 1 / (y @ s), (y @ s) / (y @ y)
    eye = np.eye(2)   # H = (I - rho s y^T) gamma I (I - rho y s^T) + rho s s^T, one pair
    H = (eye - rho * np.outer(s, y)) @ (gamma * eye) @ (eye - rho * np.outer(y, s)) \
        + rho * np.outer(s, s)
    np.testing.assert_allclose(values(x), x1 - H @ g1, rtol=1e-13)
    st = opt.state[x]
    assert st["func_evals"] == 2 and st["n_iter"] == 2 and len(st["old_dirs"]) == 1
    assert st["H_diag"] == pytest.approx(gamma, rel=1e-15) and st["ro"] == [pytest.approx(rho)]


def test_lbfgs_strong_wolfe_solves_a_quadratic():
    M = np.array([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 5.0]])
    b = np.array([1.0, -2.0, 0.5])
    x = param([0.0, 0.0, 0.0])
    opt = optim.LBFGS([x], line_search_fn="strong_wolfe", tolerance_grad=1e-12,
                      tolerance_change=0)

    def closure():
        opt.zero_grad()
        loss = (x * (gpugrad.tensor(M) @ x)).sum() / 2 - (gpugrad.tensor(b) * x).sum()
        loss.backward()
        return loss
    opt.step(closure)
    np.testing.assert_allclose(values(x), np.linalg.solve(M, b), rtol=1e-8)
    assert opt.state[x]["func_evals"] <= opt.defaults["max_eval"] == 25


def test_lbfgs_stops_at_once_on_a_zero_gradient():
    x = param([0.0, 0.0])
    opt = optim.LBFGS([x])
    loss = opt.step(quadratic_closure(opt, x))
    assert float(loss) == 0.0 and values(x).tolist() == [0.0, 0.0]
    assert opt.state[x]["func_evals"] == 1 and opt.state[x]["n_iter"] == 0
    assert "d" not in opt.state[x]


def test_lbfgs_history_is_capped_and_params_without_grad_stay():
    x, unused = param([1.5, -2.0]), param([7.0])
    opt = optim.LBFGS([x, unused], history_size=2, max_iter=6, tolerance_change=0)

    def closure():
        opt.zero_grad()
        loss = ((x[0] - 1) ** 4 + (x[1] + x[0]) ** 2).sum()
        loss.backward()
        return loss
    opt.step(closure)
    st = opt.state[x]
    assert len(st["old_dirs"]) == len(st["old_stps"]) == len(st["ro"]) == 2
    assert st["d"].shape == (3,) and values(unused).tolist() == [7.0]


def test_lbfgs_state_dict_round_trip_continues_the_same_run():
    def run(resume):
        x = param([-1.2, 1.0])
        opt = optim.LBFGS([x], max_iter=3, history_size=3, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2
            loss.backward()
            return loss
        opt.step(closure)
        if resume:
            saved, start = opt.state_dict(), values(x).copy()
            x = param(start)
            opt = optim.LBFGS([x], max_iter=3, history_size=3, line_search_fn="strong_wolfe")
            opt.load_state_dict(saved)
        opt.step(closure)
        return values(x), opt.state[x]["func_evals"]

    (a, na), (b, nb) = run(False), run(True)
    np.testing.assert_array_equal(a, b)
    assert na == nb


def test_lbfgs_argument_errors():
    with pytest.raises(ValueError, match="^Invalid learning rate: -1$"):
        optim.LBFGS([param([0.0])], lr=-1)
    with pytest.raises(ValueError, match="^LBFGS doesn't support per-parameter options "
                                         "\\(parameter groups\\)$"):
        optim.LBFGS([{"params": [param([0.0])]}, {"params": [param([1.0])]}])
    x = param([1.0, 1.0])
    opt = optim.LBFGS([x], line_search_fn="armijo")
    with pytest.raises(RuntimeError, match="^only 'strong_wolfe' is supported$"):
        opt.step(quadratic_closure(opt, x))
    with pytest.raises(TypeError):
        opt.step()                                   # a closure is required
    assert optim.LBFGS([x], max_iter=8).defaults["max_eval"] == 10


def _rosenbrock(lib, xs):
    v = lib.cat([xs[0], xs[1].reshape(-1)])
    return (100 * (v[1:] - v[:-1] ** 2) ** 2 + (1 - v[:-1]) ** 2).sum()


@pytest.mark.parametrize("kwargs, steps", [
    (dict(lr=0.1), 3),
    (dict(lr=0.05, history_size=2), 4),
    (dict(line_search_fn="strong_wolfe"), 3),
    (dict(line_search_fn="strong_wolfe", history_size=3, max_iter=10), 5),
    (dict(line_search_fn="strong_wolfe", max_iter=30, max_eval=12), 2),
])
def test_lbfgs_matches_torch(kwargs, steps):
    torch = pytest.importorskip("torch")
    start = [np.array([-1.5, 2.0]), np.array([[0.5], [-0.7]])]
    ours = [gpugrad.nn.Parameter(gpugrad.tensor(a.copy())) for a in start]
    theirs = [torch.nn.Parameter(torch.tensor(a.copy())) for a in start]
    oa, ob = optim.LBFGS(ours, **kwargs), torch.optim.LBFGS(theirs, **kwargs)
    def closure_for(opt, xs, lib):
        def closure():
            opt.zero_grad()
            loss = _rosenbrock(lib, xs)
            loss.backward()
            return loss
        return closure

    for _ in range(steps):
        losses = [float(opt.step(closure_for(opt, xs, lib)).detach())
                  for opt, xs, lib in ((oa, ours, gpugrad), (ob, theirs, torch))]
        assert losses[0] == pytest.approx(losses[1], rel=1e-12)
        # NOTE: the line search branches on comparisons, so the last bits of the dot products
        # (summed in another order than torch's) may grow over the iterations
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(values(a), b.detach().numpy(), rtol=1e-10, atol=1e-12)
        sa, sb = oa.state[ours[0]], ob.state[theirs[0]]
        assert (sa["func_evals"], sa["n_iter"]) == (sb["func_evals"], sb["n_iter"])
        assert len(sa["old_dirs"]) == len(sb["old_dirs"])
    assert sorted(sa) == sorted(sb)


# -- Rprop ----------------------------------------------------------------------------------------
def test_rprop_steps_by_hand(device):
    p = param([1.0, 2.0, 3.0], device)
    opt = optim.Rprop([p], lr=0.1)
    for g in ([1.0, -1.0, 2.0],    # no history: every step size stays lr
              [2.0, 1.0, 0.0],     # same sign: x1.2; flipped: x0.5 and no move; zero: no move
              [3.0, -1.0, -1.0]):  # after a flip the gradient counts as 0: size kept
        set_grad(p, g)
        opt.step()
    np.testing.assert_allclose(values(p), [1 - 0.1 - 0.12 - 0.144, 2.1 + 0.05, 2.9 + 0.1],
                               rtol=1e-15)
    st = opt.state[p]
    np.testing.assert_allclose(to_numpy(st["step_size"]), [0.144, 0.05, 0.1], rtol=1e-15)
    np.testing.assert_array_equal(to_numpy(st["prev"]), [3.0, -1.0, -1.0])
    assert float(st["step"]) == 3.0


def test_rprop_clamps_step_sizes_and_maximizes():
    p = param([0.0, 0.0])
    opt = optim.Rprop([p], lr=0.1, etas=(0.25, 2.0), step_sizes=(0.03, 0.15), maximize=True)
    for g in ([1.0, 1.0], [1.0, -1.0], [1.0, -1.0]):
        set_grad(p, g)
        opt.step()
    # sizes: [0.1, 0.1] -> [0.15 (0.2 clamped), 0.03 (0.025 clamped)] -> [0.15, 0.03]
    np.testing.assert_allclose(values(p), [0.1 + 0.15 + 0.15, 0.1 + 0.0 - 0.03], rtol=1e-15)


def test_rprop_argument_errors():
    with pytest.raises(ValueError, match="^Invalid learning rate: -0.1$"):
        optim.Rprop([param([0.0])], lr=-0.1)
    for etas in ((1.5, 1.2), (0.5, 0.9), (0.0, 1.2)):
        with pytest.raises(ValueError, match=f"^Invalid eta values: {etas[0]}, {etas[1]}$"):
            optim.Rprop([param([0.0])], etas=etas)


# -- ASGD -----------------------------------------------------------------------------------------
def test_asgd_steps_and_averages_by_hand(device):
    lr, lambd, alpha = 0.5, 0.1, 0.75
    p = param([1.0, -2.0], device)
    opt = optim.ASGD([p], lr=lr, lambd=lambd, alpha=alpha, t0=0)
    x, eta, mu, ax = np.array([1.0, -2.0]), lr, 1.0, None
    iterates = []
    for t, g in enumerate(([0.5, 1.0], [1.0, -1.0], [-2.0, 0.5], [0.25, 0.25]), start=1):
        set_grad(p, g)
        opt.step()
        x = x * (1 - lambd * eta) - eta * np.array(g)
        ax = x.copy() if mu == 1 else ax + (x - ax) * mu
        iterates.append(x)
        # eta and mu are float32 scalars under a float32 default dtype, as in PyTorch
        eta = float(np.float32(lr / (1 + lambd * lr * t) ** alpha))
        mu = float(np.float32(1 / max(1, t)))
        np.testing.assert_array_equal(values(p), x)          # the same operations, in order
        np.testing.assert_array_equal(to_numpy(opt.state[p]["ax"]), ax)
        assert float(opt.state[p]["eta"]) == eta and float(opt.state[p]["mu"]) == mu
    # from t0 = 0 on, ax is the running mean of the iterates after the first
    np.testing.assert_allclose(ax, np.mean(iterates[1:], axis=0), rtol=1e-7)


def test_asgd_weight_decay_and_scalar_dtype():
    gpugrad.set_default_dtype(gpugrad.float64)   # restored by the conftest fixture
    p = param([2.0])
    opt = optim.ASGD([p], lr=0.1, weight_decay=0.5, lambd=0.0)
    set_grad(p, [1.0])
    opt.step()
    assert values(p).tolist() == pytest.approx([2.0 - 0.1 * (1.0 + 0.5 * 2.0)], abs=1e-15)
    assert opt.state[p]["eta"].dtype == gpugrad.float64
    assert sorted(opt.state[p]) == ["ax", "eta", "mu", "step"]


def test_asgd_argument_errors():
    with pytest.raises(ValueError, match="^Invalid learning rate: -1$"):
        optim.ASGD([param([0.0])], lr=-1)
    with pytest.raises(ValueError, match="^Invalid weight_decay value: -0.5$"):
        optim.ASGD([param([0.0])], weight_decay=-0.5)


@pytest.mark.parametrize("name, kwargs", [
    ("Rprop", {}),
    ("Rprop", dict(lr=0.1, etas=(0.3, 1.7), step_sizes=(1e-3, 0.2), maximize=True)),
    ("ASGD", {}),
    ("ASGD", dict(lr=0.05, lambd=1e-3, t0=3)),
    ("ASGD", dict(lr=0.1, weight_decay=0.1, t0=2, alpha=0.5, maximize=True)),
])
def test_rprop_and_asgd_match_torch_for_eight_steps(name, kwargs):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3))
    a, b = gpugrad.nn.Parameter(gpugrad.tensor(w.copy())), torch.nn.Parameter(torch.tensor(w))
    oa, ob = getattr(optim, name)([a], **kwargs), getattr(torch.optim, name)([b], **kwargs)
    for i in range(8):
        g = rng.standard_normal((4, 3))
        g[0, i % 3] = 0.0                        # zero gradients and sign flips on the way
        a.grad, b.grad = gpugrad.tensor(g), torch.tensor(g)
        oa.step()
        ob.step()
    np.testing.assert_allclose(values(a), b.detach().numpy(), rtol=1e-12, atol=1e-15)
    assert sorted(oa.state[a]) == sorted(ob.state[b])
    for key, theirs in ob.state[b].items():
        np.testing.assert_allclose(to_numpy(oa.state[a][key]), theirs.numpy(), rtol=1e-12,
                                   atol=1e-15)
        assert str(oa.state[a][key].dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]


# -- schedules ------------------------------------------------------------------------------------
def lrs(make, steps, opt=None, key=None):
    """The lr (and optionally another group entry) after construction and after each step."""
    opt = opt or optim.SGD([param([0.0])], lr=1.0, momentum=0.9)
    sched = make(opt)
    out = [opt.param_groups[0][key or "lr"]]
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(opt.param_groups[0][key or "lr"])
    return out


def test_cyclic_lr_triangular_modes():
    tri = lrs(lambda o: L.CyclicLR(o, 0.1, 1.0, step_size_up=2), 8)
    assert tri == pytest.approx([0.1, 0.55, 1.0, 0.55, 0.1, 0.55, 1.0, 0.55, 0.1], abs=1e-15)
    tri2 = lrs(lambda o: L.CyclicLR(o, 0.1, 1.0, step_size_up=2, mode="triangular2"), 8)
    assert tri2 == pytest.approx([0.1, 0.55, 1.0, 0.55, 0.1, 0.325, 0.55, 0.325, 0.1],
                                 abs=1e-15)
    exp = lrs(lambda o: L.CyclicLR(o, 0.1, 1.0, step_size_up=2, mode="exp_range", gamma=0.5), 3)
    assert exp == pytest.approx([0.1, 0.1 + 0.45 * 0.5, 0.1 + 0.9 * 0.25, 0.1 + 0.45 * 0.125],
                                abs=1e-15)
    asym = lrs(lambda o: L.CyclicLR(o, 0.0, 1.0, step_size_up=1, step_size_down=3), 4)
    assert asym == pytest.approx([0.0, 1.0, 2 / 3, 1 / 3, 0.0], abs=1e-15)
    custom = lrs(lambda o: L.CyclicLR(o, 0.0, 1.0, step_size_up=1, scale_fn=lambda x: 0.1 * x,
                                      scale_mode="iterations"), 3)
    assert custom == pytest.approx([0.0, 0.1, 0.0, 0.3], abs=1e-15)


def test_cyclic_lr_cycles_momentum_and_adams_beta1():
    moms = lrs(lambda o: L.CyclicLR(o, 0.1, 1.0, step_size_up=2), 4, key="momentum")
    assert moms == pytest.approx([0.9, 0.85, 0.8, 0.85, 0.9], abs=1e-15)
    adam = optim.Adam([param([0.0])], lr=1e-3)
    betas = lrs(lambda o: L.CyclicLR(o, 1e-3, 1e-2, step_size_up=1, base_momentum=0.85,
                                     max_momentum=0.95), 2, opt=adam, key="betas")
    assert [b[0] for b in betas] == pytest.approx([0.95, 0.85, 0.95], abs=1e-15)
    assert all(b[1] == 0.999 for b in betas)
    plain = lrs(lambda o: L.CyclicLR(o, 0.1, 1.0, 2, cycle_momentum=False), 2, key="momentum")
    assert plain == [0.9, 0.9, 0.9]


def test_cyclic_lr_errors_and_state_dict():
    opt = optim.SGD([param([0.0])], lr=1.0)
    with pytest.raises(ValueError, match="^mode is invalid and scale_fn is None$"):
        L.CyclicLR(opt, 0.1, 1.0, mode="sawtooth")
    with pytest.raises(ValueError, match="^optimizer must support momentum or beta1 with "
                                         "`cycle_momentum` option enabled$"):
        L.CyclicLR(optim.Adagrad([param([0.0])]), 0.1, 1.0)
    with pytest.raises(ValueError, match="^max_lr must have the same length as "
                                         "optimizer.param_groups. max_lr has 2 values, "
                                         "param_groups has 1.$"):
        L.CyclicLR(opt, 0.1, [1.0, 2.0])
    with pytest.raises(TypeError, match="^int is not an Optimizer$"):
        L.CyclicLR(5, 0.1, 1.0)
    sched = L.CyclicLR(opt, 0.1, 1.0, step_size_up=3, mode="triangular2")
    for _ in range(4):
        sched.step()
    state = sched.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 4
    other = optim.SGD([param([0.0])], lr=1.0)
    resumed = L.CyclicLR(other, 0.1, 1.0, step_size_up=3, mode="triangular2")
    resumed.load_state_dict(state)
    for _ in range(5):
        sched.step()
        resumed.step()
        assert resumed.get_last_lr() == sched.get_last_lr()


def test_multiplicative_lr_multiplies_the_previous_rate():
    assert lrs(lambda o: L.MultiplicativeLR(o, lambda e: 0.5), 3) == [1.0, 0.5, 0.25, 0.125]
    assert lrs(lambda o: L.MultiplicativeLR(o, lambda e: e), 4) == [1.0, 1.0, 2.0, 6.0, 24.0]
    opt = optim.SGD([param([0.0])], lr=1.0)
    with pytest.raises(ValueError, match="^Expected 1 lr_lambdas, but got 2$"):
        L.MultiplicativeLR(opt, [lambda e: 1.0] * 2)
    with pytest.raises(TypeError, match="^lr_lambda should be a function, but got float$"):
        L.MultiplicativeLR(opt, 0.5)
    # a plain function is not state: PyTorch saves None in its place
    assert L.MultiplicativeLR(opt, lambda e: 0.9).state_dict()["lr_lambdas"] == [None]


def test_chained_scheduler_composes_the_factors():
    got = lrs(lambda o: L.ChainedScheduler([L.StepLR(o, 2, 0.5), L.ExponentialLR(o, 0.9)]), 6)
    assert got == pytest.approx([0.5 ** (e // 2) * 0.9 ** e for e in range(7)], rel=1e-14)
    got = lrs(lambda o: L.ChainedScheduler([L.LinearLR(o, 0.5, total_iters=2),
                                            L.ConstantLR(o, 0.5, total_iters=3)]), 4)
    assert got == pytest.approx([0.25, 0.375, 0.5, 1.0, 1.0], rel=1e-14)
    got = lrs(lambda o: L.ChainedScheduler([L.ExponentialLR(o, 0.5),
                                            L.MultiplicativeLR(o, lambda e: 0.1)]), 2)
    assert got == pytest.approx([1.0, 0.05, 0.0025], rel=1e-14)
    got = lrs(lambda o: L.ChainedScheduler([L.ExponentialLR(o, 0.5),
                                            L.LambdaLR(o, lambda e: 0.1 * (e + 1))]), 2)
    assert got == pytest.approx([0.1, 0.2, 0.3], rel=1e-14)   # LambdaLR sets the rate outright


def test_chained_scheduler_state_dict_nests_its_schedulers():
    opt = optim.SGD([param([0.0])], lr=1.0)
    chained = L.ChainedScheduler([L.StepLR(opt, 2, 0.5), L.ExponentialLR(opt, 0.9)])
    for _ in range(3):
        chained.step()
    state = chained.state_dict()
    assert "optimizer" not in state and [s["last_epoch"] for s in state["_schedulers"]] == [3, 3]
    opt2 = optim.SGD([param([0.0])], lr=1.0)
    resumed = L.ChainedScheduler([L.StepLR(opt2, 2, 0.5), L.ExponentialLR(opt2, 0.9)])
    resumed.load_state_dict(state)
    opt2.param_groups[0]["lr"] = opt.param_groups[0]["lr"]   # the optimizer's own state
    for _ in range(3):
        chained.step()
        resumed.step()
        assert resumed.get_last_lr() == pytest.approx(chained.get_last_lr(), rel=1e-15)


def test_chained_scheduler_errors():
    opt, other = optim.SGD([param([0.0])], lr=1.0), optim.SGD([param([0.0])], lr=1.0)
    with pytest.raises(ValueError, match="^ChainedScheduler expects at least one scheduler to be "
                                         "chained, but got no scheduler.$"):
        L.ChainedScheduler([])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau` scheduler as it "
                                         "requires additional kwargs .* at index 1 "):
        L.ChainedScheduler([L.StepLR(opt, 2), L.ReduceLROnPlateau(opt)])
    with pytest.raises(ValueError, match="expects all schedulers to belong to the same optimizer, "
                                         "but got scheduler ExponentialLR at index 1"):
        L.ChainedScheduler([L.StepLR(opt, 2), L.ExponentialLR(other, 0.9)])
    with pytest.raises(TypeError, match="at index 0 should have `optimizer` as its attribute"):
        L.ChainedScheduler([object()], optimizer=opt)


SCHEDULES = [
    ("SGD", lambda o, S: S.CyclicLR(o, 0.1, 1.0, step_size_up=4)),
    ("SGD", lambda o, S: S.CyclicLR(o, 0.1, 1.0, 3, 5, mode="triangular2")),
    ("SGD", lambda o, S: S.CyclicLR(o, 0.1, 1.0, 3, mode="exp_range", gamma=0.9)),
    ("SGD", lambda o, S: S.CyclicLR(o, 0.1, 1.0, 3, scale_fn=lambda x: 0.5 ** x,
                                    scale_mode="iterations")),
    ("Adam", lambda o, S: S.CyclicLR(o, 1e-3, 1e-2, 3, base_momentum=0.85, max_momentum=0.95)),
    ("SGD", lambda o, S: S.MultiplicativeLR(o, lambda e: 0.9 if e % 2 else 1.05)),
    ("SGD", lambda o, S: S.ChainedScheduler([S.StepLR(o, 3, 0.5), S.ExponentialLR(o, 0.9)])),
    ("SGD", lambda o, S: S.ChainedScheduler([S.LinearLR(o, 0.2, total_iters=4),
                                             S.CosineAnnealingLR(o, 6, 0.01)])),
    ("SGD", lambda o, S: S.ChainedScheduler([S.ConstantLR(o, 0.5, total_iters=3),
                                             S.MultiplicativeLR(o, lambda e: 0.95),
                                             S.PolynomialLR(o, 10, 2.0)])),
    ("SGD", lambda o, S: S.ChainedScheduler([S.MultiStepLR(o, [2, 5, 5], 0.5),
                                             S.LambdaLR(o, lambda e: 1 / (e + 1)),
                                             S.ExponentialLR(o, 0.9)])),
]


@pytest.mark.parametrize("name, make", SCHEDULES)
def test_new_schedules_match_torch(name, make):
    torch = pytest.importorskip("torch")
    kwargs = dict(lr=0.5, momentum=0.9) if name == "SGD" else dict(lr=0.01)
    oa = getattr(optim, name)([param([0.0])], **kwargs)
    ob = getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)], **kwargs)
    sa, sb = make(oa, optim.lr_scheduler), make(ob, torch.optim.lr_scheduler)
    key = "momentum" if name == "SGD" else "betas"
    for _ in range(25):
        ga, gb = oa.param_groups[0], ob.param_groups[0]
        assert ga["lr"] == pytest.approx(gb["lr"], rel=1e-12, abs=1e-15)
        assert np.allclose(ga[key], gb[key], rtol=1e-12, atol=0)
        oa.step()
        ob.step()
        sa.step()
        sb.step()
        assert sa.get_last_lr() == pytest.approx(sb.get_last_lr(), rel=1e-12, abs=1e-15)
    assert math.isfinite(sa.get_last_lr()[0])
