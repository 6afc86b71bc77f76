"""Variable-length sequences, as ``torch.nn.utils.rnn``: padding a list of sequences into one
tensor, packing a padded batch into a ``PackedSequence`` (the valid steps only, time-major) and
back.

Every conversion is one ``index_select`` of the data (with one extra row holding the padding
value where padding is produced), so gradients flow back to the valid entries only; the
indices are computed on the host from the lengths.
"""
from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable

import numpy as np

from ... import _creation
from ...ops.shape import joining
from ...tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]

_SORT_HINT = ("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
              "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
              "to sidestep this requirement if you do not need ONNX exportability.")


def _host(t):
    """A tensor or sequence of ints as a host int64 numpy array."""
    return np.asarray(t.tolist() if isinstance(t, Tensor) else t, dtype=np.int64)


def _index(a, device):
    return _creation.tensor(np.ascontiguousarray(a, dtype=np.int64), dtype=_creation.int64,
                            device=device)


def _bind(t, fn):
    return None if t is None else fn(t)


class PackedSequence(namedtuple("PackedSequence_",
                                ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """A batch of sequences packed time-major: ``data`` (sum of lengths, *) holds step 0 of every
    sequence, then step 1 of those that have one, and so on; ``batch_sizes`` (a CPU int64 tensor)
    counts the sequences alive at each step. ``sorted_indices`` maps the packed order (longest
    first) to the original batch order and ``unsorted_indices`` is its inverse; both are None
    when the batch came sorted. Build it with ``pack_padded_sequence`` or ``pack_sequence``."""
    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never "
                "be created manually. They should be instantiated by functions like "
                "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """``data.to(...)``; the index tensors follow ``data``'s device. Returns ``self`` when
        ``data`` is unchanged."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes,
                          _bind(self.sorted_indices, lambda t: t.to(data.device)),
                          _bind(self.unsorted_indices, lambda t: t.to(data.device)))

    def cuda(self, *args, **kwargs):
        return self.to(*(args or ("cuda",)), **kwargs)

    def cpu(self):
        return self.to("cpu")

    def double(self):
        return self.to(dtype=_creation.float64)

    def float(self):
        return self.to(dtype=_creation.float32)

    def half(self):
        return self.to(dtype=_creation.float16)

    def long(self):
        return self.to(dtype=_creation.int64)

    def int(self):
        return self.to(dtype=_creation.int32)

    def short(self):
        return self.to(dtype=_creation.int16)

    def char(self):
        return self.to(dtype=_creation.int8)

    def byte(self):
        return self.to(dtype=_creation.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return False


def invert_permutation(permutation):
    """The inverse of a 1-D permutation tensor (None stays None)."""
    if permutation is None:
        return None
    p = _host(permutation)
    inv = np.empty_like(p)
    inv[p] = np.arange(p.size)
    return _index(inv, permutation.device)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch ``input`` (T, B, *) (or (B, T, *) when ``batch_first``) whose column
    ``b`` holds a sequence of length ``lengths[b]``. With ``enforce_sorted`` the lengths must be
    non-increasing; otherwise the batch is sorted (stably, longest first) and the permutation
    kept in ``sorted_indices``."""
    if isinstance(lengths, Tensor) and lengths.dim() != 1:
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.dim()}D {lengths.device.type} Long tensor")
    lengths = _host(lengths)
    sorted_indices = None
    if not enforce_sorted:
        order = np.argsort(-lengths, kind="stable")
        lengths = lengths[order]
        sorted_indices = _index(order, input.device)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    steps, batch = (input.shape[1], input.shape[0]) if batch_first else input.shape[:2]
    if lengths.size != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{lengths.size} (batch_size={batch})")
    if lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if np.any(np.diff(lengths) > 0):
        raise RuntimeError(_SORT_HINT)
    if lengths[0] > steps:
        # NOTE: PyTorch reads past the end of ``input`` here; an error is kinder
        raise RuntimeError(f"pack_padded_sequence: a length of {lengths[0]} exceeds the "
                           f"{steps} steps of the padded input")
    # packed row order: step t, then sorted position j < batch_sizes[t]
    t, j = np.nonzero(lengths[None, :] > np.arange(lengths[0])[:, None])
    b = j if sorted_indices is None else order[j]
    flat = b * steps + t if batch_first else t * batch + b
    rows = input.reshape((steps * batch,) + tuple(input.shape[2:]))
    data = rows.index_select(0, _index(flat, input.device))
    batch_sizes = _creation.tensor(np.bincount(t), dtype=_creation.int64)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _lengths_of(batch_sizes):
    """Sorted sequence lengths from the per-step batch sizes."""
    return (batch_sizes[None, :] > np.arange(batch_sizes[0])[:, None]).sum(1)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of ``pack_padded_sequence``: ``(padded, lengths)`` with the batch in its
    original order, padded with ``padding_value`` to ``total_length`` steps (default: the
    longest sequence)."""
    data, batch_sizes = sequence.data, _host(sequence.batch_sizes)
    steps = batch_sizes.size
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{steps}")
        steps = total_length
    lengths = _lengths_of(batch_sizes)
    order = np.arange(lengths.size)   # sorted position of each output column
    if sequence.unsorted_indices is not None:
        order = _host(sequence.unsorted_indices)
        lengths = lengths[order]
    offsets = np.concatenate([[0], np.cumsum(batch_sizes)])
    t = np.arange(steps)[:, None]
    src = offsets[np.minimum(t, batch_sizes.size)] + order[None, :]
    idx = np.where(t < lengths[None, :], src, data.shape[0])   # (steps, B); padding -> last row
    if batch_first:
        idx = idx.T
    return _gather_padded(data, idx, padding_value), _creation.tensor(lengths,
                                                                      dtype=_creation.int64)


def _gather_padded(data, idx, padding_value):
    """``rows[idx]`` where ``rows`` is ``data`` with one more row of ``padding_value``."""
    rest = tuple(data.shape[1:])
    pad = _creation.full((1,) + rest, padding_value, dtype=data.dtype, device=data.device)
    rows = joining.cat([data, pad], 0)
    out = rows.index_select(0, _index(idx.reshape(-1), data.device))
    return out.reshape(idx.shape + rest)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences (L_i, *) into (T, B, *) (or (B, T, *)), T the longest length, padding
    each with ``padding_value`` on the ``padding_side``."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg of "
                           f"type: {type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    sequences = _like_first(sequences)
    lengths = np.array([s.shape[0] for s in sequences], dtype=np.int64)
    steps = int(lengths.max())
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    t = np.arange(steps)[None, :]
    shift = steps - lengths[:, None] if padding_side == "left" else 0
    valid = (t >= shift) & (t < shift + lengths[:, None])
    idx = np.where(valid, starts[:, None] + t - shift, lengths.sum())   # (B, T)
    if not batch_first:
        idx = idx.T
    return _gather_padded(joining.cat(list(sequences), 0), idx, padding_value)


def _like_first(sequences):
    """Each sequence in the first one's dtype and trailing shape: PyTorch copies them into an
    output made like the first, so the others are cast, and broadcast where they can be."""
    first = sequences[0]
    trailing = tuple(first.shape[1:])
    out = []
    for s in sequences:
        s = s.to(first.dtype)
        if s.dim() and tuple(s.shape[1:]) != trailing:
            s = s.expand(_copy_shape((s.shape[0],) + trailing, tuple(s.shape)))
        out.append(s)
    return out


def _copy_shape(dst, src):
    """``dst`` when ``src`` broadcasts to it, else the error PyTorch's ``copy_`` raises."""
    n = max(len(dst), len(src))
    a, b = (1,) * (n - len(dst)) + dst, (1,) * (n - len(src)) + src
    for d in range(n - 1, -1, -1):
        if a[d] != b[d] and 1 not in (a[d], b[d]):
            raise RuntimeError(f"The size of tensor a ({a[d]}) must match the size of tensor b "
                               f"({b[d]}) at non-singleton dimension {d}")
    both = tuple(max(x, y) for x, y in zip(a, b))
    if both != dst:
        raise RuntimeError(f"output with shape {list(dst)} doesn't match the broadcast shape "
                           f"{list(both)}")
    return dst


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences ``padded[:lengths[b], b]`` (``padded[b, :lengths[b]]`` when
    ``batch_first``). Unlike PyTorch's, ``padded_sequences`` is not transposed in place."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences.unbind(0), _host(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    """``pack_padded_sequence(pad_sequence(sequences), lengths)``."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences (in their original order) of a ``PackedSequence``."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
