"""``gpugrad.nn``: modules, parameters, layers, losses, ``functional`` and ``init``."""
from __future__ import annotations

from . import functional, init, utils
from .layers import (
    ELU,
    GELU,
    AvgPool2d,
    BatchNorm1d,
    BatchNorm2d,
    Conv1d,
    Conv2d,
    Dropout,
    Embedding,
    Flatten,
    Hardtanh,
    Identity,
    LayerNorm,
    LeakyReLU,
    Linear,
    LogSoftmax,
    MaxPool2d,
    Mish,
    ModuleList,
    ReLU,
    ReLU6,
    Sequential,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Tanh,
)
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .module import Module
from .parameter import Parameter

__all__ = ["Module", "Parameter", "Linear", "LayerNorm", "BatchNorm1d", "BatchNorm2d",
           "Embedding", "Conv1d", "Conv2d", "MaxPool2d",
           "AvgPool2d", "ELU", "Hardtanh", "ReLU6", "Softplus", "Mish",
           "Identity", "Flatten", "ReLU", "LeakyReLU", "GELU", "SiLU", "Tanh", "Sigmoid",
           "Softmax", "LogSoftmax", "Dropout", "Sequential", "ModuleList", "MSELoss", "NLLLoss",
           "CrossEntropyLoss", "BCEWithLogitsLoss", "BCELoss", "L1Loss",
           "SmoothL1Loss", "HuberLoss", "functional", "init", "utils"]
