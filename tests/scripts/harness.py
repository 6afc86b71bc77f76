"""Runs one training script written for PyTorch (``import torch``) twice: under PyTorch, then
unchanged under gpugrad (every ``torch`` / ``torch.x`` import answered by ``gpugrad`` /
``gpugrad.x``), and returns both runs' losses.

The two libraries draw different random numbers, so the first run records what the script
draws and the second replays it:
- the weights: when an optimizer is built, the values of its parameters (in order) are
  recorded, and copied into the gpugrad model's parameters at the same point;
- the random tensors the script asks for (``randn``, ``rand``, ``randint``, ``randn_like``,
  ``rand_like``, ``randperm``, ``normal``, ``multinomial``): each call still runs in gpugrad
  (dtype, device, shape and graph are its own), then its values are overwritten with
  PyTorch's, call by call;
- a shuffling ``RandomSampler``'s order, epoch by epoch.
A script keeps dropout off, as parity needs; it defines ``main()`` returning its losses.
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.util
import runpy
import sys

import numpy as np

RANDOM = ("randn", "rand", "randint", "randn_like", "rand_like", "randperm", "normal",
          "multinomial")


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``torch`` and ``torch.<x>`` resolve to ``gpugrad`` and ``gpugrad.<x>``, the same module
    objects (a second copy of a gpugrad module would have classes of its own)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "torch" or fullname.startswith("torch."):
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("gpugrad" + spec.name[len("torch"):])

    def exec_module(self, module):
        pass


# process-wide switches a script may flip (nanoGPT turns TF32 on): put back after each run
_SWITCHES = (("backends.cuda.matmul", "allow_tf32"), ("backends.cudnn", "allow_tf32"))


def _switch_owner(path):
    import gpugrad
    obj = gpugrad
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


@contextlib.contextmanager
def torch_is_gpugrad():
    hidden = {k: sys.modules.pop(k) for k in list(sys.modules)
              if k == "torch" or k.startswith("torch.")}
    finder = _Alias()
    sys.meta_path.insert(0, finder)
    switches = [(_switch_owner(p), n, getattr(_switch_owner(p), n)) for p, n in _SWITCHES]
    try:
        yield
    finally:
        for owner, name, value in switches:
            setattr(owner, name, value)
        sys.meta_path.remove(finder)
        for k in [k for k in sys.modules if k == "torch" or k.startswith("torch.")]:
            del sys.modules[k]
        sys.modules.update(hidden)


@contextlib.contextmanager
def _patched(obj, name, wrapper):
    original = getattr(obj, name)
    setattr(obj, name, wrapper(original))
    try:
        yield
    finally:
        setattr(obj, name, original)


def _numpy(t):
    return t.detach().cpu().numpy().copy()


class Tape:
    """What the PyTorch run drew, in order, for the gpugrad run to replay."""

    def __init__(self):
        self.weights, self.random, self.orders = [], [], []
        self._sampling = False

    def _hooks(self, lib, record):
        stack = contextlib.ExitStack()
        self._replay = weights, random, orders = (iter(self.weights), iter(self.random),
                                                  iter(self.orders))

        def optimizer_init(init):
            def wrapped(opt, *args, **kwargs):
                init(opt, *args, **kwargs)
                params = [p for g in opt.param_groups for p in g["params"]]
                if record:
                    self.weights.append([_numpy(p) for p in params])
                    return
                values = next(weights)
                assert [tuple(p.shape) for p in params] == [v.shape for v in values]
                with lib.no_grad():
                    for p, v in zip(params, values):
                        p.copy_(lib.tensor(v))
            return wrapped

        def random_fn(fn):
            def wrapped(*args, **kwargs):
                out = fn(*args, **kwargs)
                if self._sampling:      # the sampler's own draws: its order is taped instead
                    return out
                if record:
                    self.random.append(_numpy(out))
                    return out
                value = next(random)
                assert tuple(out.shape) == value.shape, (tuple(out.shape), value.shape)
                with lib.no_grad():
                    out.copy_(lib.tensor(value))
                return out
            return wrapped

        def sampler_iter(it):
            def wrapped(sampler):
                if record:
                    self._sampling = True
                    try:
                        order = list(it(sampler))
                    finally:
                        self._sampling = False
                    self.orders.append(order)
                else:
                    order = next(orders)
                    assert len(order) == len(sampler)
                yield from order
            return wrapped

        stack.enter_context(_patched(lib.optim.Optimizer, "__init__", optimizer_init))
        for name in RANDOM:
            stack.enter_context(_patched(lib, name, random_fn))
        sampler = importlib.import_module(lib.__name__ + ".utils.data.sampler")
        stack.enter_context(_patched(sampler.RandomSampler, "__iter__", sampler_iter))
        if not record and hasattr(sampler.RandomSampler, "permutation"):
            # gpugrad's loader gathers a TensorDataset's batches by the epoch's permutation
            stack.enter_context(_patched(sampler.RandomSampler, "permutation",
                                         lambda _: lambda s: lib.tensor(next(orders))))
        return stack

    def replayed_all(self):
        return all(next(it, None) is None for it in self._replay)

    def recording(self, lib):
        return self._hooks(lib, record=True)

    def replaying(self, lib):
        return self._hooks(lib, record=False)


def run_both(path):
    """(PyTorch's losses, gpugrad's losses) of the script at ``path``."""
    import torch

    import gpugrad
    tape = Tape()
    with tape.recording(torch):
        theirs = runpy.run_path(str(path), run_name="__parity__")["main"]()
    with torch_is_gpugrad(), tape.replaying(gpugrad):
        script = runpy.run_path(str(path), run_name="__parity__")
        assert script["torch"] is gpugrad
        ours = script["main"]()
    assert tape.replayed_all(), "the gpugrad run drew less than PyTorch's"
    return np.array(theirs, dtype=np.float64), np.array(ours, dtype=np.float64)
