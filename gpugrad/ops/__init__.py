"""Every differentiable op, one class each (see ``_op.Op``)."""
from . import (
    _op,
    activation,
    conv,
    conv3d,
    ctc,
    decomp,
    extra,
    fractional,
    index,
    linalg,
    linalg_lu,
    loss,
    matrix,
    methods_more,
    misc,
    norm,
    padding,
    pointwise,
    pointwise_more,
    pool,
    pool3d,
    reduce,
    resize,
    sampling,
    scatter,
    select,
    shape,
    special,
    special_more,
    unary,
    unpool,
)

REGISTRY = {cls.__name__: cls
            for m in (pointwise, unary, activation, reduce, shape, index, linalg, loss, norm,
                      select, extra, conv, padding, scatter, decomp, linalg_lu, matrix, misc,
                      pool, resize, special, methods_more, conv3d, pool3d, unpool, sampling,
                      pointwise_more, special_more, ctc, fractional)
            for cls in m.OPS}

for _cls in REGISTRY.values():
    _op.specialise_run(_cls)
