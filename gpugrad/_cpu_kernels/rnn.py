"""The recurrent cells' gate math (``kernels.lstm_cell`` and the rest) as one loop each.

A cell's reference makes ~15 numpy calls on (N, H) blocks per time step; at the sizes of a
recurrent step (N a batch, H a few hundred) the calls, not the arithmetic, are its cost. Each
loop here reads the step's gate sums once and writes what the reference writes, in its layouts.
The backward loops repeat the reference's operations in its order (the same bits); the forward
ones use ``_math``'s sigmoid and tanh (a few ulp from numpy's) and fused multiply-adds.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._math import APPROXIMATE, sigmoid, tanh

f32 = np.float32
_JIT = dict(cache=True, nogil=True, error_model="numpy")
_JIT_APPROXIMATE = dict(_JIT, **APPROXIMATE)   # the forward loops (sigmoid, tanh)


def _float32(*arrays) -> bool:
    return all(a.dtype == np.float32 for a in arrays)


def _bias(b, size):
    return np.zeros(size, np.float32) if b is None else b


def _zeros_if_none(g, like):
    return np.zeros_like(like) if g is None else g


# -- LSTM --------------------------------------------------------------------------------------
# Each loop runs over one row's units through 1-D slices, the width passed in: LLVM vectorises
# such a loop, and gives up on 2-D indexing into many arrays or a bound read from a shape.
@njit(**_JIT_APPROXIMATE)
def _lstm_row(hh, gi, b, c, h_new, c_new, a_i, a_f, a_g, a_o, a_tc, hidden):
    for j in range(hidden):
        k = j + hidden
        m = k + hidden
        q = m + hidden
        i = sigmoid(hh[j] + gi[j] + b[j])
        f = sigmoid(hh[k] + gi[k] + b[k])
        g = tanh(hh[m] + gi[m] + b[m])
        o = sigmoid(hh[q] + gi[q] + b[q])
        cn = f * c[j] + i * g
        tc = tanh(cn)
        a_i[j] = i
        a_f[j] = f
        a_g[j] = g
        a_o[j] = o
        a_tc[j] = tc
        c_new[j] = cn
        h_new[j] = o * tc


@njit(**_JIT_APPROXIMATE)
def _lstm_cell(hh, gi, b, c, h_new, c_new, act):
    for r in range(c.shape[0]):
        _lstm_row(hh[r], gi[r], b, c[r], h_new[r], c_new[r], act[0, r], act[1, r], act[2, r],
                  act[3, r], act[4, r], c.shape[1])


def lstm_cell(hh, gi, b, c):
    if not _float32(hh, gi, c) or (b is not None and b.dtype != np.float32):
        return None
    rows, hidden = c.shape
    h_new, c_new = np.empty_like(c), np.empty_like(c)
    act = np.empty((5, rows, hidden), np.float32)
    _lstm_cell(np.ascontiguousarray(hh), gi, _bias(b, 4 * hidden), c, h_new, c_new, act)
    return h_new, c_new, act


@njit(**_JIT)
def _lstm_bwd_row(a_i, a_f, a_g, a_o, a_tc, c, gh, gc, d, dc, hidden):
    one = f32(1.0)
    for j in range(hidden):
        i = a_i[j]
        f = a_f[j]
        g = a_g[j]
        o = a_o[j]
        tc = a_tc[j]
        dcn = (one - tc * tc) * o * gh[j] + gc[j]
        d[j] = dcn * g * i * (one - i)
        d[j + hidden] = dcn * c[j] * f * (one - f)
        d[j + 2 * hidden] = dcn * i * (one + g) * (one - g)
        d[j + 3 * hidden] = gh[j] * tc * o * (one - o)
        dc[j] = dcn * f


@njit(**_JIT)
def _lstm_cell_bwd(act, c, gh, gc, d, dc):
    for r in range(c.shape[0]):
        _lstm_bwd_row(act[0, r], act[1, r], act[2, r], act[3, r], act[4, r], c[r], gh[r], gc[r],
                      d[r], dc[r], c.shape[1])


def lstm_cell_bwd(act, c, gh, gc):
    if gh is None and gc is None:
        return None
    gh, gc = _zeros_if_none(gh, c), _zeros_if_none(gc, c)
    if not _float32(act, c, gh, gc):
        return None
    rows, hidden = c.shape
    d = np.empty((rows, 4 * hidden), np.float32)
    dc = np.empty_like(c)
    _lstm_cell_bwd(act, c, np.ascontiguousarray(gh), np.ascontiguousarray(gc), d, dc)
    return d, dc


# -- GRU ---------------------------------------------------------------------------------------
@njit(**_JIT_APPROXIMATE)
def _gru_row(gi, hh, b, h, h_new, a_r, a_z, a_n, a_ghn, hidden):
    for j in range(hidden):
        k = j + hidden
        m = k + hidden
        rg = sigmoid(hh[j] + gi[j] + b[j])
        z = sigmoid(hh[k] + gi[k] + b[k])
        ghn = hh[m] + b[m]
        n = tanh(rg * ghn + gi[m])
        a_r[j] = rg
        a_z[j] = z
        a_n[j] = n
        a_ghn[j] = ghn
        h_new[j] = (h[j] - n) * z + n


@njit(**_JIT_APPROXIMATE)
def _gru_cell(gi, hh, b, h, h_new, act):
    for r in range(h.shape[0]):
        _gru_row(gi[r], hh[r], b, h[r], h_new[r], act[0, r], act[1, r], act[2, r], act[3, r],
                 h.shape[1])


def gru_cell(gi, hh, b, h):
    if not _float32(gi, hh, h) or (b is not None and b.dtype != np.float32):
        return None
    rows, hidden = h.shape
    h_new = np.empty_like(h)
    act = np.empty((4, rows, hidden), np.float32)
    _gru_cell(np.ascontiguousarray(gi), np.ascontiguousarray(hh), _bias(b, 3 * hidden), h,
              h_new, act)
    return h_new, act


@njit(**_JIT)
def _gru_bwd_row(a_r, a_z, a_n, a_ghn, h, gy, d_gi, d_gh, dh, hidden):
    one = f32(1.0)
    for j in range(hidden):
        rg = a_r[j]
        z = a_z[j]
        n = a_n[j]
        g = gy[j]
        omz = one - z
        dn = (one - n * n) * g * omz
        dz = (h[j] - n) * g * z * omz
        dr = dn * a_ghn[j] * rg * (one - rg)
        d_gi[j] = dr
        d_gi[j + hidden] = dz
        d_gi[j + 2 * hidden] = dn
        d_gh[j] = dr
        d_gh[j + hidden] = dz
        d_gh[j + 2 * hidden] = dn * rg
        dh[j] = g * z


@njit(**_JIT)
def _gru_cell_bwd(act, h, gy, d_gi, d_gh, dh):
    for r in range(h.shape[0]):
        _gru_bwd_row(act[0, r], act[1, r], act[2, r], act[3, r], h[r], gy[r], d_gi[r], d_gh[r],
                     dh[r], h.shape[1])


def gru_cell_bwd(act, h, gy):
    if gy is None or not _float32(act, h, gy):
        return None
    rows, hidden = h.shape
    d_gi = np.empty((rows, 3 * hidden), np.float32)
    d_gh = np.empty_like(d_gi)
    dh = np.empty_like(h)
    _gru_cell_bwd(act, h, np.ascontiguousarray(gy), d_gi, d_gh, dh)
    return d_gi, d_gh, dh
