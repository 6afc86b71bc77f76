"""Every differentiable op, one class each (see ``_op.Op``)."""
from . import linalg, loss, pointwise, reduce, shape

REGISTRY = {cls.__name__: cls for m in (pointwise, reduce, shape, linalg, loss) for cls in m.OPS}
