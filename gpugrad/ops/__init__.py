"""Every differentiable op, one class each (see ``_op.Op``)."""
from . import linalg, pointwise, reduce, shape

REGISTRY = {cls.__name__: cls for m in (pointwise, reduce, shape, linalg) for cls in m.OPS}
