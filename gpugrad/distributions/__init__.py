"""Probability distributions with PyTorch's ``torch.distributions`` API: sampling (seeded by
``gpugrad.manual_seed``), reparameterised ``rsample``, ``log_prob``, ``entropy`` and
``kl_divergence``, composed from differentiable gpugrad ops on CPU and CUDA tensors alike."""
from __future__ import annotations

from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .exponential import Exponential
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .uniform import Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "Exponential", "Independent", "Laplace",
           "MultivariateNormal", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Uniform", "constraints", "kl_divergence",
           "register_kl"]
