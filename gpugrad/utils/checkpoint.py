"""Activation checkpointing: ``checkpoint(function, *args, use_reentrant=...)`` keeps none of
the values ``function`` saves for backward, and recomputes them from its inputs when backward
needs them: memory for compute, as ``torch.utils.checkpoint``.

Two implementations, chosen as in PyTorch by ``use_reentrant``:

- ``use_reentrant=False`` (recommended): ``function`` runs with its graph recorded as usual,
  under saved-tensor hooks that keep only a ticket per saved value. The first ticket backward
  redeems reruns ``function`` (grad enabled, the random streams replayed) and takes the values
  it saves, in order; the recorded graph is the original one, so ``autograd.grad``, hooks and
  double backward work through it.
- ``use_reentrant=True`` (PyTorch's default when the argument is left out, with its warning):
  ``function`` runs under ``no_grad`` inside one ``CheckpointFunction`` node, whose backward
  reruns it with grad and calls ``backward`` on the result. Incompatible with ``autograd.grad``
  and ``backward(inputs=...)``, with PyTorch's message.
"""
from __future__ import annotations

import warnings

from .. import _creation
from ..autograd import Function, backward
from ..autograd import engine as _engine
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.saved_hooks import saved_tensors_hooks
from ..tensor import Tensor

__all__ = ["CheckpointError", "checkpoint", "checkpoint_sequential"]

_EXPLICIT = ("the use_reentrant parameter should be passed explicitly. {when} use_reentrant=False "
             "is recommended, but if you need to preserve the current default behavior, you can "
             "pass use_reentrant=True. Refer to docs for more details on the differences between "
             "the two variants.")
REENTRANT_GRAD = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
    "`inputs` parameter to .backward(). To resolve this error, you can either set "
    "use_reentrant=False, or call .backward() without passing the `inputs` argument.")


class CheckpointError(RuntimeError):
    """The recomputation did not save what the original forward saved (``function`` is not
    deterministic in what it computes, e.g. it branches on global state)."""


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    """``function(*args, **kwargs)``, with its saved values recomputed in backward."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: " + _EXPLICIT.format(
            when="Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise "
                 "an exception."), UserWarning, stacklevel=2)
        use_reentrant = True
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    return _checkpoint(function, preserve_rng_state, args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (a list or ``nn.Sequential``) in order, checkpointing ``segments``
    equal runs of them; the last run is not checkpointed (its values are needed at once)."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: " + _EXPLICIT.format(
            when="In version 2.9 we will raise an exception if use_reentrant is not passed."),
            UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = len(functions) // segments
    end = -1

    def run(start, stop):
        def forward(x):
            for f in functions[start:stop + 1]:
                x = f(x)
            return x
        return forward
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)


# -- use_reentrant=False: saved-tensor hooks ----------------------------------------------------
class _Frame:
    """One checkpointed call: what its forward saved (as metadata) and, once backward asks, the
    values its recomputation saved."""

    def __init__(self, function, args, kwargs, rng):
        self.function, self.args, self.kwargs, self.rng = function, args, kwargs, rng
        self.saved_meta: list = []
        self.recomputed: list | None = None
        self.unpacked = 0

    def pack(self, t):
        self.saved_meta.append((tuple(t._data.shape), t._data.dtype, str(t.device)))
        return self, len(self.saved_meta) - 1

    def value(self, k):
        if self.recomputed is None:
            self._recompute()
        t = self.recomputed[k]
        self.unpacked += 1
        if self.unpacked >= len(self.recomputed):   # every value read: free them
            self.recomputed, self.unpacked = None, 0
        return t

    def _recompute(self):
        values = []
        rng = (_creation.default_generator._replay(self.rng) if self.rng is not None
               else _nullcontext())
        with saved_tensors_hooks(lambda t: values.append(t) or t, lambda t: t), enable_grad(), \
                rng:
            self.function(*self.args, **self.kwargs)
        if len(values) != len(self.saved_meta):
            raise CheckpointError(
                f"torch.utils.checkpoint: A different number of tensors was saved during the "
                f"original forward and recomputation.\nNumber of tensors saved during forward: "
                f"{len(self.saved_meta)}\nNumber of tensors saved during recomputation: "
                f"{len(values)}.")
        for k, (t, meta) in enumerate(zip(values, self.saved_meta)):
            now = (tuple(t._data.shape), t._data.dtype, str(t.device))
            if now != meta:
                raise CheckpointError(
                    f"torch.utils.checkpoint: Recomputed values for the following tensors have "
                    f"different metadata than during the forward pass.\ntensor at position {k}:"
                    f"\nsaved metadata: {_meta(meta)}\nrecomputed metadata: {_meta(now)}")
        self.recomputed = values


def _meta(m):
    return f"{{'shape': {list(m[0])}, 'dtype': {m[1]}, 'device': {m[2]}}}"


class _nullcontext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _checkpoint(function, preserve, args, kwargs):
    rng = _creation.default_generator._fork() if preserve else None
    frame = _Frame(function, args, kwargs, rng)
    with saved_tensors_hooks(frame.pack, lambda ticket: ticket[0].value(ticket[1])):
        return function(*args, **kwargs)


# -- use_reentrant=True: one node that reruns the function in its backward ------------------------
class CheckpointFunction(Function):
    """The node of a reentrant checkpoint (``CheckpointFunctionBackward``)."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          UserWarning, stacklevel=4)
        ctx.run_function = run_function
        ctx.rng = _creation.default_generator._fork() if preserve_rng_state else None
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_at = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_at))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if (task := _engine.current_task()) is not None and task.targets is not None:
            raise RuntimeError(REENTRANT_GRAD)
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_at, ctx.saved_tensors):
            inputs[i] = t.detach().requires_grad_(t.requires_grad)
        rng = (_creation.default_generator._replay(ctx.rng) if ctx.rng is not None
               else _nullcontext())
        with enable_grad(), rng:
            outputs = ctx.run_function(*inputs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(inputs[i].grad if isinstance(inputs[i], Tensor) else None
                                    for i in range(len(inputs)))
