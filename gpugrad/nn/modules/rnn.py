"""Recurrent layers: the RNN, LSTM and GRU cells and their multi-layer, optionally bidirectional
sequence versions: each time step one fused cell op (ops/nn/rnn.py), the input projection of
every step made at once before the loop; PyTorch's gate layouts
(LSTM i, f, g, o; GRU r, z, n), parameter names and initialisation."""
from __future__ import annotations

import math
import numbers
import warnings

from ... import _creation
from ...ops.nn import rnn as cells
from ...ops.shape import joining
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "RNNBase", "RNN", "LSTM", "GRU"]

# -- one time step: ``gi`` is the input projection x W_ih^T + b_ih, ``state`` a tuple; each step
# is one fused op (one graph node; ops/nn/rnn.py) ---------------------------------------------
# ``seq`` (a cells.Sequence, or None for a lone step) lets the steps of one sequence sum their
# weight gradients as one product.
def _rnn_tanh_step(gi, state, w_hh, b_hh, w_hr=None, seq=None):
    """h' = tanh(W_ih x + b_ih + W_hh h + b_hh)"""
    return (cells.RnnTanhCellBackward0.apply(gi, state[0], w_hh, b_hh, seq=seq),)


def _rnn_relu_step(gi, state, w_hh, b_hh, w_hr=None, seq=None):
    """h' = relu(W_ih x + b_ih + W_hh h + b_hh)"""
    return (cells.RnnReluCellBackward0.apply(gi, state[0], w_hh, b_hh, seq=seq),)


def _lstm_step(gi, state, w_hh, b_hh, w_hr=None, seq=None):
    """c' = f c + i g, h' = o tanh(c') (projected by W_hr when given); gates i, f, g, o"""
    h, c = cells.LstmCellBackward0.apply(gi, state[0], state[1], w_hh, b_hh, seq=seq)
    return (h if w_hr is None else F.linear(h, w_hr), c)


def _gru_step(gi, state, w_hh, b_hh, w_hr=None, seq=None):
    """h' = (1 - z) n + z h, n = tanh(W_in x + b_in + r (W_hn h + b_hn)); gates r, z, n"""
    return (cells.GruCellBackward0.apply(gi, state[0], w_hh, b_hh, seq=seq),)


_STEPS = {"RNN_TANH": _rnn_tanh_step, "RNN_RELU": _rnn_relu_step, "LSTM": _lstm_step,
          "GRU": _gru_step}


# -- cells --------------------------------------------------------------------------------------
class RNNCellBase(Module):
    """Holds ``weight_ih`` (chunks * hidden, input), ``weight_hh`` (chunks * hidden, hidden) and
    the biases ``bias_ih``, ``bias_hh``, all initialised U(-1/sqrt(hidden), 1/sqrt(hidden))."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        kw = dict(device=device, dtype=dtype)
        gates = num_chunks * hidden_size
        self.weight_ih = Parameter(_creation.empty((gates, input_size), **kw))
        self.weight_hh = Parameter(_creation.empty((gates, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(_creation.empty(gates, **kw))
            self.bias_hh = Parameter(_creation.empty(gates, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input, hx, n_states):
        """Validate, add the batch dimension to unbatched input, default the states to zeros."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            states = (hx,) if n_states == 1 else tuple(hx)
            for idx, value in enumerate(states):
                if value.dim() not in (1, 2):
                    what = "hidden" if n_states == 1 else f"hx[{idx}]"
                    raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got "
                                     f"{value.dim()}D instead")
            if n_states == 2 and len(states) != 2:
                raise RuntimeError("lstm_cell expects two hidden states")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = _creation.zeros(input.shape[0], self.hidden_size, dtype=input.dtype,
                                    device=input.device)
            states = (zeros,) * n_states
        elif not batched:
            states = tuple(s.unsqueeze(0) for s in states)
        cells.check_sizes(input, states, self.input_size, self.hidden_size)
        return input, states, batched

    def _cell(self, step, input, hx, n_states):
        input, states, batched = self._prepare(input, hx, n_states)
        out = step(F.linear(input, self.weight_ih, self.bias_ih), states, self.weight_hh,
                   self.bias_hh)
        return out if batched else tuple(s.squeeze(0) for s in out)


class RNNCell(RNNCellBase):
    """h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (or relu)."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        step = {"tanh": _rnn_tanh_step, "relu": _rnn_relu_step}.get(self.nonlinearity)
        if step is None:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return self._cell(step, input, hx, 1)[0]


class LSTMCell(RNNCellBase):
    """One LSTM step: returns ``(h', c')``; gates i, f, g, o stacked in the weights' rows."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        return self._cell(_lstm_step, input, hx, 2)


