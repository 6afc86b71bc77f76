"""AdaptiveLogSoftmaxWithLoss: the adaptive softmax of Grave et al., with PyTorch's clusters,
parameter names and output."""
from __future__ import annotations

from collections import namedtuple

from ... import _creation
from ...ops.reduction.softmax import log_softmax
from ...ops.shape.joining import cat
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]


_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Efficient softmax for many classes (Grave et al., 2016): the ``cutoffs[0]`` most frequent
    classes and one entry per tail cluster share a head; cluster i's classes get log p(cluster)
    + log p(class | cluster) from a low-rank projection of size in_features // div_value^(i+1)."""

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in "
                             "an increasing order, where each value is between 1 and "
                             "n_classes-1")
        kw = dict(device=device, dtype=dtype)
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs, self.div_value, self.head_bias = cutoffs + [n_classes], div_value, head_bias
        self.shortlist_size, self.n_clusters = self.cutoffs[0], len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, **kw),
                                        Linear(hsz, osz, bias=False, **kw)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        targ_dim = target_.dim()
        if targ_dim == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs "
                                   f"with size {tuple(input_.shape)}")
        elif targ_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs "
                                   f"with size {tuple(input_.shape)}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = targ_dim > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        n = target.size(0)
        output = _creation.zeros(n, dtype=input.dtype, device=input.device)
        gather = target.clone()   # the head column each row reads: its class or its cluster
        used = 0
        bounds = [0] + self.cutoffs
        for i in range(len(bounds) - 1):
            low, high = bounds[i], bounds[i + 1]
            mask = (target >= low) & (target < high)
            rows = mask.nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            if i > 0:
                local = target.index_select(0, rows) - low
                logp = log_softmax(self.tail[i - 1](input.index_select(0, rows)), 1)
                picked = logp.gather(1, local.unsqueeze(1)).squeeze(1)
                output = output.index_add(0, rows, picked)
                gather = gather.masked_fill(mask, self.shortlist_size + i - 1)
            used += rows.numel()
        if used != n:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head_logprob = log_softmax(self.head(input), 1)
        output = output + head_logprob.gather(1, gather.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input, head_output):
        head_logprob = log_softmax(head_output, 1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            logp = log_softmax(self.tail[i](input), 1)
            parts.append(logp + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, 1)

    def log_prob(self, input):
        """(N, n_classes) log-probabilities of every class (or (n_classes,) unbatched)."""
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        out = self._full_log_prob(x, self.head(x))
        return out if batched else out.squeeze(0)

    def predict(self, input):
        """The most likely class of each row: the head's argmax when it is a shortlist class,
        else the argmax of the full distribution."""
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        head_output = self.head(x)
        output = head_output.argmax(1)
        outside = output >= self.shortlist_size
        if bool(outside.any()):
            full = self._full_log_prob(x, head_output).argmax(1)
            output = full.where(outside, output)
        return output if batched else output.squeeze(0)
