"""``LRScheduler``, the base of every learning-rate schedule, and its helpers.

A schedule's ``step()`` computes each group's next lr from the group's *current* lr (the
chainable form, ``get_lr``), so schedules stepped on one optimizer compose and a hand edit of
``group['lr']`` is kept. ``step(epoch)`` (deprecated, as in PyTorch) jumps to ``epoch`` through
the schedule's closed form (``_get_closed_form_lr``) where it has one.
"""
from __future__ import annotations

import functools
import types
import warnings

from ..tensor import Tensor
from .optimizer import Optimizer

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if "
    "epoch is different from None, the closed form is used instead of the new chainable form, "
    "where available. Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose.")
_HOW_TO = "See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"


def _format_param(name, optimizer, value):
    """``value`` once per param group (a list or tuple must already have one per group)."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(value)} values, param_groups has {n}.")
        return [v.clone() if isinstance(v, Tensor) else v for v in value]
    return [value.clone() if isinstance(value, Tensor) else value] * n


def _group_vals(optimizer, key):
    return [g[key].clone() if isinstance(g[key], Tensor) else g[key]
            for g in optimizer.param_groups]


def _set_group_val(group, key, value):
    if isinstance(group[key], Tensor):   # a tensor lr keeps its identity
        group[key].fill_(float(value))
    else:
        group[key] = value


def _track_steps(optimizer):
    """Let the schedulers see whether ``optimizer.step()`` ran before their first ``step()``:
    every optimizer's step marks ``_opt_called`` once the flag exists. A ``step`` replaced on
    the instance before this call is wrapped to mark it too."""
    optimizer.__dict__.setdefault("_opt_called", False)
    step = optimizer.step
    if getattr(step, "hooked", False) or getattr(step, "_wrapped_by_lr_sched", False):
        return

    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        optimizer._opt_called = True
        return step(*args, **kwargs)

    wrapper._wrapped_by_lr_sched = True
    optimizer.step = wrapper


def _functions_state(fns):
    """What PyTorch saves of lr_lambdas / scale_fn: None for a plain function (not state), the
    attributes of a callable object."""
    return [None if isinstance(f, types.FunctionType) else dict(f.__dict__) for f in fns]


class LRScheduler:
    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                lr = group["lr"]
                group.setdefault("initial_lr", lr.clone() if isinstance(lr, Tensor) else lr)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                        "scheduler with last_epoch >= 0.\nThis typically happens when:\n1. You're "
                        "trying to resume training from a checkpoint but haven't properly loaded "
                        "the optimizer state\n2. You're using last_epoch >= 0 for a fresh training "
                        "run (not recommended)")
        self.base_lrs = _group_vals(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _track_steps(optimizer)
        self._initial_step()

    def _initial_step(self):
        """The step at construction: it moves ``last_epoch`` to 0 (or one past a resumed
        epoch); the chainable forms keep the current rates on it."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        """The rates the last ``step`` set."""
        return self._last_lr

    def get_lr(self):  # pragma: no cover - every schedule defines it
        raise NotImplementedError

    def step(self, epoch=None):
        if self._step_count == 1:
            step = self.optimizer.step
            if not (getattr(step, "hooked", False) or
                    getattr(step, "_wrapped_by_lr_sched", False)):
                warnings.warn("Seems like `optimizer.step()` has been overridden after learning "
                              "rate scheduler initialization. Please, make sure to call "
                              "`optimizer.step()` before `lr_scheduler.step()`. " + _HOW_TO,
                              UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
                              "In PyTorch 1.1.0 and later, you should call them in the opposite "
                              "order: `optimizer.step()` before `lr_scheduler.step()`.  Failure "
                              "to do this will result in PyTorch skipping the first value of the "
                              "learning rate schedule. " + _HOW_TO, UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            _set_group_val(group, "lr", lr)
        self._last_lr = _group_vals(self.optimizer, "lr")


class _LRScheduler(LRScheduler):
    """The old name of ``LRScheduler``."""


def _warn_get_lr(scheduler):
    if not scheduler._get_lr_called_within_step:
        warnings.warn("To get the last learning rate computed by the scheduler, please use "
                      "`get_last_lr()`.", UserWarning, stacklevel=3)
