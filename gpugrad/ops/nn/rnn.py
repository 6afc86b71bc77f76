"""Recurrent cells: one time step of an LSTM, a GRU or an Elman RNN as one op (one graph node
per step), behind ``torch.lstm_cell``, ``gru_cell``, ``rnn_tanh_cell``, ``rnn_relu_cell`` and
the ``nn`` recurrent layers.

Each op takes the step's input projection ``gi = x W_ih^T + b_ih`` already made (a sequence
layer makes it for every step in one product) and computes ``h W_hh^T + b_hh``, the gates and
the new state itself. Its backward is written out: on plain backward the gate math runs as one
fused kernel (``kernels.lstm_cell_bwd``, ``gru_cell_bwd``; their numpy references are the CPU
path) reading the activations the forward kept; under ``create_graph`` the gates are recomputed
from the saved inputs with differentiable ops and the same formulas run on them, so second
derivatives are exact.

The steps of one sequence share a ``Sequence``: on plain backward each step leaves its gate
gradients and its h for the sequence's first step, whose node runs last, to turn into W_hh's
(and b_hh's) gradient as one product over all steps, as PyTorch's fused RNNs do, where a step
alone would make a small product and the engine would add 32 of them up.
"""
from __future__ import annotations

import weakref

import numpy as np

from ... import kernels
from ..._exports import export
from ...autograd.engine import current_task
from .._op import Op
from ..linalg.products import linear


def _blocks(a, k, hidden):
    """The ``k`` column blocks of width ``hidden`` of a (N, k * hidden) array or tensor."""
    return tuple(a[:, j * hidden:(j + 1) * hidden] for j in range(k))


def _hh(xp, h, w_hh, seq):
    """h W_hh^T. BLAS runs h W^T ~2x slower than h (W^T copied contiguous) at these shapes:
    numpy takes the copy a sequence keeps, or for a lone step (W h^T)^T, a Fortran-ordered
    view the cell kernels read in place (kernels.gate_blocks)."""
    if xp is not np:
        return kernels.matmul(xp, h, w_hh.T)
    if seq is None:
        return np.matmul(w_hh, h.T).T
    if seq.w_t is None or seq.w_t[0] is not w_hh:
        seq.w_t = (w_hh, np.ascontiguousarray(w_hh.T))
    return np.matmul(h, seq.w_t[1])


def _hidden_product(F, h, w_hh, b_hh):
    """h W_hh^T + b_hh (arrays: BLAS straight into a fresh array; tensors: differentiable)."""
    y = F.matmul(h, F.swapaxes(w_hh, 0, 1))
    return y if b_hh is None else y + b_hh


class Sequence:
    """What the cell nodes of one sequence (one layer, one direction) share: the first step's
    node (weakly: the nodes hold this), which sums the weight gradients of them all, and the
    forward's transposed copy of W_hh."""
    __slots__ = ("first", "w_t", "__weakref__")

    def __init__(self):
        self.first = self.w_t = None   # w_t: (W_hh, W_hh^T contiguous) for the forward


def _weight_grads(F, d, h, need, node):
    """(d W_hh, d b_hh) of ``h W_hh^T + b_hh`` from its gradient ``d``; for a step of a
    ``Sequence`` on plain backward, None until its first step, which returns those of every step
    that ran in this backward."""
    if not (need[0] or need[1]):
        return None, None
    seq = node.seq
    if seq is not None and F.fast:
        first = seq.first() if seq.first is not None else None
        task = current_task()
        if first is not None and task is not None and task.will_execute(first):
            pending = task.hook_state.setdefault(seq, [])
            pending.append((d, h))
            if node is not first:
                return None, None
            del task.hook_state[seq]
            if len(pending) > 1:
                d = F.concatenate([p[0] for p in pending], 0)
                h = F.concatenate([p[1] for p in pending], 0)
    return (F.matmul(F.swapaxes(d, 0, 1), h) if need[0] else None,
            F.sum(d, 0) if need[1] else None)


def _join(node, seq):
    """Make ``node`` a step of ``seq`` (its first step when it is the first to join)."""
    node.seq = seq
    if seq is not None and seq.first is None:
        seq.first = weakref.ref(node)


