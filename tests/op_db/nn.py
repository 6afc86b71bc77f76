"""Op database entries of the nn ops: convolution, padding, pooling, normalisation, losses,
resampling (interpolation, pixel shuffle, fold), embedding_bag, 3-D pools, unpooling, spatial
transformers, CTC loss and fractional max pooling."""
from __future__ import annotations

import math

import numpy as np
from op_db.entry import ROWS, OpEntry, _const, _logsumexp_ref

import gpugrad
from gpugrad.ops.nn import loss as nn_loss


def _layer_norm_ref(x, k, eps=1e-5):
    axes = tuple(range(x.ndim - k, x.ndim))
    d = x - x.mean(axis=axes, keepdims=True)
    return d / np.sqrt((d ** 2).mean(axis=axes, keepdims=True) + eps)


RUNNING_MEAN, RUNNING_VAR = np.array([0.5, -1.0, 0.0]), np.array([2.0, 0.5, 1.0])


def _column(v, x):
    return v.reshape((1, -1) + (1,) * (x.ndim - 2))


def _batch_norm_ref(x, eps=1e-5):
    axes = (0,) + tuple(range(2, x.ndim))
    d = x - x.mean(axis=axes, keepdims=True)
    return d / np.sqrt((d ** 2).mean(axis=axes, keepdims=True) + eps)


