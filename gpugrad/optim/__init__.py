"""``gpugrad.optim``: optimizers (SGD, Adam, AdamW, RMSprop, Adagrad) and learning-rate
schedules."""
from __future__ import annotations

from . import lr_scheduler
from .adam import Adam, AdamW
from .adaptive import Adagrad, RMSprop
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