class LstmCellBackward0(Op):
    """gates = gi + h W_hh^T + b_hh;  i, f, g, o = sigmoid, sigmoid, tanh, sigmoid of its four
    blocks;  c' = f c + i g;  h' = o tanh(c').  Outputs (h', c')."""
    __slots__ = ("act", "seq")
    saves = (0, 1, 2, 3, 4)
    optional_inputs = (4,)
    saved_names = ("input_gates", "hx", "cx", "w_hh", "b_hh")
    temps = ("act",)
    operand_names = ("input_gates", "hx", "cx", "w_hh", "b_hh")

    def forward(self, xp, gi, h, c, w_hh, b_hh, seq=None):
        h_new, c_new, self.act = kernels.lstm_cell(_hh(xp, h, w_hh, seq), gi, b_hh, c)
        _join(self, seq)
        return h_new, c_new

    def backward(self, F, grads, gi, h, c, w_hh, b_hh):
        gh, gc = grads
        if F.fast:
            d, dc = kernels.lstm_cell_bwd(self.act, c, gh, gc)
        else:
            d, dc = _lstm_cell_bwd_graph(F, gi, h, c, w_hh, b_hh, gh, gc)
        need = self.needs_input_grad
        return (d if need[0] else None, F.matmul(d, w_hh) if need[1] else None,
                dc if need[2] else None, *_weight_grads(F, d, h, need[3:], self))


LstmCellBackward0.n_outputs = 2


def _lstm_cell_bwd_graph(F, gi, h, c, w_hh, b_hh, gh, gc):
    """lstm_cell_bwd's formulas on tensors, the gates recomputed from the saved inputs."""
    hidden = c.shape[1]
    i, f, g, o = _blocks(gi + _hidden_product(F, h, w_hh, b_hh), 4, hidden)
    i, f, g, o = F.sigmoid(i), F.sigmoid(f), F.tanh(g), F.sigmoid(o)
    tc = F.tanh(f * c + i * g)
    gh = F.zeros_like(c) if gh is None else gh
    dc_new = gh * o * (1 - tc * tc)
    if gc is not None:
        dc_new = dc_new + gc
    d = F.concatenate([dc_new * g * i * (1 - i), dc_new * c * f * (1 - f),
                       dc_new * i * (1 - g * g), gh * tc * o * (1 - o)], 1)
    return d, dc_new * f


class GruCellBackward0(Op):
    """gh = h W_hh^T + b_hh;  r = sigmoid(gi_r + gh_r), z = sigmoid(gi_z + gh_z),
    n = tanh(gi_n + r gh_n);  h' = (1 - z) n + z h   (blocks r, z, n)"""
    __slots__ = ("act", "seq")
    saves = (0, 1, 2, 3)
    optional_inputs = (3,)
    saved_names = ("input_gates", "hx", "w_hh", "b_hh")
    temps = ("act",)
    operand_names = ("input_gates", "hx", "w_hh", "b_hh")

    def forward(self, xp, gi, h, w_hh, b_hh, seq=None):
        h_new, self.act = kernels.gru_cell(gi, _hh(xp, h, w_hh, seq), b_hh, h)
        _join(self, seq)
        return h_new

    def backward(self, F, gy, gi, h, w_hh, b_hh):
        if F.fast:
            d_gi, d_gh, dh = kernels.gru_cell_bwd(self.act, h, gy)
        else:
            d_gi, d_gh, dh = _gru_cell_bwd_graph(F, gi, h, w_hh, b_hh, gy)
        need = self.needs_input_grad
        return (d_gi if need[0] else None, dh + F.matmul(d_gh, w_hh) if need[1] else None,
                *_weight_grads(F, d_gh, h, need[2:], self))


def _gru_cell_bwd_graph(F, gi, h, w_hh, b_hh, gy):
    """gru_cell_bwd's formulas on tensors, the gates recomputed from the saved inputs."""
    hidden = h.shape[1]
    gh = _hidden_product(F, h, w_hh, b_hh)
    (i_r, i_z, i_n), (h_r, h_z, h_n) = _blocks(gi, 3, hidden), _blocks(gh, 3, hidden)
    r, z = F.sigmoid(i_r + h_r), F.sigmoid(i_z + h_z)
    n = F.tanh(i_n + r * h_n)
    dn = gy * (1 - z) * (1 - n * n)
    dz = gy * (h - n) * z * (1 - z)
    dr = dn * h_n * r * (1 - r)
    return F.concatenate([dr, dz, dn], 1), F.concatenate([dr, dz, dn * r], 1), gy * z


