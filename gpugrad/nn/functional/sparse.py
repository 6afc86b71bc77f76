"""Embeddings and one-hot encoding: ``embedding``, ``embedding_bag`` (ops) and ``one_hot``."""
from __future__ import annotations

from ..._creation import int64
from ...ops.nn.embedding import embedding, embedding_bag

__all__ = ["embedding", "embedding_bag", "one_hot"]


def one_hot(tensor, num_classes=-1):
    """int64 tensor with a trailing dimension of size ``num_classes`` (not differentiable)."""
    from ..._creation import arange, empty
    if tensor.dtype != int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return empty(tuple(tensor.shape) + (num_classes,), dtype=int64, device=tensor.device)
    if int(tensor.min().item()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(tensor.max().item()) + 1
    elif num_classes <= int(tensor.max().item()):
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).long()
