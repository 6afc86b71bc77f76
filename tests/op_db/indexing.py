"""Op database entries of indexing: basic and advanced indexing, setitem, gather,
selection and reordering, scatter, index_* and take_along_dim, take."""
from __future__ import annotations

import numpy as np
from op_db.entry import BINARY, COND, ROWS, OpEntry, _binary, _const, _in_place, _unary

import gpugrad

MASK = np.array([True, False, True])


def _setitem(x, v):
    y = x.clone()
    y[:, 1] = v
    return y


def _setitem_ref(x, v):
    y = x.copy()
    y[:, 1] = v
    return y


def _inplace_on_view(x):
    """``b[:, 1:] *= 2`` on a non-leaf ``b``: ``b`` becomes CopySlices, the view AsStrided."""
    b = x * 1
    v = b[:, 1:]
    v.mul_(2)
    return b, v


def _fill_on_view(x, y):
    """``b[:, 1:].fill_(y)`` on a non-leaf ``b``: the new value feeds a CopySlices of ``b``."""
    b = x * 1
    v = b[:, 1:]
    v.fill_(y)
    return b, v * 1


def _fill_on_view_ref(x, y):
    b = x.copy()
    b[:, 1:] = y
    return b, b[:, 1:]


def _inplace_on_view_ref(x):
    b = x.copy()
    b[:, 1:] *= 2
    return b, b[:, 1:]


IDX = [0, 2, 0]


def _index_grad(x):
    """The gradient of an indexing, made differentiable: IndexPutBackward0 scatters it."""
    g, = gpugrad.autograd.grad((x[:, IDX] ** 2).sum(), x, create_graph=True)
    return g


def _index_grad_ref(x):
    g = np.zeros_like(x)
    np.add.at(g, (slice(None), IDX), 2 * x[:, IDX])
    return g


GATHER_INDEX = np.array([[0, 2], [1, 1]])   # a repeated index: its gradients add up


INDEXING = [
    # indexing
    _unary("select", lambda x: x[1], lambda x: x[1], "SelectBackward0", shapes=ROWS),
    _unary("select_last", lambda x: x[:, -1], lambda x: x[:, -1], "SelectBackward0",
           shapes=ROWS),
    _unary("slice", lambda x: x[:, 1:], lambda x: x[:, 1:], "SliceBackward0", shapes=ROWS),
    _unary("slice_step", lambda x: x[..., ::2], lambda x: x[..., ::2], "SliceBackward0",
           shapes=ROWS),
    _unary("index_list", lambda x: x[:, IDX], lambda x: x[:, IDX], "IndexBackward0", shapes=ROWS),
    _unary("index_mask", lambda x: x[:, _const(MASK, x)], lambda x: x[:, MASK],
           "IndexBackward0", shapes=ROWS),
    _unary("index_tensor", lambda x: x[_const(np.array([1, 1, 0]), x)], lambda x: x[[1, 1, 0]],
           "IndexBackward0", shapes=ROWS),
    OpEntry("index_grad", _index_grad, _index_grad_ref, ROWS,
            ("IndexPutBackward0", "IndexBackward0")),
    OpEntry("setitem", _setitem, _setitem_ref, (((2, 3), (2,)), ((2, 3), (1,)), ((2, 3), ())),
            ("CopySlices", "CloneBackward0")),
    OpEntry("inplace_on_view", _inplace_on_view, _inplace_on_view_ref, ROWS,
            ("AsStridedBackward0", "MulBackward0")),
    OpEntry("fill_on_view", _fill_on_view, _fill_on_view_ref, (((2, 3), ()),),
            ("ViewCopySlices", "AsStridedBackward0")),
]


