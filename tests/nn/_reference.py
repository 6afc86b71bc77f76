"""Numpy reference formulas shared by the nn tests."""
from __future__ import annotations

import numpy as np


def sig(x):
    return 1 / (1 + np.exp(-x))
