"""Op database entries of the shape ops: views and copies, diagonal / diff / tile, splits,
flips and rotations, unfold and repeat_interleave."""
from __future__ import annotations

import numpy as np
from op_db.entry import ROWS, UNARY, OpEntry, _const, _unary

import gpugrad


def _split_ref(x, sizes, axis):
    return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=axis))


VIEWS = [
    # views and copies
    _unary("view", lambda x: x.view(3, 2), lambda x: x.reshape(3, 2), "ViewBackward0",
           shapes=ROWS),
    _unary("reshape_flatten", lambda x: x.flatten(), np.ravel, "ViewBackward0", shapes=ROWS),
    OpEntry("reshape_noncontiguous", lambda x: x.t().reshape(-1), lambda x: x.T.reshape(-1),
            ROWS, ("UnsafeViewBackward0", "CloneBackward0", "TBackward0")),
    _unary("squeeze", lambda x: x.squeeze(), np.squeeze, "SqueezeBackward0",
           shapes=(((1, 3, 1),),)),
    _unary("squeeze_dim", lambda x: x.squeeze(0), lambda x: x.squeeze(0), "SqueezeBackward1",
           shapes=(((1, 3, 1),),)),
    _unary("squeeze_dims", lambda x: x.squeeze((0, 2)), lambda x: x.squeeze((0, 2)),
           "SqueezeBackward2", shapes=(((1, 3, 1),),)),
    _unary("alias", lambda x: x[...], lambda x: x[...], "AliasBackward0"),
    _unary("unsqueeze", lambda x: x.unsqueeze(-1), lambda x: x[..., None], "UnsqueezeBackward0"),
    _unary("expand", lambda x: x.expand(2, 2, 3), lambda x: np.broadcast_to(x, (2, 2, 3)),
           "ExpandBackward0", shapes=(((2, 1),), ((1, 3),), ((),))),
    _unary("broadcast_to", lambda x: gpugrad.broadcast_to(x, (2, 3)),
           lambda x: np.broadcast_to(x, (2, 3)), "ExpandBackward0", shapes=(((3,),),)),
    _unary("permute", lambda x: x.permute(2, 0, 1), lambda x: x.transpose(2, 0, 1),
           "PermuteBackward0", shapes=(((2, 1, 3),),)),
    _unary("T", lambda x: x.T, lambda x: x.T, "PermuteBackward0", shapes=ROWS),
    _unary("transpose", lambda x: x.transpose(0, -1), lambda x: np.swapaxes(x, 0, -1),
           "TransposeBackward0", shapes=(((2, 1, 3),),)),
    _unary("t", lambda x: x.t(), lambda x: x.T, "TBackward0", shapes=ROWS),
    _unary("clone", lambda x: x.clone(), np.copy, "CloneBackward0"),
    OpEntry("contiguous", lambda x: x.t().contiguous(), lambda x: x.T.copy(), ROWS,
            ("CloneBackward0", "TBackward0")),
    OpEntry("to_dtype", lambda x: x.to(gpugrad.float32).double(),
            lambda x: x.astype(np.float32).astype(np.float64), UNARY, ("ToCopyBackward0",),
            eps=1e-3),
    OpEntry("cat", lambda x, y: gpugrad.cat([x, y, x], dim=1),
            lambda x, y: np.concatenate([x, y, x], axis=1), (((2, 3), (2, 1)),),
            ("CatBackward0",)),
    OpEntry("stack", lambda x, y: gpugrad.stack([x, y], dim=-1),
            lambda x, y: np.stack([x, y], axis=-1), (((2, 3), (2, 3)),), ("StackBackward0",)),
    OpEntry("split", lambda x: x.split(2, dim=1), lambda x: _split_ref(x, [2, 1], 1),
            (((2, 3),),), ("SplitBackward0",)),
    OpEntry("split_one_piece_used", lambda x: x.split(1)[1], lambda x: x[1:2], ROWS,
            ("SplitBackward0",)),
    OpEntry("split_sizes", lambda x: gpugrad.split(x, [1, 2], dim=1),
            lambda x: _split_ref(x, [1, 2], 1), ROWS, ("SplitWithSizesBackward0",)),
    OpEntry("chunk", lambda x: x.chunk(2, 0), lambda x: _split_ref(x, [1, 1], 0), ROWS,
            ("SplitBackward0",)),
    OpEntry("unbind", lambda x: x.unbind(1), lambda x: tuple(x[:, i] for i in range(3)), ROWS,
            ("UnbindBackward0",)),
]


