"""Learning-rate schedules: ``scheduler.step()`` once per epoch sets each group's ``lr``.

Rates come from the closed forms (PyTorch's ``_get_closed_form_lr``), so they depend only on
the epoch count, not on earlier rates.
"""
from __future__ import annotations

import bisect
import math


class LRScheduler:
    def __init__(self, optimizer, last_epoch=-1):
        self.optimizer = optimizer
        for i, g in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                g.setdefault("initial_lr", g["lr"])
            elif "initial_lr" not in g:
                raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when "
                               "resuming an optimizer")
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def lr_at(self, base_lr, epoch):  # pragma: no cover - every schedule defines it
        raise NotImplementedError

    def get_lr(self):
        return [self.lr_at(base, self.last_epoch) for base in self.base_lrs]

    def get_last_lr(self):
        return self._last_lr

    def _initial_step(self):
        self.step()

    def step(self, epoch=None):
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        for g, lr in zip(self.optimizer.param_groups, self.get_lr()):
            g["lr"] = lr
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)


class StepLR(LRScheduler):
    """lr = base_lr * gamma ** (epoch // step_size)"""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr, epoch):
        return base_lr * self.gamma ** (epoch // self.step_size)


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (base_lr - eta_min) (1 + cos(pi epoch / T_max)) / 2"""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr, epoch):
        return self.eta_min + (base_lr - self.eta_min) * (
            1 + math.cos(math.pi * epoch / self.T_max)) / 2


class LambdaLR(LRScheduler):
    """lr = base_lr * lr_lambda(epoch)"""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        n = len(optimizer.param_groups)
        self.lr_lambdas = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else \
            [lr_lambda] * n
        if len(self.lr_lambdas) != n:
            raise ValueError(f"Expected {n} lr_lambdas, but got {len(self.lr_lambdas)}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * f(self.last_epoch) for base, f in zip(self.base_lrs, self.lr_lambdas)]

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}


class ExponentialLR(LRScheduler):
    """lr = base_lr * gamma ** epoch"""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr, epoch):
        return base_lr * self.gamma ** epoch


class MultiStepLR(LRScheduler):
    """lr = base_lr * gamma ** (number of milestones <= epoch)"""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones, self.gamma = sorted(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr, epoch):
        return base_lr * self.gamma ** bisect.bisect_right(self.milestones, epoch)


class LinearLR(LRScheduler):
    """lr = base_lr * (start_factor + (end_factor - start_factor) min(epoch, total_iters) /
    total_iters)"""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        if not 0 < start_factor <= 1 or not 0 <= end_factor <= 1:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr, epoch):
        frac = min(epoch, self.total_iters) / self.total_iters
        return base_lr * (self.start_factor + (self.end_factor - self.start_factor) * frac)


class PolynomialLR(LRScheduler):
    """lr = base_lr * (1 - min(epoch, total_iters) / total_iters) ** power"""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr, epoch):
        return base_lr * (1.0 - min(self.total_iters, epoch) / self.total_iters) ** self.power


class ConstantLR(LRScheduler):
    """lr = base_lr * factor for the first total_iters epochs, base_lr after"""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if not 0 <= factor <= 1:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr, epoch):
        return base_lr * (self.factor if epoch < self.total_iters else 1.0)


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from base_lr to eta_min over T_i epochs, then a restart at base_lr;
    T_0 for the first cycle, each next one T_mult times longer (SGDR)."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.T_cur
                                                                     / self.T_i)) / 2
                for base in self.base_lrs]

    def step(self, epoch=None):
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0 and self.T_mult > 1:
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch % self.T_0 if epoch >= self.T_0 else epoch
        self.last_epoch = math.floor(epoch)
        for g, lr in zip(self.optimizer.param_groups, self.get_lr()):
            g["lr"] = lr
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]


class SequentialLR(LRScheduler):
    """The given schedulers one after another: ``schedulers[i + 1]`` takes over at epoch
    ``milestones[i]`` (and starts from its own epoch 0)."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        if len(schedulers) < 1:
            raise ValueError("SequentialLR expects at least one scheduler, but got no scheduler.")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"Sequential Schedulers expects number of schedulers provided to be "
                             f"one more than the number of milestone points, but got number of "
                             f"schedulers {len(schedulers)} and the number of milestones to be "
                             f"equal to {len(milestones)}")
        for i, sch in enumerate(schedulers):
            if sch.optimizer is not optimizer:
                raise ValueError(f"Sequential Schedulers expects all schedulers to belong to the "
                                 f"same optimizer, but got scheduler at index {i} to be different "
                                 f"than the optimizer passed in.")
        self.optimizer, self._schedulers = optimizer, list(schedulers)
        self._milestones, self.last_epoch = list(milestones), last_epoch + 1
        for g in optimizer.param_groups:   # undo the later schedulers' first steps
            g["lr"] = g["initial_lr"]
        for sch in self._schedulers:
            sch.last_epoch -= 1
        self._schedulers[0]._initial_step()
        self._last_lr = self._schedulers[0].get_last_lr()

    def step(self, epoch=None):
        self.last_epoch += 1
        i = bisect.bisect_right(self._milestones, self.last_epoch)
        sch = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            sch.step(0)
        else:
            sch.step()
        self._last_lr = sch.get_last_lr()

    def state_dict(self):
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        out["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return out

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        for sch, sd in zip(self._schedulers, state.pop("_schedulers")):
            sch.load_state_dict(sd)
        self.__dict__.update(state)


class ReduceLROnPlateau:
    """Multiply each group's lr by ``factor`` once the metric passed to ``step`` has not
    improved (by ``threshold``, relative or absolute) for ``patience`` epochs; then wait
    ``cooldown`` epochs. Rates never go below ``min_lr``."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if mode not in ("min", "max"):
            raise ValueError(f"mode {mode} is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold mode {threshold_mode} is unknown!")
        n = len(optimizer.param_groups)
        min_lrs = list(min_lr) if isinstance(min_lr, (list, tuple)) else [min_lr] * n
        if len(min_lrs) != n:
            raise ValueError(f"expected {n} min_lrs, got {len(min_lrs)}")
        self.optimizer, self.min_lrs = optimizer, min_lrs
        self.mode, self.factor, self.patience = mode, factor, patience
        self.threshold, self.threshold_mode = threshold, threshold_mode
        self.cooldown, self.eps = cooldown, eps
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = self.cooldown_counter = self.last_epoch = 0
        self._last_lr = [g["lr"] for g in optimizer.param_groups]

    def _better(self, a, best):
        if self.threshold_mode == "rel":
            scale = 1 - self.threshold if self.mode == "min" else 1 + self.threshold
            return a < best * scale if self.mode == "min" else a > best * scale
        return (a < best - self.threshold) if self.mode == "min" else (a > best + self.threshold)

    def step(self, metrics):
        current = float(metrics)
        self.last_epoch += 1
        if self._better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for g, floor in zip(self.optimizer.param_groups, self.min_lrs):
                new = max(g["lr"] * self.factor, floor)
                if g["lr"] - new > self.eps:
                    g["lr"] = new
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def get_last_lr(self):
        return self._last_lr

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)


class OneCycleLR(LRScheduler):
    """The 1cycle policy, stepped once per batch: lr rises from max_lr / div_factor to max_lr
    over the first pct_start of the steps, then falls to initial_lr / final_div_factor; the
    momentum (or Adam's beta1) moves the other way between max_ and base_momentum."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85,
                 max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False,
                 last_epoch=-1):
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("You must define either total_steps OR (epochs AND "
                                 "steps_per_epoch)")
            total_steps = epochs * steps_per_epoch
        if total_steps <= 0:
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        if not 0 <= pct_start <= 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self.total_steps, self.cycle_momentum = total_steps, cycle_momentum
        self.anneal_strategy = anneal_strategy   # a name, so state_dict() stays plain data
        up = float(pct_start * total_steps) - 1
        self.phases = ([(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                        (float(2 * pct_start * total_steps) - 2, "max_lr", "initial_lr",
                         "base_momentum", "max_momentum"),
                        (total_steps - 1, "initial_lr", "min_lr", "max_momentum",
                         "max_momentum")] if three_phase else
                       [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                        (total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")])
        groups = optimizer.param_groups
        max_lrs = list(max_lr) if isinstance(max_lr, (list, tuple)) else [max_lr] * len(groups)
        if last_epoch == -1:
            for g, m in zip(groups, max_lrs):
                g["initial_lr"] = m / div_factor
                g["max_lr"] = m
                g["min_lr"] = g["initial_lr"] / final_div_factor
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled")
            self._beta1 = "betas" in optimizer.defaults
            for g in groups:
                if last_epoch == -1:
                    self._set_momentum(g, max_momentum)
                    g["max_momentum"], g["base_momentum"] = max_momentum, base_momentum
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group, m):
        if self._beta1:
            group["betas"] = (m,) + tuple(group["betas"][1:])
        else:
            group["momentum"] = m

    def get_lr(self):
        anneal = _cos_anneal if self.anneal_strategy == "cos" else _linear_anneal
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps "
                             f"is {self.total_steps}")
        lrs = []
        for g in self.optimizer.param_groups:
            start = 0.0
            for i, (end, lr0, lr1, m0, m1) in enumerate(self.phases):
                if step <= end or i == len(self.phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(anneal(g[lr0], g[lr1], pct))
                    if self.cycle_momentum:
                        self._set_momentum(g, anneal(g[m0], g[m1], pct))
                    break
                start = end
        return lrs


def _cos_anneal(start, end, pct):
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


def _linear_anneal(start, end, pct):
    return (end - start) * pct + start


class MultiplicativeLR(LRScheduler):
    """lr = previous lr * lr_lambda(epoch) (the rate left at construction at epoch 0)"""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        for f in self.lr_lambdas:
            if not callable(f):
                raise TypeError(f"lr_lambda should be a function, but got {type(f).__name__}")
        self._is_initial = True
        super().__init__(optimizer, last_epoch)
        self._is_initial = False

    def _initial_step(self):
        self._is_initial = True
        self.step()
        self._is_initial = False

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self._is_initial:
            return [g["lr"] for g in groups]
        return [g["lr"] * f(self.last_epoch) for f, g in zip(self.lr_lambdas, groups)]

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}


def _per_group(name, optimizer, value):
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(value)} values, param_groups has {n}.")
        return list(value)
    return [value] * n


class CyclicLR(LRScheduler):
    """Stepped once per batch, lr goes base_lr -> max_lr over step_size_up steps and back over
    step_size_down; the amplitude is scaled per cycle by 1 (triangular), 1 / 2^(cycle - 1)
    (triangular2), per step by gamma^step (exp_range), or by scale_fn. The momentum (or Adam's
    beta1) moves the other way between max_ and base_momentum."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1):
        from .optimizer import Optimizer
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, g in zip(base_lrs, optimizer.param_groups):
                g["lr"] = lr
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size, self.step_ratio = up + down, up / (up + down)
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma, self._scale_fn_custom = mode, gamma, scale_fn
        self.scale_mode = scale_mode if scale_fn is not None else (
            "iterations" if mode == "exp_range" else "cycle")
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for m, b, g in zip(self.max_momentums, self.base_momentums,
                                   optimizer.param_groups):
                    _set_momentum(g, m, self.use_beta1)
                    g["max_momentum"], g["base_momentum"] = m, b
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x):
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        frac = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (peak - base) * frac * scale
               for base, peak in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for g, base, peak in zip(self.optimizer.param_groups, self.base_momentums,
                                     self.max_momentums):
                _set_momentum(g, peak - (peak - base) * frac * scale, self.use_beta1)
        return lrs

    def state_dict(self):
        out = super().state_dict()
        out["_scale_fn_custom"] = None   # a function is not state; set it again on load
        return out

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        state.pop("_scale_fn_custom", None)
        super().load_state_dict(state)


def _set_momentum(group, m, beta1):
    if beta1:
        group["betas"] = (m,) + tuple(group["betas"][1:])
    else:
        group["momentum"] = m


class ChainedScheduler(LRScheduler):
    """Step several schedulers at once, their effects composed: each moves the rate the one
    before it left, as PyTorch's chainable forms do (StepLR, MultiStepLR, ExponentialLR,
    LinearLR, ConstantLR and PolynomialLR scale it by their own factor's change, cosine
    annealing scales its distance to eta_min, MultiplicativeLR multiplies it; the others set
    it outright). Build it right after the schedulers, before any of them has stepped again."""

    def __init__(self, schedulers, optimizer=None):
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler to be chained, but got no "
                             f"scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        for i, sch in enumerate(schedulers):
            if not hasattr(sch, "optimizer"):
                raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
            if isinstance(sch, ReduceLROnPlateau):
                raise ValueError(f"{name} does not support `ReduceLROnPlateau` scheduler as it "
                                 "requires additional kwargs to be specified when calling "
                                 f"`step`, but got one at index {i} in the given schedulers "
                                 "sequence.")
            if optimizer != sch.optimizer:
                raise ValueError(f"{name} expects all schedulers to belong to the same "
                                 f"optimizer, but got scheduler {type(sch).__name__} at index "
                                 f"{i} has {sch.optimizer}, which is different from "
                                 f"{type(optimizer).__name__}.")
        self._schedulers, self.optimizer = list(schedulers), optimizer
        groups = optimizer.param_groups
        lrs = [g.get("initial_lr", g["lr"]) for g in groups]   # replay their first steps
        for sch in self._schedulers:
            lrs = _chain(sch, lrs, list(sch.base_lrs), _closed(sch) or sch.get_last_lr())
        self._commit(lrs)

    def _commit(self, lrs):
        for g, lr in zip(self.optimizer.param_groups, lrs):
            g["lr"] = lr
        self._last_lr = list(lrs)

    def step(self):
        lrs = [g["lr"] for g in self.optimizer.param_groups]
        for sch in self._schedulers:
            before = _closed(sch)
            if isinstance(sch, MultiplicativeLR):
                self._commit(lrs)
            sch.step()
            after = _closed(sch) or [g["lr"] for g in self.optimizer.param_groups]
            lrs = _chain(sch, lrs, before, after)
        self._commit(lrs)

    state_dict = SequentialLR.state_dict            # its own entries and each scheduler's
    load_state_dict = SequentialLR.load_state_dict


_SCALING = (StepLR, MultiStepLR, ExponentialLR, LinearLR, ConstantLR, PolynomialLR,
            CosineAnnealingLR)


def _closed(sch):
    """A scaling schedule's own (closed-form) rates at its current epoch; None for others."""
    if isinstance(sch, _SCALING):
        return [sch.lr_at(base, sch.last_epoch) for base in sch.base_lrs]
    return None


def _chain(sch, lrs, before, after):
    """The rates ``lrs`` moved by ``sch`` going from its rates ``before`` to ``after``: the
    distance to the anchor (eta_min for cosine annealing, else 0) scaled by the same factor
    (shifted, where ``before`` sits on the anchor); rates of other schedules replace them."""
    if not isinstance(sch, _SCALING):
        out = list(after)
    else:
        a = sch.eta_min if isinstance(sch, CosineAnnealingLR) else 0.0
        out = [lr + (new - old) if old == a else a + (lr - a) * ((new - a) / (old - a))
               for lr, old, new in zip(lrs, before, after)]
    sch._last_lr = list(out)
    return out
