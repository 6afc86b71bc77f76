"""``GradScaler``: loss scaling for float16 training. The loss is multiplied by a large scale
before backward so small float16 gradients do not flush to zero; before the optimizer step the
gradients are divided by it again, and a step whose gradients hold an inf or NaN is skipped
and the scale halved. After ``growth_interval`` clean steps in a row the scale doubles."""
from __future__ import annotations

import warnings

from ..tensor import Tensor

_NO_SCALE = ("Attempted {} but _scale is None.  This may indicate your script did not use "
             "scaler.scale(loss or outputs) earlier in the iteration.")
_READY, _UNSCALED, _STEPPED = 0, 1, 2


class GradScaler:
    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = str(device)
        if enabled and self._device.startswith("cuda"):
            from .. import cuda
            if not cuda.is_available():
                warnings.warn("gpugrad.amp.GradScaler is enabled, but CUDA is not available.  "
                              "Disabling.", stacklevel=2)
                enabled = False
        self._enabled = bool(enabled)
        if not self._enabled:
            return
        if growth_factor <= 1.0:
            raise AssertionError("The growth factor must be > 1.0.")
        if backoff_factor >= 1.0:
            raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale, self._growth_factor = float(init_scale), float(growth_factor)
        self._backoff_factor, self._growth_interval = float(backoff_factor), int(growth_interval)
        self._scale = None            # set on the first scale() call, as PyTorch does
        self._growth_tracker = 0
        self._per_optimizer = {}      # id(optimizer) -> {"stage": ..., "found_inf": bool}

    def is_enabled(self):
        return self._enabled

    # -- the training-loop calls --------------------------------------------------------------
    def scale(self, outputs):
        """``outputs`` (a tensor, or lists / tuples / dicts of them) times the current scale."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._scale = self._init_scale
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, dict):
            return {k: self.scale(v) for k, v in outputs.items()}
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(v) for v in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer):
        """Divide ``optimizer``'s gradients by the scale in place (call it before clipping
        them), and note whether any is inf or NaN."""
        if not self._enabled:
            return
        if self._scale is None:
            raise AssertionError(_NO_SCALE.format("unscale_"))
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv = 1.0 / self._scale
        bad = None
        seen = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                seen = True
                g = p.grad
                g.data.mul_(inv)
                flag = ~g.detach().isfinite().all()
                bad = flag if bad is None else bad | flag
        if not seen:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        state["found_inf"] = bool(bad.item())   # the one host sync of the step
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale (unless done already) and step, or skip the step if a gradient is inf or
        NaN. Returns what ``optimizer.step`` returns (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        if self._scale is None:
            raise AssertionError(_NO_SCALE.format("step"))
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        state["stage"] = _STEPPED
        if state["found_inf"]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        """Set the scale for the next iteration: ``new_scale`` if given; else halved (times
        backoff_factor) after a skipped step, grown after growth_interval clean ones."""
        if not self._enabled:
            return
        if self._scale is None:
            raise AssertionError(_NO_SCALE.format("update"))
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1:
                    raise AssertionError("new_scale should be a float or a 1-element tensor.")
                new_scale = new_scale.item()
            elif not isinstance(new_scale, float):
                raise AssertionError("new_scale should be a float or a 1-element tensor.")
            self._scale = float(new_scale)
        else:
            found = [s["found_inf"] for s in self._per_optimizer.values() if "found_inf" in s]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
        self._per_optimizer = {}

    # -- inspection and checkpoints -----------------------------------------------------------
    def get_scale(self):
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = int(new_interval)

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale = self._init_scale
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])

    def _state(self, optimizer):
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY})
