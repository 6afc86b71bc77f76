"""The distributions tests' PyTorch oracle: evaluating one method or property of a distribution."""
from __future__ import annotations


def _evaluate(d, value, m):
    if m in ("log_prob", "cdf"):
        return getattr(d, m)(value)
    if m == "icdf":
        return d.icdf(d.cdf(value))
    if m == "entropy":
        return d.entropy()
    return getattr(d, m)
