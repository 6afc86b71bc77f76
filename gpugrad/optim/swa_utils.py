"""Stochastic weight averaging and exponential moving averages of a model's weights
(``torch.optim.swa_utils``): ``AveragedModel``, ``SWALR``, ``update_bn`` and the averaging
functions.

SWA:  W_avg <- W_avg + (W - W_avg) / (n + 1)   (the mean of every model seen so far)
EMA:  W_ema <- decay W_ema + (1 - decay) W      (W_ema = W on the first update)
"""
from __future__ import annotations

import copy
import itertools
import math

from ..autograd.grad_mode import no_grad
from ..nn.modules.module import Module
from ..tensor import Tensor
from .lr_scheduler import LRScheduler, _format_param, _warn_get_lr

__all__ = ["AveragedModel", "SWALR", "update_bn", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         f"[0,1] range.")


def _lerp_(start, end, weight):
    """start += weight (end - start), in place, computed as PyTorch's lerp (from the nearer end
    when weight >= 0.5), so the averages match it bit for bit."""
    if weight < 0.5:
        start.copy_(start + weight * (end - start))
    else:
        start.copy_(end - (end - start) * (1 - weight))


def _is_float(t):
    return t.is_floating_point() or t.is_complex()


def get_ema_multi_avg_fn(decay=0.999):
    """``fn(ema_params, params, n)``: W_ema <- decay W_ema + (1 - decay) W, in place."""
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _):
        with no_grad():
            for p_ema, p in zip(ema_param_list, current_param_list):
                if _is_float(p_ema):
                    _lerp_(p_ema, p, 1 - decay)
                else:
                    p_ema.copy_(p_ema * decay + p * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """``fn(avg_params, params, n)``: W_avg <- W_avg + (W - W_avg) / (n + 1), in place."""
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        n = int(num_averaged.item()) if isinstance(num_averaged, Tensor) else num_averaged
        with no_grad():
            for p_avg, p in zip(averaged_param_list, current_param_list):
                if _is_float(p_avg):
                    _lerp_(p_avg, p, 1 / (n + 1))
                else:
                    p_avg.copy_(p_avg + (p - p_avg) / (n + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """``fn(ema_param, param, n) -> decay ema_param + (1 - decay) param``."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """``fn(avg_param, param, n) -> avg_param + (param - avg_param) / (n + 1)``."""
    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` (``self.module``) whose parameters (and buffers, with
    ``use_buffers``) are running averages of the ``model`` passed to ``update_parameters``:
    the SWA mean by default, or what ``avg_fn(avg, param, n) -> new avg`` / in-place
    ``multi_avg_fn(avg_list, param_list, n)`` computes. ``n_averaged`` counts the updates."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        from .._creation import int64, tensor
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        n = int(self.n_averaged.item())
        averaged, current = [], []
        with no_grad():
            for p_avg, p in zip(mine, theirs):
                p_ = p.detach().to(p_avg.device)
                averaged.append(p_avg.detach())
                current.append(p_)
                if n == 0:
                    p_avg.detach().copy_(p_)
            if n > 0:
                if self.avg_fn is None:
                    multi = self.multi_avg_fn or get_swa_multi_avg_fn()
                    groups = {}
                    for a, c in zip(averaged, current):   # by device and dtype, as PyTorch
                        groups.setdefault((str(a.device), a.dtype), ([], []))
                        groups[(str(a.device), a.dtype)][0].append(a)
                        groups[(str(a.device), a.dtype)][1].append(c)
                    for (dev, _), (avgs, curs) in groups.items():
                        multi(avgs, curs, self.n_averaged.to(dev))
                else:
                    for a, c in zip(averaged, current):
                        a.copy_(self.avg_fn(a, c, self.n_averaged.to(a.device)))
            if not self.use_buffers:
                for b_avg, b in zip(self.module.buffers(), model.buffers()):
                    b_avg.detach().copy_(b.detach().to(b_avg.device))
            self.n_averaged += 1


def update_bn(loader, model, device=None):
    """Recompute every BatchNorm's running_mean / running_var in ``model`` with one pass over
    ``loader``: statistics are reset, then averaged over all batches (momentum None, a
    cumulative average). A batch that is a list or tuple is fed by its first element."""
    from ..nn.modules.batchnorm import _BatchNorm
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr from its value at construction (lr0) to ``swa_lr`` over
    ``anneal_epochs`` epochs, then holds it:
    lr_t = swa_lr a(t) + lr0 (1 - a(t)),  t = min(1, epoch / anneal_epochs),
    a(t) = (1 - cos(pi t)) / 2 ("cos") or t ("linear").
    Like PyTorch it is chainable: each step reads the group's current lr, so another
    scheduler may run before it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        for lr, group in zip(_format_param("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else \
            self._linear_anneal

    def get_lr(self):
        _warn_get_lr(self)
        step = self._step_count - 1   # counted by LRScheduler.step, 1 on the first call
        if self.anneal_epochs == 0:
            step = max(1, step)
        groups = self.optimizer.param_groups
        # recover lr0 from the current lr (which is lr0 annealed to the previous step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev_lrs)]

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
