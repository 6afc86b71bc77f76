"""The op database behind ``tests/ops/test_op_db.py``: one entry per public way of reaching each op.

An entry names the public call (a function of tensors), its numpy reference, the input shapes it
is sampled at (broadcasting cases included), the interval its inputs are drawn from, and the
``Op`` classes (``gpugrad.ops.REGISTRY`` keys) whose nodes the call records. ``test_op_db.py``
checks the call against the reference, runs ``gradcheck`` and ``gradgradcheck`` in float64 on
every device, and checks that every registered op class is exercised by some entry. The entries
live by op family (``op_db.pointwise``, ``reduction``, ``shape``, ``indexing``, ``linalg``,
``special``, ``nn``; ``op_db.entry`` holds ``OpEntry`` and what they share); ``OP_DB`` joins
them. An op added to the registry (e.g. nn's losses) adds its entry to its family's module and,
for a new list, the list to ``OP_DB`` here.
"""
from __future__ import annotations

from op_db import indexing, linalg, nn, pointwise, reduction, shape, special
from op_db.entry import OpEntry
from op_db.special import (
    _ERF,
    _bisect,
    _digamma_reflected,
    _i1_ref,
    _ndtr_ref,
    _polygamma_ref,
    _vec,
)

OP_DB = [
    *pointwise.ARITHMETIC,
    *pointwise.TRANSCENDENTAL,
    *reduction.REDUCTIONS,
    *shape.VIEWS,
    *indexing.INDEXING,
    *linalg.PRODUCTS,
    *indexing.SELECTING,
    *nn.CONVOLUTION,
    *nn.NORMALISATION,
    *nn.LOSSES,
    *indexing.SCATTER,
    *linalg.MATRIX,
    *reduction.SCANS,
    *pointwise.BINARY_FUNCTIONS,
    *reduction.NAN_REDUCTIONS,
    *shape.DIAGONAL_DIFF_TILE,
    *pointwise.CLAMP_FUNCTIONS,
    *shape.SPLIT_FLIP_ROTATE,
    *indexing.TAKE,
    *pointwise.IN_PLACE,
    *nn.RESAMPLING,
    *nn.EMBEDDING_BAG,
    *special.SPECIAL_FUNCTIONS,
    *special.XLOG1PY,
    *shape.UNFOLD,
    *reduction.KTHVALUE_AMINMAX,
    *shape.REPEAT_INTERLEAVE,
    *pointwise.INVERSE_HYPERBOLIC,
    *nn.POOLING_3D,
    *linalg.DECOMPOSITIONS,
    *special.INCOMPLETE_GAMMA_ZETA,
    *nn.CTC_AND_INTERPOLATION,
    *nn.FRACTIONAL_3D,
    *nn.RECURRENT_CELLS,
    *reduction.REDUCTIONS_WITH_TIES,
]

__all__ = ["OP_DB", "OpEntry", "_ERF", "_bisect", "_digamma_reflected", "_i1_ref", "_ndtr_ref",
           "_polygamma_ref", "_vec"]