class GRUCell(RNNCellBase):
    """One GRU step; gates r, z, n stacked in the weights' rows."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        return self._cell(_gru_step, input, hx, 1)[0]


# -- sequence layers ----------------------------------------------------------------------------
class RNNBase(Module):
    """Stacked (optionally bidirectional) recurrent layers over a whole sequence. Parameters per
    layer ``k`` and direction: ``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``,
    ``bias_hh_l{k}`` (and ``weight_hr_l{k}`` for a projected LSTM), ``_reverse`` for the
    backward direction."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0, device=None,
                 dtype=None):
        super().__init__()
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
        for name, v in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(v, bool):
                raise TypeError(f"{name} should be of type bool, got: {type(v).__name__}")
        for name, v in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(v, int):
                raise TypeError(f"{name} should be of type int, got: {type(v).__name__}")
            if v <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        gates = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}.get(mode)
        if gates is None:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        directions = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        kw = dict(device=device, dtype=dtype)
        self._flat_weights_names, self._all_weights = [], []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * directions
            for direction in range(directions):
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih", (gates * hidden_size, layer_input)),
                          ("weight_hh", (gates * hidden_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gates * hidden_size,)),
                               ("bias_hh", (gates * hidden_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                names = []
                for stem, size in shapes:
                    name = f"{stem}_l{layer}{suffix}"
                    setattr(self, name, Parameter(_creation.empty(size, **kw)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self):
        """A no-op (PyTorch packs the weights for cuDNN here)."""

    @property
    def _flat_weights(self):
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- checks, as PyTorch words them ----------------------------------------------------------
    def _expected_size(self, input, last):
        batch = input.shape[0] if self.batch_first else input.shape[1]
        return (self.num_layers * (2 if self.bidirectional else 1), batch, last)

    def check_input(self, input, batch_sizes=None):
        w = self._flat_weights[0]
        if input.dtype != w.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({w.dtype}). Convert input: input.to({w.dtype}), or convert "
                             f"model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    @staticmethod
    def check_hidden_size(hx, expected, msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != tuple(expected):
            raise RuntimeError(msg.format(tuple(expected), list(hx.shape)))

    def _batch(self, input, hx, kind):
        """(input with a batch dimension, hx as 3-D states or None, batched?)"""
        if input.dim() not in (2, 3):
            tail = " tensor instead" if kind == "RNN" else " instead"
            raise ValueError(f"{kind}: Expected input to be 2D or 3D, got {input.dim()}D{tail}")
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        if hx is None:
            return input, None, batched
        states = tuple(hx) if kind == "LSTM" else (hx,)
        want = 3 if batched else 2
        if any(s.dim() != want for s in states):
            kind_ = "batched 3-D" if batched else "unbatched 2-D"
            if kind == "LSTM":
                dims = ", ".join(f"{s.dim()}-D" for s in states)
                raise RuntimeError(f"For {kind_} input, hx and cx should also be {want}-D but "
                                   f"got ({dims}) tensors")
            raise RuntimeError(f"For {kind_} input, hx should also be {want}-D but got "
                               f"{hx.dim()}-D tensor")
        if not batched:
            states = tuple(s.unsqueeze(1) for s in states)
        return input, states, batched

    def _forward(self, input, hx, kind):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx, kind)
        input, states, batched = self._batch(input, hx, kind)
        self.check_input(input)
        states = self._states(input, states, self._expected_size(input, 0)[1], kind)
        x = input.transpose(0, 1) if self.batch_first else input
        out, final = self._run(x, states)
        if self.batch_first:
            out = out.transpose(0, 1)
        if not batched:
            out = out.squeeze(0 if self.batch_first else 1)
            final = tuple(s.squeeze(1) for s in final)
        return out, final

    def _states(self, input, states, batch, kind):
        """The initial states, zeros when not given, checked against their expected sizes."""
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        layers = self.num_layers * (2 if self.bidirectional else 1)
        sizes = [(layers, batch, real_hidden)]
        if kind == "LSTM":
            sizes.append((layers, batch, self.hidden_size))
        if states is None:
            return tuple(_creation.zeros(s, dtype=input.dtype, device=input.device)
                         for s in sizes)
        if kind == "LSTM":
            for i, (s, size) in enumerate(zip(states, sizes)):
                self.check_hidden_size(s, size, f"Expected hidden[{i}] size {{}}, got {{}}")
        else:
            self.check_hidden_size(states[0], sizes[0])
        return states

    def _forward_packed(self, input, hx, kind):
        """A ``PackedSequence`` in, one out; the final states are each sequence's state after
        its own last step, in the batch's original order (as the initial ``hx`` is read)."""
        data, batch_sizes, sorted_indices, unsorted_indices = input
        self.check_input(data, batch_sizes)
        states = None
        if hx is not None:
            states = tuple(hx) if kind == "LSTM" else (hx,)
            if sorted_indices is not None:
                states = tuple(s.index_select(1, sorted_indices) for s in states)
        sizes = [int(b) for b in batch_sizes.tolist()]
        states = self._states(data, states, sizes[0], kind)
        out, final = self._run(data, states, sizes)
        if unsorted_indices is not None:
            final = tuple(s.index_select(1, unsorted_indices) for s in final)
        return PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices), final

    def _weights(self, k):
        """(weight_ih, weight_hh, bias_ih, bias_hh, weight_hr) of layer-direction ``k``, None
        where the layer has none."""
        suffix = self._all_weights[k][0][len("weight_ih"):]
        return tuple(getattr(self, stem + suffix, None)
                     for stem in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))

    def _run(self, x, states, batch_sizes=None):
        """Run every layer and direction over the time-major ``x`` (T, N, input), or over packed
        data (sum of ``batch_sizes``, input) whose step t holds ``batch_sizes[t]`` rows."""
        directions = 2 if self.bidirectional else 1
        per_layer = [s.unbind(0) for s in states]
        finals = []
        for layer in range(self.num_layers):
            outs = []
            for direction in range(directions):
                k = layer * directions + direction
                w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(k)
                if b_hh is not None and self.mode != "GRU":   # (GRU's b_hn is gated by r)
                    b_ih, b_hh = b_ih + b_hh, None   # both biases in the one projection
                gi = F.linear(x, w_ih, b_ih)   # every step's input projection at once
                state = tuple(s[k] for s in per_layer)
                weights = (w_hh, b_hh, w_hr)
                if batch_sizes is None:
                    out, state = self._scan(gi.unbind(0), state, weights, direction)
                    outs.append(joining.stack(out, 0))
                else:
                    out, state = self._scan_packed(gi.split(batch_sizes, 0), state, weights,
                                                   direction)
                    outs.append(joining.cat(out, 0))
                finals.append(state)
            x = outs[0] if directions == 1 else joining.cat(outs, -1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, tuple(joining.stack([f[i] for f in finals], 0) for i in range(len(states)))

    def _scan(self, gis, state, weights, reverse):
        """The per-step outputs (in time order) and the last state over equal-length steps."""
        step, hs, seq = _STEPS[self.mode], [], cells.Sequence()
        for gi in (reversed(gis) if reverse else gis):
            state = step(gi, state, *weights, seq=seq)
            hs.append(state[0])
        if reverse:
            hs.reverse()
        return hs, state

    def _scan_packed(self, gis, state, weights, reverse):
        """As ``_scan`` over packed steps, whose batch shrinks (sequences sorted longest first).
        Forward, the rows of sequences that end are set aside as their final states; in
        reverse, a sequence joins with its initial state at its own last step."""
        step, hs, done, seq = _STEPS[self.mode], [], [], cells.Sequence()
        full, live = state, gis[-1].shape[0] if reverse else gis[0].shape[0]
        state = tuple(s[:live] for s in full)
        for gi in (reversed(gis) if reverse else gis):
            n = gi.shape[0]
            if n > live:     # reverse: sequences n..live start here
                state = tuple(joining.cat([s, f[live:n]], 0) for s, f in zip(state, full))
            elif n < live:   # forward: sequences n..live ended at the previous step
                done.append(tuple(s[n:] for s in state))
                state = tuple(s[:n] for s in state)
            live = n
            state = step(gi, state, *weights, seq=seq)
            hs.append(state[0])
        if reverse:
            hs.reverse()
        elif done:
            state = tuple(joining.cat([s] + [d[i] for d in reversed(done)], 0)
                          for i, s in enumerate(state))
        return hs, state


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh) (or relu) per layer.
    Returns ``(output, h_n)``."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.__dict__["nonlinearity"] = args[3]
            args = args[:3] + args[4:]
        else:
            self.__dict__["nonlinearity"] = kwargs.pop("nonlinearity", "tanh")
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if self.nonlinearity not in modes:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(modes[self.nonlinearity], *args, **kwargs)

    def forward(self, input, hx=None):
        out, (h,) = self._forward(input, hx, "RNN")
        return out, h


class LSTM(RNNBase):
    """Long short-term memory over a sequence; returns ``(output, (h_n, c_n))``. With
    ``proj_size > 0`` the hidden state is projected by ``weight_hr_l{k}``."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        out, (h, c) = self._forward(input, hx, "LSTM")
        return out, (h, c)


class GRU(RNNBase):
    """Gated recurrent unit over a sequence; returns ``(output, h_n)``."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        out, (h,) = self._forward(input, hx, "GRU")
        return out, h
