"""``gpugrad.optim``: optimizers (SGD, Adam, AdamW, Adamax, NAdam, RAdam, RMSprop, Adagrad,
Adadelta, LBFGS, Rprop, ASGD) and learning-rate schedules."""
from __future__ import annotations

from . import lr_scheduler
from .adam import Adam, AdamW
from .adam_variants import Adamax, NAdam, RAdam
from .adaptive import Adadelta, Adagrad, RMSprop
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rprop import ASGD, Rprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adagrad",
           "Adadelta", "lr_scheduler", "LBFGS", "Rprop", "ASGD"]