class RnnTanhCellBackward0(Op):
    """h' = tanh(gi + h W_hh^T + b_hh)"""
    __slots__ = ("seq",)
    saves = (1, 2)
    saves_output = True
    optional_inputs = (3,)
    saved_names = ("hx", "w_hh", "result")
    operand_names = ("input_gates", "hx", "w_hh", "b_hh")

    def forward(self, xp, gi, h, w_hh, b_hh, seq=None):
        _join(self, seq)
        y = gi + _hh(xp, h, w_hh, seq)
        if b_hh is not None:
            y += b_hh
        return self.activate(xp, y)

    @staticmethod
    def activate(xp, y):
        return xp.tanh(y, out=y)

    @staticmethod
    def activation_bwd(F, y, gy):
        return kernels.tanh_bwd(y, gy) if F.fast else gy * (1 - y * y)

    def backward(self, F, gy, h, w_hh, y):
        d = self.activation_bwd(F, y, gy)
        need = self.needs_input_grad
        return (d if need[0] else None, F.matmul(d, w_hh) if need[1] else None,
                *_weight_grads(F, d, h, need[2:], self))


class RnnReluCellBackward0(RnnTanhCellBackward0):
    """h' = relu(gi + h W_hh^T + b_hh)"""

    @staticmethod
    def activate(xp, y):
        return xp.maximum(y, y.dtype.type(0), out=y)

    @staticmethod
    def activation_bwd(F, y, gy):
        return kernels.relu_bwd(y, gy) if F.fast else gy * (y > 0)


# -- torch.* functions: the step from the raw input (its projection made here) -------------------
def _checked(input, states, w_ih, w_hh):
    """PyTorch's checks of a cell's input and states (batched, 2-D), then its projection."""
    for t in (input, *states):
        if t.dim() != 2:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-max(t.dim(), 1)}, {max(t.dim(), 1) - 1}], but got 1)")
    check_sizes(input, states, w_ih.shape[1], w_hh.shape[1], every_state=False)


def check_sizes(input, states, input_size, hidden_size, every_state=True):
    """PyTorch's size checks of a cell step's batched (2-D) input and states: the input's width,
    every state's batch, and the width of every state (the cell modules) or of the first
    (``torch.lstm_cell`` and the other functions)."""
    if input.shape[1] != input_size:
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                           f"expected {input_size}")
    for k, s in enumerate(states):
        if s.shape[0] != input.shape[0]:
            raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{k} "
                               f"batch size {s.shape[0]}")
        if s.shape[1] != hidden_size and (every_state or k == 0):
            raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {s.shape[1]}, "
                               f"expected {hidden_size}")


@export("lstm_cell")
def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """(h', c') of one LSTM step from ``input`` and ``hx = (h, c)``"""
    h, c = hx
    _checked(input, (h, c), w_ih, w_hh)
    return LstmCellBackward0.apply(linear(input, w_ih, b_ih), h, c, w_hh, b_hh)


@export("gru_cell")
def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """h' of one GRU step"""
    _checked(input, (hx,), w_ih, w_hh)
    return GruCellBackward0.apply(linear(input, w_ih, b_ih), hx, w_hh, b_hh)


@export("rnn_tanh_cell")
def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """h' = tanh(input W_ih^T + b_ih + hx W_hh^T + b_hh)"""
    _checked(input, (hx,), w_ih, w_hh)
    return RnnTanhCellBackward0.apply(linear(input, w_ih, b_ih), hx, w_hh, b_hh)


@export("rnn_relu_cell")
def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """h' = relu(input W_ih^T + b_ih + hx W_hh^T + b_hh)"""
    _checked(input, (hx,), w_ih, w_hh)
    return RnnReluCellBackward0.apply(linear(input, w_ih, b_ih), hx, w_hh, b_hh)


OPS = [LstmCellBackward0, GruCellBackward0, RnnTanhCellBackward0, RnnReluCellBackward0]