SELECTING = [
    # selecting, reordering, repeating
    OpEntry("gather", lambda x: x.gather(1, _const(GATHER_INDEX, x)),
            lambda x: np.take_along_axis(x, GATHER_INDEX, 1), ROWS, ("GatherBackward0",)),
    OpEntry("embedding", lambda w: gpugrad.nn.functional.embedding(
                _const(np.array([[2, 0], [2, 1]]), w), w),
            lambda w: w[np.array([[2, 0], [2, 1]])], (((3, 4),),), ("EmbeddingBackward0",)),
    OpEntry("index_select", lambda x: x.index_select(1, _const(np.array([2, 0, 2]), x)),
            lambda x: np.take(x, [2, 0, 2], 1), ROWS, ("IndexSelectBackward0",)),
    OpEntry("masked_fill", lambda x: x.masked_fill(_const(COND, x), 0.5),
            lambda x: np.where(COND, 0.5, x), ROWS, ("MaskedFillBackward0",)),
    OpEntry("masked_fill_tensor", lambda x, v: x.masked_fill(_const(COND, x), v),
            lambda x, v: np.where(COND, v, x), (((2, 3), ()),), ("MaskedFillBackward1",)),
    OpEntry("flip", lambda x: x.flip((0, 1)), lambda x: np.flip(x, (0, 1)), ROWS,
            ("FlipBackward0",)),
    OpEntry("roll", lambda x: x.roll((1, -1), (0, 1)), lambda x: np.roll(x, (1, -1), (0, 1)),
            ROWS, ("RollBackward0",)),
    OpEntry("roll_flat", lambda x: x.roll(2), lambda x: np.roll(x, 2), ROWS, ("RollBackward0",)),
    OpEntry("cumsum", lambda x: x.cumsum(1), lambda x: np.cumsum(x, 1), ROWS,
            ("CumsumBackward0",)),
    OpEntry("tril", lambda x: x.tril(-1), lambda x: np.tril(x, -1), (((3, 3),), ((2, 3, 3),)),
            ("TrilBackward0",)),
    OpEntry("triu", lambda x: x.triu(1), lambda x: np.triu(x, 1), (((3, 3),), ((2, 3, 4),)),
            ("TriuBackward0",)),
    OpEntry("sort", lambda x: x.sort(1, descending=True)[0], lambda x: -np.sort(-x, 1), ROWS,
            ("SortBackward0",)),
    OpEntry("topk", lambda x: x.topk(2, 1)[0], lambda x: -np.sort(-x, 1)[:, :2], ROWS,
            ("TopkBackward0",)),
    OpEntry("repeat", lambda x: x.repeat(2, 1, 2), lambda x: np.tile(x, (2, 1, 2)), ROWS,
            ("RepeatBackward0",)),
    _binary("atan2", gpugrad.atan2, np.arctan2, "Atan2Backward0", avoid=(0.0,)),
    OpEntry("lerp", lambda a, b: gpugrad.lerp(a, b, 0.3), lambda a, b: a + 0.3 * (b - a),
            BINARY, ("LerpBackward0",)),
    OpEntry("lerp_tensor", gpugrad.lerp, lambda a, b, w: a + w * (b - a),
            (((2, 3), (3,), (2, 1)),), ("LerpBackward1",)),
    OpEntry("addcmul", lambda x, a, b: gpugrad.addcmul(x, a, b, value=0.5),
            lambda x, a, b: x + 0.5 * a * b, (((2, 3), (3,), (2, 1)),), ("AddcmulBackward0",)),
    OpEntry("addcdiv", lambda x, a, b: gpugrad.addcdiv(x, a, b, value=2),
            lambda x, a, b: x + 2 * a / b, (((2, 3), (2, 3), (3,)),), ("AddcdivBackward0",),
            domain=((-2.0, 2.0), (-2.0, 2.0), (0.5, 2.0))),
    OpEntry("masked_select", lambda x: x.masked_select(_const(COND, x)),
            lambda x: np.broadcast_to(x, COND.shape)[COND], (((2, 3),), ((3,),)),
            ("MaskedSelectBackward0",)),
    OpEntry("trace", gpugrad.trace, np.trace, (((3, 3),), ((2, 4),)), ("TraceBackward0",)),
    OpEntry("diag_embed", lambda v: gpugrad.diag(v, -1), lambda v: np.diag(v, -1), (((3,),),),
            ("DiagEmbedBackward0",)),
    OpEntry("diagonal", lambda x: gpugrad.diag(x, 1), lambda x: np.diag(x, 1).copy(),
            (((3, 4),),), ("DiagonalBackward0_copy",)),
    OpEntry("median", gpugrad.median, lambda x: np.sort(x.ravel())[(x.size - 1) // 2],
            (((2, 3),),), ("MedianBackward0",)),
    OpEntry("median_dim", lambda x: gpugrad.median(x, 1)[0],
            lambda x: np.sort(x, 1)[:, (x.shape[1] - 1) // 2], (((3, 4),),),
            ("MedianBackward1",)),
]


# -- scatter, index_* and take_along_dim (gpugrad/ops/scatter.py) --------------------------------
PERM_INDEX = np.array([[1, 0, 1], [0, 1, 0]])    # along dim 0 of (2, 3): every position once
REDUCE_INDEX = np.array([[0, 1, 0], [0, 0, 0]])  # repeats, and leaves (1, 0), (1, 2) alone
ROW_INDEX = np.array([1, 0, 1])                  # index_add along dim 0 of (2, 3): repeats
COL_INDEX = np.array([2, 0])                     # index_copy / index_fill along dim 1
ZEROS = np.array([[0.0, 1.0, 1.0], [1.0, 1.0, 0.0]])  # at most one src zero per position
TAKE_INDEX = np.array([[2, 0, 0, 1], [1, 1, 2, 0]])


def _scatter_ref(x, dim, index, src, combine, include_self=True):
    """x with the values of src (or a number) at index combined into it, written as loops."""
    out = x.copy()
    groups = {}
    for pos in np.ndindex(*index.shape):
        target = list(pos)
        target[dim] = index[pos]
        groups.setdefault(tuple(target), []).append(src[pos] if np.ndim(src) else src)
    for target, values in groups.items():
        out[target] = combine(([x[target]] if include_self else []) + values)
    return out


def _last(values):
    return values[-1]


_COMBINE = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "amax": np.max, "amin": np.min}


def _index_ref(x, dim, index, src, combine):
    """x with combine(x[.., i, ..], src[.., k, ..]) at i = index[k] along dim, in order."""
    out = x.copy()
    view = np.moveaxis(out, dim, 0)
    s = np.moveaxis(src, dim, 0) if np.ndim(src) else [src] * len(index)
    for k, i in enumerate(index):
        view[i] = combine(view[i], s[k])
    return out


def _reduce_entry(reduce, include_self, **kw):
    name = f"scatter_reduce_{reduce}" + ("" if include_self else "_exclude_self")
    return OpEntry(name, lambda x, s: gpugrad.scatter_reduce(
                       x, 0, _const(REDUCE_INDEX, x), s, reduce, include_self=include_self),
                   lambda x, s: _scatter_ref(x, 0, REDUCE_INDEX, s, _COMBINE[reduce],
                                             include_self),
                   (((2, 3), (2, 3)), ((2, 3), (3, 4))), ("ScatterReduceBackward0",), **kw)


SCATTER = [
    OpEntry("scatter", lambda x, s: gpugrad.scatter(x, 0, _const(PERM_INDEX, x), s),
            lambda x, s: _scatter_ref(x, 0, PERM_INDEX, s, _last),
            (((2, 3), (2, 3)), ((2, 3), (3, 4))), ("ScatterBackward0",)),
    OpEntry("scatter_method", lambda x, s: x.scatter(1, _const(PERM_INDEX.T, x), s),
            lambda x, s: _scatter_ref(x, 1, PERM_INDEX.T, s, _last), (((3, 2), (3, 2)),),
            ("ScatterBackward0",)),
    OpEntry("scatter_", _in_place(lambda x, s: x.scatter_(0, _const(PERM_INDEX, x), s)),
            lambda x, s: _scatter_ref(x, 0, PERM_INDEX, s, _last), (((2, 3), (2, 3)),),
            ("ScatterBackward0",)),
    OpEntry("scatter_value", lambda x: x.scatter(0, _const(REDUCE_INDEX, x), 0.5),
            lambda x: _scatter_ref(x, 0, REDUCE_INDEX, 0.5, _last), ROWS,
            ("ScatterBackward1",)),
    OpEntry("scatter_value_", _in_place(lambda x: x.scatter_(0, _const(REDUCE_INDEX, x),
                                                             value=-1.0)),
            lambda x: _scatter_ref(x, 0, REDUCE_INDEX, -1.0, _last), ROWS,
            ("ScatterBackward1",)),
    OpEntry("scatter_add", lambda x, s: gpugrad.scatter_add(x, 0, _const(REDUCE_INDEX, x), s),
            lambda x, s: _scatter_ref(x, 0, REDUCE_INDEX, s, np.sum),
            (((2, 3), (2, 3)), ((2, 3), (3, 4))), ("ScatterAddBackward0",)),
    OpEntry("scatter_add_method", lambda x, s: x.scatter_add(0, _const(REDUCE_INDEX, x), s),
            lambda x, s: _scatter_ref(x, 0, REDUCE_INDEX, s, np.sum), (((2, 3), (2, 3)),),
            ("ScatterAddBackward0",)),
    OpEntry("scatter_add_", _in_place(lambda x, s: x.scatter_add_(0, _const(REDUCE_INDEX, x),
                                                                  s)),
            lambda x, s: _scatter_ref(x, 0, REDUCE_INDEX, s, np.sum), (((2, 3), (2, 3)),),
            ("ScatterAddBackward0",)),
    *[_reduce_entry(r, inc) for r in ("sum", "mean", "amax", "amin") for inc in (True, False)],
    _reduce_entry("prod", True, avoid=(0.0,)),
    _reduce_entry("prod", False, avoid=(0.0,)),
    OpEntry("scatter_reduce_prod_zeros", lambda x, s: gpugrad.scatter_reduce(
                x * _const(ZEROS, x), 0, _const(REDUCE_INDEX, x), s * _const(ZEROS[::-1], x),
                "prod"),
            lambda x, s: _scatter_ref(x * ZEROS, 0, REDUCE_INDEX, s * ZEROS[::-1], np.prod),
            (((2, 3), (2, 3)),), ("ScatterReduceBackward0", "MulBackward0"), avoid=(0.0,)),
    OpEntry("scatter_reduce_method", lambda x, s: x.scatter_reduce(
                1, _const(REDUCE_INDEX.T, x), s, "amax", include_self=False),
            lambda x, s: _scatter_ref(x, 1, REDUCE_INDEX.T, s, np.max, False),
            (((3, 2), (3, 2)),), ("ScatterReduceBackward0",)),
    OpEntry("scatter_reduce_", _in_place(lambda x, s: x.scatter_reduce_(
                0, _const(REDUCE_INDEX, x), s, "mean")),
            lambda x, s: _scatter_ref(x, 0, REDUCE_INDEX, s, np.mean), (((2, 3), (2, 3)),),
            ("ScatterReduceBackward0",)),
    OpEntry("index_add", lambda x, s: gpugrad.index_add(x, 0, _const(ROW_INDEX, x), s, alpha=2),
            lambda x, s: _index_ref(x, 0, ROW_INDEX, 2 * s, np.add), (((2, 3), (3, 3)),),
            ("IndexAddBackward0",)),
    OpEntry("index_add_method", lambda x, s: x.index_add(1, _const(ROW_INDEX, x), s),
            lambda x, s: _index_ref(x, 1, ROW_INDEX, s, np.add), (((3, 2), (3, 3)),),
            ("IndexAddBackward0",)),
    OpEntry("index_add_", _in_place(lambda x, s: x.index_add_(0, _const(ROW_INDEX, x), s)),
            lambda x, s: _index_ref(x, 0, ROW_INDEX, s, np.add), (((2, 3), (3, 3)),),
            ("IndexAddBackward0",)),
    OpEntry("index_fill", lambda x: gpugrad.index_fill(x, 1, _const(COL_INDEX, x), 0.5),
            lambda x: _index_ref(x, 1, COL_INDEX, 0.5, lambda a, v: v), ROWS,
            ("IndexFillBackward0",)),
    OpEntry("index_fill_tensor", lambda x, v: x.index_fill(1, _const(COL_INDEX[::-1], x), v),
            lambda x, v: _index_ref(x, 1, COL_INDEX, v, lambda a, w: w), (((2, 3), ()),),
            ("IndexFillBackward1",)),
    OpEntry("index_fill_", _in_place(lambda x, v: x.index_fill_(0, _const(ROW_INDEX, x), v)),
            lambda x, v: _index_ref(x, 0, ROW_INDEX, v, lambda a, w: w), (((2, 3), ()),),
            ("IndexFillBackward1",)),
    OpEntry("index_copy", lambda x, s: gpugrad.index_copy(x, 1, _const(COL_INDEX, x), s),
            lambda x, s: _index_ref(x, 1, COL_INDEX, s, lambda a, v: v), (((2, 3), (2, 2)),),
            ("IndexCopyBackward0",)),
    OpEntry("index_copy_", _in_place(lambda x, s: x.index_copy_(1, _const(COL_INDEX, x), s)),
            lambda x, s: _index_ref(x, 1, COL_INDEX, s, lambda a, v: v), (((2, 3), (2, 2)),),
            ("IndexCopyBackward0",)),
    OpEntry("take_along_dim", lambda x: gpugrad.take_along_dim(x, _const(TAKE_INDEX, x), 1),
            lambda x: np.take_along_axis(np.broadcast_to(x, (2, 3)), TAKE_INDEX, 1),
            (((1, 3),),), ("GatherBackward0", "ExpandBackward0")),
    OpEntry("take_along_dim_flat", lambda x: x.take_along_dim(_const(np.array([5, 0, 5]), x)),
            lambda x: x.ravel()[[5, 0, 5]], ROWS, ("GatherBackward0", "ViewBackward0")),
]


TAKE = [
    OpEntry("take", lambda x: gpugrad.take(x, _const(np.array([[0, -1], [5, 0]]), x)),
            lambda x: x.ravel()[[[0, -1], [5, 0]]], ROWS, ("IndexBackward0", "ViewBackward0")),
]
