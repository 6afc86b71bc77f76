"""Every differentiable op, one class each (see ``_op.Op``)."""
from . import activation, index, linalg, loss, pointwise, reduce, shape

REGISTRY = {cls.__name__: cls for m in (pointwise, activation, reduce, shape, index, linalg, loss)
            for cls in m.OPS}
