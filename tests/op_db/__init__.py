"""The op database behind ``tests/ops/test_op_db.py`` (see ``op_db.nn``)."""
from op_db.nn import (
    _ERF,
    OP_DB,
    OpEntry,
    _bisect,
    _digamma_reflected,
    _i1_ref,
    _ndtr_ref,
    _polygamma_ref,
    _vec,
)

__all__ = ["OP_DB", "OpEntry", "_ERF", "_bisect", "_digamma_reflected", "_i1_ref", "_ndtr_ref",
           "_polygamma_ref", "_vec"]
