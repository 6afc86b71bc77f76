"""Reference values of special functions for the distributions tests: log sqrt(2 pi) and the
multivariate log-gamma function."""
from __future__ import annotations

import math

LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _mvlgamma(a, p):
    """log Gamma_p(a) = p (p - 1) / 4 log pi + sum_{j=1..p} lgamma(a + (1 - j) / 2)"""
    return p * (p - 1) / 4 * math.log(math.pi) + sum(math.lgamma(a + (1 - j) / 2)
                                                     for j in range(1, p + 1))
