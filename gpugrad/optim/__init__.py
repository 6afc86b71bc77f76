"""``gpugrad.optim``: optimizers (SGD, Adam, AdamW, Adamax, NAdam, RAdam, RMSprop, Adagrad,
Adadelta, LBFGS, Rprop, ASGD, Adafactor, Muon, SparseAdam), learning-rate schedules and weight
averaging (``swa_utils``)."""
from __future__ import annotations

from . import lr_scheduler
from .adafactor import Adafactor
from .adam import Adam, AdamW
from .adam_variants import Adamax, NAdam, RAdam
from .adaptive import Adadelta, Adagrad, RMSprop
from .lbfgs import LBFGS
from .muon import Muon, SparseAdam
from .optimizer import Optimizer
from .rprop import ASGD, Rprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adagrad",
           "Adadelta", "lr_scheduler", "LBFGS", "Rprop", "ASGD", "Adafactor", "Muon", "SparseAdam",
           "swa_utils"]


def __getattr__(name):
    # swa_utils subclasses nn.Module, and nn.Module imports this package: load it on first use
    if name == "swa_utils":
        import importlib
        return importlib.import_module(f"{__name__}.swa_utils")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
