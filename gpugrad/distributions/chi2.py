"""Chi2 distribution (defined with Gamma in ``gamma``; this module mirrors PyTorch's layout)."""
from __future__ import annotations

from .gamma import Chi2

__all__ = ["Chi2"]
