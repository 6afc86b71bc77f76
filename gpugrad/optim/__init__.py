"""``gpugrad.optim``: optimizers (SGD, Adam, AdamW, Adamax, NAdam, RAdam, RMSprop, Adagrad,
Adadelta, LBFGS, Rprop, ASGD, Adafactor, Muon, SparseAdam), learning-rate schedules and weight
averaging (``swa_utils``)."""
from __future__ import annotations

from . import lr_scheduler
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adagrad",
           "Adadelta", "lr_scheduler", "LBFGS", "Rprop", "ASGD", "Adafactor", "Muon", "SparseAdam",
           "swa_utils"]


def __getattr__(name):
    # swa_utils subclasses nn.Module, and nn.Module imports this package: load it on first use
    if name == "swa_utils":
        import importlib
        return importlib.import_module(f"{__name__}.swa_utils")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