def _conv2d_ref(x, w, b, stride, padding):
    """Cross-correlation written out with loops over the output positions."""
    sh, sw = (stride, stride) if isinstance(stride, int) else stride
    ph, pw = (padding, padding) if isinstance(padding, int) else padding
    xp_ = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    kh, kw = w.shape[2:]
    oh, ow = (xp_.shape[2] - kh) // sh + 1, (xp_.shape[3] - kw) // sw + 1
    y = np.zeros((x.shape[0], w.shape[0], oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp_[:, :, i * sh:i * sh + kh, j * sw:j * sw + kw]
            y[:, :, i, j] = np.einsum("ncij,ocij->no", patch, w)
    return y if b is None else y + b[None, :, None, None]


def _pool_ref(x, reduce_, k, s, p, fill):
    xp_ = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=fill)
    oh, ow = (xp_.shape[2] - k) // s + 1, (xp_.shape[3] - k) // s + 1
    return np.array([[[[reduce_(xp_[n, c, i * s:i * s + k, j * s:j * s + k])
                        for j in range(ow)] for i in range(oh)]
                      for c in range(x.shape[1])] for n in range(x.shape[0])])


def _avg_pool_grad(x):
    """avg_pool2d's gradient, made differentiable: AvgPool2DBackwardBackward0 spreads it."""
    g, = gpugrad.autograd.grad((gpugrad.nn.functional.avg_pool2d(x, 2) ** 2).sum(), x,
                               create_graph=True)
    return g


def _avg_pool_grad_ref(x):
    # d/dx sum(mean(window)^2) = 2 mean(window) / 4 on each element of a (disjoint) window;
    # rows and columns past the last whole window get nothing
    m = _pool_ref(x, np.mean, 2, 2, 0, 0.0)
    g = np.zeros_like(x)
    oh, ow = m.shape[2:]
    g[:, :, :2 * oh, :2 * ow] = np.kron(m, np.ones((2, 2))) / 2
    return g


TARGET = np.array([0, 2])
WEIGHT = np.array([0.5, 2.0, 1.5])


def _nll(x, weight=None, ignore_index=-100, reduction="mean"):
    w = None if weight is None else _const(weight, x)
    return nn_loss.nll_loss(x, _const(TARGET, x), w, ignore_index=ignore_index, reduction=reduction)


def _nll_ref(x, weight=None, ignore_index=-100, reduction="mean"):
    w = (np.ones(x.shape[1]) if weight is None else weight)[TARGET] * (TARGET != ignore_index)
    picked = -x[np.arange(len(TARGET)), TARGET] * w
    if reduction == "none":
        return picked
    return picked.sum() / w.sum() if reduction == "mean" else picked.sum()


def _log_softmax_ref(x, axis):
    return x - _logsumexp_ref(x, axis, True)


def _bce_ref(x, t, pos_weight=1.0):
    return ((1 - t) * x + (1 + (pos_weight - 1) * t) * np.log1p(np.exp(-x))).mean()


CONVOLUTION = [
    # convolution
    OpEntry("conv2d", lambda x, w, b: gpugrad.nn.functional.conv2d(x, w, b, 2, 1),
            lambda x, w, b: _conv2d_ref(x, w, b, 2, 1), (((2, 2, 5, 4), (3, 2, 3, 2), (3,)),),
            ("ConvolutionBackward0",)),
    OpEntry("conv1d", lambda x, w: gpugrad.nn.functional.conv1d(x, w, padding=1),
            lambda x, w: _conv2d_ref(x[:, :, None], w[:, :, None], None, 1, (0, 1))[:, :, 0],
            (((2, 2, 5), (3, 2, 3)),), ("ConvolutionBackward0",)),
    OpEntry("pad", lambda x: gpugrad.nn.functional.pad(x, (1, -1, 2, 0), value=0.5),
            lambda x: np.pad(x, ((2, 0), (1, 0)), constant_values=0.5)[:, :-1], ROWS,
            ("ConstantPadNdBackward0",)),
    OpEntry("pad_reflect", lambda x: gpugrad.nn.functional.pad(x, (2, 1, 1, 2), mode="reflect"),
            lambda x: np.pad(x, ((0, 0), (1, 2), (2, 1)), mode="reflect"), (((2, 4, 3),),),
            ("ReflectionPad2DBackward0",)),
    OpEntry("pad_replicate", lambda x: gpugrad.nn.functional.pad(x, (3, -1), mode="replicate"),
            lambda x: np.pad(x, ((0, 0), (3, 0)), mode="edge")[:, :-1], ROWS,
            ("ReplicationPad1DBackward0",)),
    OpEntry("pad_reflect_1d", lambda x: gpugrad.nn.functional.pad(x, (2, 2), mode="reflect"),
            lambda x: np.pad(x, ((0, 0), (2, 2)), mode="reflect"), ROWS,
            ("ReflectionPad1DBackward0",)),
    OpEntry("pad_reflect_3d", lambda x: gpugrad.nn.functional.pad(x, (1, 0, 0, 1, 1, 1),
                                                                  mode="reflect"),
            lambda x: np.pad(x, ((0, 0), (1, 1), (0, 1), (1, 0)), mode="reflect"),
            (((2, 3, 2, 3),),), ("ReflectionPad3DBackward0",)),
    OpEntry("pad_replicate_2d", lambda x: gpugrad.nn.functional.pad(x, (0, 2, 1, 1),
                                                                    mode="replicate"),
            lambda x: np.pad(x, ((0, 0), (1, 1), (0, 2)), mode="edge"), (((2, 3, 3),),),
            ("ReplicationPad2DBackward0",)),
    OpEntry("pad_replicate_3d", lambda x: gpugrad.nn.functional.pad(x, (1, 1, 2, 0, 0, 1),
                                                                    mode="replicate"),
            lambda x: np.pad(x, ((0, 0), (0, 0), (0, 1), (2, 0), (1, 1)), mode="edge"),
            (((1, 2, 2, 2, 3),),), ("ReplicationPad3DBackward0",)),
    OpEntry("pad_circular", lambda x: gpugrad.nn.functional.pad(x, (1, 2, 0, 1, 2, 0),
                                                                mode="circular"),
            lambda x: np.pad(x, ((0, 0), (2, 0), (0, 1), (1, 2)), mode="wrap"),
            (((1, 2, 3, 4),),), ("CircularPadBackward0",)),
    OpEntry("max_pool2d", lambda x: gpugrad.nn.functional.max_pool2d(x, 3, 2, 1),
            lambda x: _pool_ref(x, np.max, 3, 2, 1, -np.inf), (((2, 2, 5, 4),),),
            ("MaxPool2DWithIndicesBackward0",)),
    OpEntry("avg_pool2d", lambda x: gpugrad.nn.functional.avg_pool2d(x, 2),
            lambda x: _pool_ref(x, np.mean, 2, 2, 0, 0.0), (((2, 2, 5, 4),),),
            ("AvgPool2DBackward0",)),
    OpEntry("avg_pool2d_grad", _avg_pool_grad, _avg_pool_grad_ref, (((2, 2, 5, 4),),),
            ("AvgPool2DBackwardBackward0", "AvgPool2DBackward0")),
]


NORMALISATION = [
    # normalisation
    OpEntry("layer_norm", lambda x, w, b: gpugrad.nn.functional.layer_norm(x, (4,), w, b),
            lambda x, w, b: _layer_norm_ref(x, 1) * w + b,
            (((2, 3, 4), (4,), (4,)), ((4,), (4,), (4,))), ("NativeLayerNormBackward0",)),
    OpEntry("layer_norm_2d_no_affine", lambda x: gpugrad.nn.functional.layer_norm(x, (3, 4)),
            lambda x: _layer_norm_ref(x, 2), (((2, 3, 4),),), ("NativeLayerNormBackward0",)),
    OpEntry("batch_norm_train", lambda x, w, b: gpugrad.nn.functional.batch_norm(
                x, None, None, w, b, training=True),
            lambda x, w, b: _batch_norm_ref(x) * _column(w, x) + _column(b, x),
            (((4, 3), (3,), (3,)), ((2, 3, 4), (3,), (3,))), ("NativeBatchNormBackward0",)),
    OpEntry("batch_norm_eval", lambda x, w, b: gpugrad.nn.functional.batch_norm(
                x, _const(RUNNING_MEAN, x), _const(RUNNING_VAR, x), w, b, training=False),
            lambda x, w, b: ((x - _column(RUNNING_MEAN, x)) / np.sqrt(_column(RUNNING_VAR, x)
                                                                   + 1e-5) * _column(w, x)
                             + _column(b, x)),
            (((4, 3), (3,), (3,)),), ("NativeBatchNormBackward0",)),
]


LOSSES = [
    # losses
    OpEntry("mse_loss", nn_loss.mse_loss, lambda x, t: ((x - t) ** 2).mean(),
            (((2, 3), (2, 3)), ((), ())), ("MseLossBackward0",)),
    OpEntry("mse_loss_sum", lambda x, t: nn_loss.mse_loss(x, t, reduction="sum"),
            lambda x, t: ((x - t) ** 2).sum(), (((2, 3), (2, 3)),), ("MseLossBackward0",)),
    OpEntry("mse_loss_none", lambda x, t: nn_loss.mse_loss(x, t, reduction="none"),
            lambda x, t: (x - t) ** 2, (((2, 3), (2, 3)),), ("MseLossBackward0",)),
    OpEntry("nll_loss", _nll, _nll_ref, ROWS, ("NllLossBackward0",)),
    OpEntry("nll_loss_weight", lambda x: _nll(x, WEIGHT), lambda x: _nll_ref(x, WEIGHT), ROWS,
            ("NllLossBackward0",)),
    OpEntry("nll_loss_ignore_sum", lambda x: _nll(x, ignore_index=2, reduction="sum"),
            lambda x: _nll_ref(x, ignore_index=2, reduction="sum"), ROWS,
            ("NllLossBackward0",)),
    OpEntry("nll_loss_none", lambda x: _nll(x, reduction="none"),
            lambda x: _nll_ref(x, reduction="none"), ROWS, ("NllLossBackward0",)),
    OpEntry("cross_entropy", lambda x: nn_loss.cross_entropy(x, _const(TARGET, x)),
            lambda x: _nll_ref(_log_softmax_ref(x, 1)), ROWS,
            ("NllLossBackward0", "LogSoftmaxBackward0")),
    OpEntry("l1_loss", lambda x, t: gpugrad.nn.functional.l1_loss(x, t),
            lambda x, t: np.abs(x - t).mean(), (((2, 3), (2, 3)),),
            ("MeanBackward0", "AbsBackward0"), avoid=(0.0,)),
    OpEntry("smooth_l1_loss", lambda x, t: gpugrad.nn.functional.smooth_l1_loss(x, t, beta=0.5),
            lambda x, t: np.where(np.abs(x - t) < 0.5, (x - t) ** 2, np.abs(x - t) - 0.25).mean(),
            (((2, 3), (2, 3)),), ("SmoothL1LossBackward0",)),
    OpEntry("huber_loss", lambda x, t: gpugrad.nn.functional.huber_loss(x, t, "sum", delta=0.5),
            lambda x, t: np.where(np.abs(x - t) < 0.5, 0.5 * (x - t) ** 2,
                                  0.5 * (np.abs(x - t) - 0.25)).sum(),
            (((2, 3), (2, 3)),), ("HuberLossBackward0",)),
    OpEntry("binary_cross_entropy", lambda x, t: gpugrad.nn.functional.binary_cross_entropy(
                x, t, weight=_const(np.array([0.5, 1.0, 2.0]), x), reduction="none"),
            lambda x, t: -np.array([0.5, 1.0, 2.0]) * (t * np.log(x) + (1 - t) * np.log(1 - x)),
            (((2, 3), (2, 3)),), ("BinaryCrossEntropyBackward0",), domain=(0.1, 0.9)),
    OpEntry("bce_with_logits", nn_loss.binary_cross_entropy_with_logits, _bce_ref,
            (((2, 3), (2, 3)),), ("BinaryCrossEntropyWithLogitsBackward0",),
            domain=((-2.0, 2.0), (0.0, 1.0))),
    OpEntry("bce_with_logits_pos_weight",
            lambda x, t: nn_loss.binary_cross_entropy_with_logits(
                x, t, pos_weight=_const(np.array([3.0]), x)),
            lambda x, t: _bce_ref(x, t, 3.0), (((2, 3), (2, 3)),),
            ("BinaryCrossEntropyWithLogitsBackward0",), domain=((-2.0, 2.0), (0.0, 1.0))),
]


# -- transposed convolution, pooling and resampling (ops/conv.py, pool.py, resize.py) -------------
def _conv_transpose_ref(x, w, b, stride, padding, output_padding=0, groups=1, dilation=1):
    """Each input pixel scatters x[n, c, i, j] w[c, o] into the output, written with loops."""
    s, p, op, d = ((v, v) if isinstance(v, int) else v
                   for v in (stride, padding, output_padding, dilation))
    n, c, h, wd = x.shape
    cg, og, kh, kw = c // groups, w.shape[1], w.shape[2], w.shape[3]
    full = np.zeros((n, og * groups, (h - 1) * s[0] + d[0] * (kh - 1) + 1 + op[0],
                     (wd - 1) * s[1] + d[1] * (kw - 1) + 1 + op[1]))
    for ci in range(c):
        g = ci // cg
        for i in range(h):
            for j in range(wd):
                for a in range(kh):
                    for bb in range(kw):
                        full[:, g * og:(g + 1) * og, i * s[0] + a * d[0], j * s[1] + bb * d[1]] \
                            += x[:, ci, i, j, None] * w[ci, :, a, bb]
    y = full[:, :, p[0]:full.shape[2] - p[0], p[1]:full.shape[3] - p[1]]
    return y if b is None else y + b[None, :, None, None]


def _conv_dilated_ref(x, w, s, p, d):
    """Cross-correlation with dilated kernel taps, written with loops over the output."""
    xp_ = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    kh, kw = w.shape[2:]
    oh = (xp_.shape[2] - d[0] * (kh - 1) - 1) // s[0] + 1
    ow = (xp_.shape[3] - d[1] * (kw - 1) - 1) // s[1] + 1
    y = np.zeros((x.shape[0], w.shape[0], oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp_[:, :, i * s[0]:i * s[0] + d[0] * (kh - 1) + 1:d[0],
                        j * s[1]:j * s[1] + d[1] * (kw - 1) + 1:d[1]]
            y[:, :, i, j] = np.einsum("ncij,ocij->no", patch, w)
    return y


def _window_ref(x, reduce_, k, s, p, d=(1, 1), ceil=False, fill=-np.inf, divisor=None):
    """2-D pooling with loops: each output reduces the window's in-range entries (padding
    entries are ``fill``); ``divisor(i0, i1, j0, j1)`` divides a sum when given."""
    n, c, h, w = x.shape
    outs = []
    for size, kk, ss, pp, dd in zip((h, w), k, s, p, d):
        o = (size + 2 * pp - dd * (kk - 1) - 1 + (ss - 1 if ceil else 0)) // ss + 1
        outs.append(o - 1 if ceil and (o - 1) * ss >= size + pp else o)
    y = np.zeros((n, c) + tuple(outs))
    for i in range(outs[0]):
        for j in range(outs[1]):
            rows = [i * s[0] - p[0] + a * d[0] for a in range(k[0])]
            cols = [j * s[1] - p[1] + b * d[1] for b in range(k[1])]
            vals = [x[:, :, r, q] if 0 <= r < h and 0 <= q < w else np.full((n, c), fill)
                    for r in rows for q in cols]
            y[:, :, i, j] = reduce_(np.stack(vals, -1), -1)
            if divisor is not None:
                y[:, :, i, j] /= divisor(rows[0], rows[-1] + 1, cols[0], cols[-1] + 1)
    return y


def _avg_divisor(h, w, p, include_pad):
    def divisor(i0, i1, j0, j1):
        if include_pad:
            return (min(i1, h + p[0]) - i0) * (min(j1, w + p[1]) - j0)
        return (min(i1, h) - max(i0, 0)) * (min(j1, w) - max(j0, 0))
    return divisor


def _adaptive_max_ref(x, oh, ow):
    h, w = x.shape[-2:]
    y = np.zeros(x.shape[:-2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            r0, r1 = i * h // oh, -(-(i + 1) * h // oh)
            c0, c1 = j * w // ow, -(-(j + 1) * w // ow)
            y[..., i, j] = x[..., r0:r1, c0:c1].max(axis=(-2, -1))
    return y


def _nearest_ref(x, out, exact=False):
    """Along each trailing axis: output i reads input floor((i [+ 0.5]) n / out)."""
    for axis, o in zip(range(x.ndim - len(out), x.ndim), out):
        n = x.shape[axis]
        src = [min(int((i + 0.5 * exact) * n / o), n - 1) for i in range(o)]
        x = np.take(x, src, axis=axis)
    return x


def _linear_ref(x, out, align_corners):
    """Along each trailing axis: output i blends the two inputs around its source position."""
    for axis, o in zip(range(x.ndim - len(out), x.ndim), out):
        n = x.shape[axis]
        parts = []
        for i in range(o):
            if align_corners:
                src = i * (n - 1) / (o - 1) if o > 1 else 0.0
            else:
                src = max((i + 0.5) * n / o - 0.5, 0.0)
            i0 = min(int(src), n - 1)
            i1 = min(i0 + 1, n - 1)
            lam = src - i0
            parts.append((1 - lam) * np.take(x, i0, axis) + lam * np.take(x, i1, axis))
        x = np.stack(parts, axis)
    return x


def _pixel_shuffle_ref(x, r):
    n, c, h, w = x.shape
    y = np.zeros((n, c // (r * r), h * r, w * r))
    for ch in range(c // (r * r)):
        for i in range(r):
            for j in range(r):
                y[:, ch, i::r, j::r] = x[:, ch * r * r + i * r + j]
    return y


def _unfold_ref(x, k, d, p, s):
    n, c, h, w = x.shape
    xp_ = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    cols = np.zeros((n, c, k[0], k[1], oh, ow))
    for a in range(k[0]):
        for b in range(k[1]):
            for i in range(oh):
                for j in range(ow):
                    cols[:, :, a, b, i, j] = xp_[:, :, i * s[0] + a * d[0], j * s[1] + b * d[1]]
    return cols.reshape(n, c * k[0] * k[1], oh * ow)


def _fold_ref(cols, size, k, d, p, s):
    n = cols.shape[0]
    c = cols.shape[1] // (k[0] * k[1])
    oh = (size[0] + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (size[1] + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    blocks = cols.reshape(n, c, k[0], k[1], oh, ow)
    y = np.zeros((n, c, size[0] + 2 * p[0], size[1] + 2 * p[1]))
    for a in range(k[0]):
        for b in range(k[1]):
            for i in range(oh):
                for j in range(ow):
                    y[:, :, i * s[0] + a * d[0], j * s[1] + b * d[1]] += blocks[:, :, a, b, i, j]
    return y[:, :, p[0]:p[0] + size[0], p[1]:p[1] + size[1]]


_FN = gpugrad.nn.functional
_CONV_T = (("ConvolutionBackward0",),)


RESAMPLING = [
    OpEntry("conv_transpose2d",
            lambda x, w, b: _FN.conv_transpose2d(x, w, b, 2, 1, 1, groups=2, dilation=(1, 2)),
            lambda x, w, b: _conv_transpose_ref(x, w, b, 2, 1, 1, 2, (1, 2)),
            (((2, 4, 3, 3), (4, 2, 3, 2), (4,)),), *_CONV_T),
    OpEntry("conv_transpose2d_no_bias",
            lambda x, w: _FN.conv_transpose2d(x, w, stride=(1, 3), padding=(1, 0),
                                              output_padding=(0, 2)),
            lambda x, w: _conv_transpose_ref(x, w, None, (1, 3), (1, 0), (0, 2)),
            (((1, 2, 3, 2), (2, 3, 3, 3)),), *_CONV_T),
    OpEntry("conv_transpose1d",
            lambda x, w, b: _FN.conv_transpose1d(x, w, b, stride=3, padding=1, output_padding=2),
            lambda x, w, b: _conv_transpose_ref(x[:, :, None], w[:, :, None], b, (1, 3), (0, 1),
                                                (0, 2))[:, :, 0],
            (((2, 3, 4), (3, 2, 3), (2,)),), *_CONV_T),
    OpEntry("conv2d_dilated", lambda x, w: _FN.conv2d(x, w, None, (2, 1), 1, (1, 2)),
            lambda x, w: _conv_dilated_ref(x, w, (2, 1), (1, 1), (1, 2)),
            (((2, 2, 5, 6), (3, 2, 3, 2)),), *_CONV_T),
    OpEntry("max_pool2d_ceil_dilation",
            lambda x: _FN.max_pool2d(x, (3, 2), (2, 3), 1, (1, 2), ceil_mode=True),
            lambda x: _window_ref(x, np.max, (3, 2), (2, 3), (1, 1), (1, 2), ceil=True),
            (((2, 2, 6, 7),),), ("MaxPool2DWithIndicesBackward0",)),
    OpEntry("max_pool1d", lambda x: _FN.max_pool1d(x, 3, 2, 1, ceil_mode=True),
            lambda x: _window_ref(x[:, :, None], np.max, (1, 3), (1, 2), (0, 1), ceil=True)[
                :, :, 0], (((2, 3, 8),),),
            ("MaxPool2DWithIndicesBackward0", "UnsqueezeBackward0", "SqueezeBackward1")),
    OpEntry("avg_pool2d_ceil_exclude_pad",
            lambda x: _FN.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
            lambda x: _window_ref(x, np.sum, (3, 3), (2, 2), (1, 1), ceil=True, fill=0.0,
                                  divisor=_avg_divisor(6, 5, (1, 1), False)),
            (((2, 2, 6, 5),),), ("AvgPool2DBackward0",)),
    OpEntry("avg_pool1d", lambda x: _FN.avg_pool1d(x, 4, 3, 1, ceil_mode=True),
            lambda x: _window_ref(x[:, :, None], np.sum, (1, 4), (1, 3), (0, 1), ceil=True,
                                  fill=0.0, divisor=_avg_divisor(1, 9, (0, 1), True))[:, :, 0],
            (((2, 3, 9),),), ("AvgPool2DBackward0", "SqueezeBackward1")),
    OpEntry("adaptive_max_pool2d", lambda x: _FN.adaptive_max_pool2d(x, (3, 2)),
            lambda x: _adaptive_max_ref(x, 3, 2), (((2, 2, 5, 7),), ((3, 4, 3),)),
            ("AdaptiveMaxPool2DBackward0",)),
    OpEntry("adaptive_max_pool1d", lambda x: _FN.adaptive_max_pool1d(x, 4),
            lambda x: _adaptive_max_ref(x[:, :, None], 1, 4)[:, :, 0], (((2, 3, 7),),),
            ("AdaptiveMaxPool2DBackward0",)),
    OpEntry("interpolate_nearest1d", lambda x: _FN.interpolate(x, size=7),
            lambda x: _nearest_ref(x, (7,)), (((2, 2, 3),),), ("UpsampleNearest1DBackward0",)),
    OpEntry("interpolate_nearest2d", lambda x: _FN.interpolate(x, size=(5, 2)),
            lambda x: _nearest_ref(x, (5, 2)), (((2, 2, 3, 4),),),
            ("UpsampleNearest2DBackward0",)),
    OpEntry("interpolate_nearest_exact1d", lambda x: _FN.interpolate(x, 7, mode="nearest-exact"),
            lambda x: _nearest_ref(x, (7,), exact=True), (((2, 2, 3),),),
            ("UpsampleNearestExact1DBackward0",)),
    OpEntry("interpolate_nearest_exact2d",
            lambda x: _FN.interpolate(x, (5, 3), mode="nearest-exact"),
            lambda x: _nearest_ref(x, (5, 3), exact=True), (((2, 2, 3, 4),),),
            ("UpsampleNearestExact2DBackward0",)),
    OpEntry("interpolate_linear", lambda x: _FN.interpolate(x, 7, mode="linear"),
            lambda x: _linear_ref(x, (7,), False), (((2, 2, 4),),),
            ("UpsampleLinear1DBackward0",)),
    OpEntry("interpolate_linear_align_corners",
            lambda x: _FN.interpolate(x, 3, mode="linear", align_corners=True),
            lambda x: _linear_ref(x, (3,), True), (((2, 2, 5),),),
            ("UpsampleLinear1DBackward0",)),
    OpEntry("interpolate_bilinear", lambda x: _FN.interpolate(x, (5, 2), mode="bilinear"),
            lambda x: _linear_ref(x, (5, 2), False), (((2, 2, 3, 4),),),
            ("UpsampleBilinear2DBackward0",)),
    OpEntry("interpolate_bilinear_align_corners",
            lambda x: _FN.interpolate(x, (2, 7), mode="bilinear", align_corners=True),
            lambda x: _linear_ref(x, (2, 7), True), (((1, 2, 3, 4),),),
            ("UpsampleBilinear2DBackward0",)),
    OpEntry("pixel_shuffle", lambda x: _FN.pixel_shuffle(x, 2),
            lambda x: _pixel_shuffle_ref(x, 2), (((2, 8, 2, 3),),), ("PixelShuffleBackward0",)),
    OpEntry("pixel_unshuffle", lambda x: _FN.pixel_unshuffle(_FN.pixel_shuffle(x, 2), 2),
            lambda x: x, (((2, 8, 2, 3),),),
            ("PixelShuffleBackward0", "PixelUnshuffleBackward0")),
    OpEntry("unfold", lambda x: _FN.unfold(x, (2, 3), (2, 1), (1, 0), (1, 2)),
            lambda x: _unfold_ref(x, (2, 3), (2, 1), (1, 0), (1, 2)), (((2, 2, 4, 6),),),
            ("Im2ColBackward0",)),
    OpEntry("fold", lambda x: _FN.fold(x, (4, 5), 2, 1, (1, 0), 2),
            lambda x: _fold_ref(x, (4, 5), (2, 2), (1, 1), (1, 0), (2, 2)), (((2, 8, 6),),),
            ("Col2ImBackward0",)),
]


BAG_INDEX, BAG_OFFSETS = np.array([1, 2, 4, 5, 4, 3, 2, 0]), np.array([0, 2, 2, 5])


def _bag_ref(w, psw=None, mode="sum", padding_idx=None):
    """Each bag's rows (weighted), reduced with a loop; empty bags give zeros."""
    ends = list(BAG_OFFSETS[1:]) + [len(BAG_INDEX)]
    out = []
    for start, end in zip(BAG_OFFSETS, ends):
        rows = [w[BAG_INDEX[j]] * (1.0 if psw is None else psw[j]) for j in range(start, end)
                if BAG_INDEX[j] != padding_idx]
        if not rows:
            out.append(np.zeros(w.shape[1]))
        else:
            out.append({"sum": np.sum, "mean": np.mean, "max": np.max}[mode](rows, axis=0))
    return np.array(out)


def _bag(w, psw=None, **kw):
    return _FN.embedding_bag(_const(BAG_INDEX, w), w, _const(BAG_OFFSETS, w),
                             per_sample_weights=psw, **kw)


EMBEDDING_BAG = [
    OpEntry("embedding_bag_sum_weighted", lambda w, p: _bag(w, p, mode="sum"),
            lambda w, p: _bag_ref(w, p), (((6, 3), (8,)),), ("EmbeddingBagBackward0",)),
    OpEntry("embedding_bag_mean_padding", lambda w: _bag(w, mode="mean", padding_idx=4),
            lambda w: _bag_ref(w, mode="mean", padding_idx=4), (((6, 3),),),
            ("EmbeddingBagBackward0",)),
    OpEntry("embedding_bag_max", lambda w: _bag(w, mode="max"),
            lambda w: _bag_ref(w, mode="max"), (((6, 3),),), ("EmbeddingBagBackward0",)),
]


# -- 3-D pools, unpooling, spatial transformers ---------------------------------------------------
def _pool3d_ref(x, reduce_, k, s, p, fill):
    """Each (k, k, k) window of x padded by p (with ``fill``), stride s, reduced (a loop)."""
    xp_ = np.pad(x, ((0, 0), (0, 0)) + ((p, p),) * 3, constant_values=fill)
    out = [(n - k) // s + 1 for n in xp_.shape[2:]]
    y = np.zeros(x.shape[:2] + tuple(out))
    for i in range(out[0]):
        for j in range(out[1]):
            for m in range(out[2]):
                win = xp_[:, :, i * s:i * s + k, j * s:j * s + k, m * s:m * s + k]
                y[:, :, i, j, m] = reduce_(win.reshape(x.shape[:2] + (-1,)), axis=-1)
    return y


def _adaptive3d_ref(x, out, reduce_):
    y = np.zeros(x.shape[:2] + out)
    for idx in np.ndindex(*out):
        box = tuple(slice(i * n // o, -(-(i + 1) * n // o))
                    for i, n, o in zip(idx, x.shape[2:], out))
        y[(Ellipsis,) + idx] = reduce_(x[(Ellipsis,) + box].reshape(x.shape[:2] + (-1,)), -1)
    return y


def _avg_pool3d_grad(x):
    g, = gpugrad.autograd.grad((_FN.avg_pool3d(x, 2) ** 2).sum(), x, create_graph=True)
    return g


def _avg_pool3d_grad_ref(x):
    m = _pool3d_ref(x, np.mean, 2, 2, 0, 0.0)
    return np.kron(m / 4, np.ones((1, 1, 2, 2, 2)))


_UNPOOL_IDX = np.array([[[0, 3], [9, 14]], [[5, 2], [12, 11]]])   # (2, 2, 2) into 4 x 4


def _unpool_ref(x, idx, size):
    y = np.zeros(x.shape[:2] + (int(np.prod(size)),))
    for n, c in np.ndindex(*x.shape[:2]):
        y[n, c, idx[c].reshape(-1)] = x[n, c].reshape(-1)
    return y.reshape(x.shape[:2] + size)


def _grid_sample_ref(x, grid):
    """Bilinear, zeros padding, align_corners=False, one output pixel at a time."""
    n, c, h, w = x.shape
    y = np.zeros((n, c) + grid.shape[1:3])
    for b, i, j in np.ndindex(n, *grid.shape[1:3]):
        sx, sy = ((grid[b, i, j] + 1) * (w, h) - 1) / 2
        x0, y0 = int(np.floor(sx)), int(np.floor(sy))
        for dy, dx in np.ndindex(2, 2):
            if 0 <= x0 + dx < w and 0 <= y0 + dy < h:
                wt = (1 - abs(sx - x0 - dx)) * (1 - abs(sy - y0 - dy))
                y[b, :, i, j] += wt * x[b, :, y0 + dy, x0 + dx]
    return y


def _grid3d_ref(x, grid):
    """Trilinear, zeros padding, align_corners=True."""
    n, c = x.shape[:2]
    size = np.array(x.shape[2:][::-1])          # (W, H, D): the grid's coordinate order
    y = np.zeros((n, c) + grid.shape[1:4])
    for b, i, j, m in np.ndindex(n, *grid.shape[1:4]):
        s = (grid[b, i, j, m] + 1) / 2 * (size - 1)
        base = np.floor(s).astype(int)
        for off in np.ndindex(2, 2, 2):
            q = base + off
            if np.all(q >= 0) and np.all(q < size):
                y[b, :, i, j, m] += np.prod(1 - np.abs(s - q)) * x[b, :, q[2], q[1], q[0]]
    return y


def _affine_ref(theta, size):
    """theta @ (x, y, 1) at each pixel centre of an (H, W) output (align_corners=False)."""
    h, w = size
    xs, ys = (np.arange(w) * 2 + 1) / w - 1, (np.arange(h) * 2 + 1) / h - 1
    base = np.array([[[x, y, 1.0] for x in xs] for y in ys])
    return np.einsum("hwk,nik->nhwi", base, theta)


POOLING_3D = [
    OpEntry("max_pool3d", lambda x: _FN.max_pool3d(x, 3, 2, 1),
            lambda x: _pool3d_ref(x, np.max, 3, 2, 1, -np.inf), (((2, 2, 4, 5, 3),),),
            ("MaxPool3DWithIndicesBackward0",)),
    OpEntry("avg_pool3d", lambda x: _FN.avg_pool3d(x, 2, 1),
            lambda x: _pool3d_ref(x, np.mean, 2, 1, 0, 0.0), (((2, 2, 3, 4, 3),),),
            ("AvgPool3DBackward0",)),
    OpEntry("avg_pool3d_grad", _avg_pool3d_grad, _avg_pool3d_grad_ref, (((1, 2, 4, 2, 4),),),
            ("AvgPool3DBackwardBackward0", "AvgPool3DBackward0")),
    OpEntry("adaptive_max_pool3d", lambda x: _FN.adaptive_max_pool3d(x, (2, 3, 2)),
            lambda x: _adaptive3d_ref(x, (2, 3, 2), np.max), (((2, 2, 3, 5, 4),),),
            ("AdaptiveMaxPool3DBackward0",)),
    OpEntry("max_unpool2d", lambda x: _FN.max_unpool2d(x, _const(_UNPOOL_IDX, x)
                                                       .expand(2, 2, 2, 2), 2),
            lambda x: _unpool_ref(x, _UNPOOL_IDX, (4, 4)), (((2, 2, 2, 2),),),
            ("MaxUnpool2DBackward0",)),
    OpEntry("max_unpool3d", lambda x: _FN.max_unpool3d(
        x, _const(_UNPOOL_IDX[:, None], x).expand(2, 2, 1, 2, 2), (1, 2, 2), (1, 2, 2)),
            lambda x: _unpool_ref(x, _UNPOOL_IDX, (1, 4, 4)), (((2, 2, 1, 2, 2),),),
            ("MaxUnpool3DBackward0",)),
    OpEntry("affine_grid", lambda t: _FN.affine_grid(t, (2, 3, 3, 4), align_corners=False),
            lambda t: _affine_ref(t, (3, 4)), (((2, 2, 3),),), ("AffineGridGeneratorBackward0",)),
    OpEntry("grid_sample", lambda x, g: _FN.grid_sample(x, g, align_corners=False),
            _grid_sample_ref, (((2, 2, 3, 4), (2, 3, 2, 2)),), ("GridSampler2DBackward0",),
            ((-2.0, 2.0), (-1.1, 1.1))),
    OpEntry("grid_sample_3d", lambda x, g: _FN.grid_sample(x, g, align_corners=True),
            _grid3d_ref, (((1, 2, 3, 2, 3), (1, 2, 1, 2, 3)),), ("GridSampler3DBackward0",),
            ((-2.0, 2.0), (-1.1, 1.1))),
]


# -- the remaining nn ops: CTC loss (every alignment enumerated), bicubic / antialiased / 3-D
# interpolation (per-axis loops), fractional max pooling (windows from fixed samples) ------------
def _cubic_w(d, a):
    d = abs(d)
    if d <= 1:
        return ((a + 2) * d - (a + 3)) * d * d + 1
    return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a if d < 2 else 0.0


def _bicubic_ref(x, out, align_corners):
    """Along each trailing axis: output i sums the 4 inputs around its source, border-clamped."""
    for axis, o in zip(range(x.ndim - len(out), x.ndim), out):
        n = x.shape[axis]
        parts = []
        for i in range(o):
            src = i * (n - 1) / (o - 1) if align_corners else (i + 0.5) * n / o - 0.5
            f = math.floor(src)
            parts.append(sum(_cubic_w(src - (f + k), -0.75)
                             * np.take(x, min(max(f + k, 0), n - 1), axis) for k in (-1, 0, 1, 2)))
        x = np.stack(parts, axis)
    return x


def _aa_ref(x, out, cubic):
    """Antialiased: the filter (tent, or cubic a = -0.5) stretched by n / o over the inputs,
    weights normalised per output."""
    for axis, o in zip(range(x.ndim - len(out), x.ndim), out):
        n = x.shape[axis]
        r = n / o
        stretch = max(r, 1.0)
        parts = []
        for i in range(o):
            c = r * (i + 0.5) - 0.5
            if cubic:
                ws = [_cubic_w((j - c) / stretch, -0.5) for j in range(n)]
            else:
                ws = [max(0.0, 1 - abs(j - c) / stretch) for j in range(n)]
            parts.append(sum(w * np.take(x, j, axis) for j, w in enumerate(ws)) / sum(ws))
        x = np.stack(parts, axis)
    return x


_FRAC_U = np.array([[[0.3, 0.8], [0.55, 0.1]]])


def _frac_starts(u, n, o, k):
    a = (n - k) / (o - 1)
    return [int((i + u) * a) - int(u * a) for i in range(o - 1)] + [n - k]


def _frac_ref(x, k=(2, 3), out=(3, 4)):
    y = np.empty(x.shape[:2] + out)
    for c in range(x.shape[1]):
        rows = _frac_starts(_FRAC_U[0, c, 1], x.shape[2], out[0], k[0])
        cols = _frac_starts(_FRAC_U[0, c, 0], x.shape[3], out[1], k[1])
        for i, h in enumerate(rows):
            for j, w in enumerate(cols):
                y[0, c, i, j] = x[0, c, h:h + k[0], w:w + k[1]].max()
    return y


_CTC_TARGETS, _CTC_IN, _CTC_TL = np.array([[1, 1], [2, 0]]), np.array([4, 3]), np.array([2, 1])


def _ctc_collapse(path, blank=0):
    out, prev = [], None
    for c in path:
        if c != prev and c != blank:
            out.append(c)
        prev = c
    return out


def _ctc_ref(x, reduction="mean"):
    import itertools
    lp = x - np.log(np.exp(x).sum(-1, keepdims=True))
    nll = []
    for n in range(lp.shape[1]):
        target = list(_CTC_TARGETS[n, :_CTC_TL[n]])
        total = sum(np.exp(sum(lp[t, n, c] for t, c in enumerate(path)))
                    for path in itertools.product(range(lp.shape[2]), repeat=_CTC_IN[n])
                    if _ctc_collapse(path) == target)
        nll.append(-np.log(total))
    nll = np.array(nll)
    return {"none": nll, "sum": nll.sum(), "mean": (nll / np.maximum(_CTC_TL, 1)).mean()}[
        reduction]


def _ctc(x, reduction="mean"):
    return _FN.ctc_loss(_FN.log_softmax(x, 2), _const(_CTC_TARGETS, x), _const(_CTC_IN, x),
                        _const(_CTC_TL, x), reduction=reduction)


CTC_AND_INTERPOLATION = [
    OpEntry("ctc_loss_mean", _ctc, _ctc_ref, (((4, 2, 3),),),
            ("CtcLossBackward0", "LogSoftmaxBackward0"), double_backward=False),
    OpEntry("ctc_loss_none", lambda x: _ctc(x, "none"), lambda x: _ctc_ref(x, "none"),
            (((4, 2, 3),),), ("CtcLossBackward0",), double_backward=False),
    OpEntry("interpolate_bicubic", lambda x: _FN.interpolate(x, (5, 3), mode="bicubic"),
            lambda x: _bicubic_ref(x, (5, 3), False), (((2, 2, 3, 4),),),
            ("UpsampleBicubic2DBackward0",)),
    OpEntry("interpolate_bicubic_align_corners",
            lambda x: _FN.interpolate(x, (2, 7), mode="bicubic", align_corners=True),
            lambda x: _bicubic_ref(x, (2, 7), True), (((1, 2, 3, 4),),),
            ("UpsampleBicubic2DBackward0",)),
    OpEntry("interpolate_bilinear_antialias",
            lambda x: _FN.interpolate(x, (3, 2), mode="bilinear", antialias=True),
            lambda x: _aa_ref(x, (3, 2), False), (((1, 2, 7, 5),),),
            ("UpsampleBilinear2DAaBackward0",)),
    OpEntry("interpolate_bicubic_antialias",
            lambda x: _FN.interpolate(x, (3, 6), mode="bicubic", antialias=True),
            lambda x: _aa_ref(x, (3, 6), True), (((1, 2, 8, 4),),),
            ("UpsampleBicubic2DAaBackward0",)),
    OpEntry("interpolate_trilinear", lambda x: _FN.interpolate(x, (3, 4, 2), mode="trilinear"),
            lambda x: _linear_ref(x, (3, 4, 2), False), (((1, 2, 2, 3, 4),),),
            ("UpsampleTrilinear3DBackward0",)),
    OpEntry("interpolate_nearest3d", lambda x: _FN.interpolate(x, (3, 5, 2)),
            lambda x: _nearest_ref(x, (3, 5, 2)), (((1, 2, 2, 3, 4),),),
            ("UpsampleNearest3DBackward0",)),
    OpEntry("interpolate_nearest_exact3d",
            lambda x: _FN.interpolate(x, (3, 5, 2), mode="nearest-exact"),
            lambda x: _nearest_ref(x, (3, 5, 2), exact=True), (((1, 2, 2, 3, 4),),),
            ("UpsampleNearestExact3DBackward0",)),
    OpEntry("fractional_max_pool2d",
            lambda x: _FN.fractional_max_pool2d(x, (2, 3), (3, 4),
                                                _random_samples=_const(_FRAC_U, x)),
            _frac_ref, (((1, 2, 6, 8),),), ("FractionalMaxPool2DBackward0",)),
]


# -- 3-D fractional max pooling (windows from fixed samples u_t, u_h, u_w per channel) -----------
_FRAC3_U = np.array([[[0.3, 0.8, 0.45], [0.55, 0.1, 0.9]]])


def _frac3_ref(x, k=(2, 2, 3), out=(2, 3, 2)):
    y = np.empty(x.shape[:2] + out)
    for c in range(x.shape[1]):
        ts, hs, ws = (_frac_starts(_FRAC3_U[0, c, a], x.shape[2 + a], out[a], k[a])
                      for a in range(3))
        for i, t in enumerate(ts):
            for j, h in enumerate(hs):
                for m, w in enumerate(ws):
                    y[0, c, i, j, m] = x[0, c, t:t + k[0], h:h + k[1], w:w + k[2]].max()
    return y


FRACTIONAL_3D = [
    OpEntry("fractional_max_pool3d",
            lambda x: _FN.fractional_max_pool3d(x, (2, 2, 3), (2, 3, 2),
                                                _random_samples=_const(_FRAC3_U, x)),
            _frac3_ref, (((1, 2, 4, 5, 6),),), ("FractionalMaxPool3DBackward0",)),
]


# -- recurrent cells: one step from the raw input (x W_ih^T + b_ih made by linear) ---------------
def _sig(x):
    return 1 / (1 + np.exp(-x))


def _lstm_cell_ref(x, h, c, w_ih, w_hh, b_ih, b_hh):
    i, f, g, o = np.split(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh, 4, axis=1)
    c_new = _sig(f) * c + _sig(i) * np.tanh(g)
    return _sig(o) * np.tanh(c_new), c_new


def _gru_cell_ref(x, h, w_ih, w_hh, b_ih, b_hh):
    (i_r, i_z, i_n), (h_r, h_z, h_n) = (np.split(x @ w_ih.T + b_ih, 3, axis=1),
                                        np.split(h @ w_hh.T + b_hh, 3, axis=1))
    r, z = _sig(i_r + h_r), _sig(i_z + h_z)
    n = np.tanh(i_n + r * h_n)
    return (1 - z) * n + z * h


def _rnn_cell_ref(act):
    return lambda x, h, w_ih, w_hh, b_ih, b_hh: act(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh)


_CELL_SHAPES = {"lstm": (((2, 3), (2, 4), (2, 4), (16, 3), (16, 4), (16,), (16,)),),
                "gru": (((2, 3), (2, 4), (12, 3), (12, 4), (12,), (12,)),),
                "rnn": (((2, 3), (2, 4), (4, 3), (4, 4), (4,), (4,)),)}

RECURRENT_CELLS = [
    OpEntry("lstm_cell", lambda x, h, c, *w: gpugrad.lstm_cell(x, (h, c), *w), _lstm_cell_ref,
            _CELL_SHAPES["lstm"], ("LstmCellBackward0", "AddmmBackward0")),
    OpEntry("lstm_cell_no_bias", lambda x, h, c, w_ih, w_hh: gpugrad.lstm_cell(x, (h, c), w_ih,
                                                                                w_hh),
            lambda x, h, c, w_ih, w_hh: _lstm_cell_ref(x, h, c, w_ih, w_hh, 0, 0),
            (_CELL_SHAPES["lstm"][0][:5],), ("LstmCellBackward0", "MmBackward0")),
    OpEntry("gru_cell", gpugrad.gru_cell, _gru_cell_ref, _CELL_SHAPES["gru"],
            ("GruCellBackward0", "AddmmBackward0")),
    OpEntry("gru_cell_no_bias", lambda x, h, w_ih, w_hh: gpugrad.gru_cell(x, h, w_ih, w_hh),
            lambda x, h, w_ih, w_hh: _gru_cell_ref(x, h, w_ih, w_hh, 0, 0),
            (_CELL_SHAPES["gru"][0][:4],), ("GruCellBackward0", "MmBackward0")),
    OpEntry("rnn_tanh_cell", gpugrad.rnn_tanh_cell, _rnn_cell_ref(np.tanh), _CELL_SHAPES["rnn"],
            ("RnnTanhCellBackward0", "AddmmBackward0")),
    OpEntry("rnn_relu_cell", gpugrad.rnn_relu_cell, _rnn_cell_ref(lambda v: np.maximum(v, 0)),
            _CELL_SHAPES["rnn"], ("RnnReluCellBackward0", "AddmmBackward0"), avoid=(0.0,)),
]