def _rot90_ref(x, k):
    return np.rot90(x, k, (1, 2))


DIAGONAL_DIFF_TILE = [
    OpEntry("diagonal_view", lambda x: gpugrad.diagonal(x, 1), lambda x: np.diagonal(x, 1).copy(),
            (((3, 4),),), ("DiagonalBackward0",)),
    OpEntry("diagonal_method", lambda x: x.diagonal(-1, 2, 0),
            lambda x: np.diagonal(x, -1, 2, 0).copy(), (((3, 2, 4),),), ("DiagonalBackward0",)),
    _unary("select_method", lambda x: x.select(1, -1), lambda x: x[:, -1], "SelectBackward0",
           shapes=ROWS),
    _unary("select_fn", lambda x: gpugrad.select(x, 0, 1), lambda x: x[1], "SelectBackward0",
           shapes=ROWS),
    OpEntry("diff", gpugrad.diff, lambda x: np.diff(x), ROWS, ("SubBackward0", "SliceBackward0")),
    OpEntry("diff_prepend", lambda x, p: x.diff(2, 0, prepend=p),
            lambda x, p: np.diff(x, 2, 0, prepend=p), (((2, 3), (1, 3)),),
            ("SubBackward0", "CatBackward0")),
    OpEntry("tile", lambda x: gpugrad.tile(x, (2,)), lambda x: np.tile(x, (2,)), ROWS,
            ("RepeatBackward0",)),
    OpEntry("tile_method", lambda x: x.tile((2, 1, 2)), lambda x: np.tile(x, (2, 1, 2)), ROWS,
            ("RepeatBackward0",)),
]


SPLIT_FLIP_ROTATE = [
    OpEntry("tensor_split", lambda x: gpugrad.tensor_split(x, 3, 1),
            lambda x: tuple(np.array_split(x, 3, 1)), (((2, 4),),), ("SliceBackward0",)),
    OpEntry("tensor_split_indices", lambda x: x.tensor_split([1, 3], dim=0),
            lambda x: tuple(np.split(x, [1, 3], 0)), (((4, 2),),), ("SliceBackward0",)),
    OpEntry("fliplr", gpugrad.fliplr, np.fliplr, ROWS, ("FlipBackward0",)),
    OpEntry("flipud", lambda x: x.flipud(), np.flipud, ROWS, ("FlipBackward0",)),
    OpEntry("rot90", lambda x: gpugrad.rot90(x, 1, (1, 2)), lambda x: _rot90_ref(x, 1),
            (((2, 3, 4),),), ("FlipBackward0", "TransposeBackward0")),
    OpEntry("rot90_method", lambda x: x.rot90(-1, (1, 2)), lambda x: _rot90_ref(x, -1),
            (((2, 3, 4),),), ("FlipBackward0", "TransposeBackward0")),
    OpEntry("unflatten", lambda x: x.unflatten(1, (2, -1)), lambda x: x.reshape(2, 2, 2),
            (((2, 4),),), ("ViewBackward0",)),
]


def _windows_ref(x, dim, size, step):
    """Every window along ``dim``, stacked, the window as the last axis (written with a loop)."""
    d = dim % x.ndim
    x = np.moveaxis(x, d, -1)
    out = np.stack([x[..., i:i + size] for i in range(0, x.shape[-1] - size + 1, step)], -2)
    return np.moveaxis(out, -2, d)


UNFOLD = [
    OpEntry("unfold_method", lambda x: x.unfold(1, 3, 2), lambda x: _windows_ref(x, 1, 3, 2),
            (((2, 7, 3),),), ("UnfoldBackward0",)),
    OpEntry("unfold_overlapping", lambda x: x.unfold(-1, 2, 1),
            lambda x: _windows_ref(x, -1, 2, 1), (((3, 4),), ((5,),)), ("UnfoldBackward0",)),
]


REPEAT_INTERLEAVE = [
    OpEntry("repeat_interleave_int", lambda x: x.repeat_interleave(2, dim=1),
            lambda x: np.repeat(x, 2, axis=1), (((2, 3),),), ("IndexBackward0",)),
    OpEntry("repeat_interleave_tensor",
            lambda x: gpugrad.repeat_interleave(x, _const(np.array([2, 0, 3]), x), dim=0),
            lambda x: np.repeat(x, [2, 0, 3], axis=0), (((3, 2),),), ("IndexBackward0",)),
]
