"""The gpugrad.nn package: a real subpackage exporting the modules and functions."""
from __future__ import annotations

import warnings

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F


def test_nn_is_a_real_subpackage():
    from gpugrad import nn as nn2
    assert nn2 is nn and gpugrad.nn is nn
    assert F is nn.functional and nn.init.kaiming_uniform_


def test_new_names_are_exported():
    for name in ("RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell", "MultiheadAttention",
                 "GroupNorm", "Dropout1d", "Dropout2d", "PReLU", "SELU", "CELU",
                 "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "Unflatten", "CosineSimilarity",
                 "PairwiseDistance", "LogSigmoid", "Softmin", "GLU", "KLDivLoss"):
        assert name in nn.__all__ and issubclass(getattr(nn, name), nn.Module)
    for name in ("scaled_dot_product_attention", "multi_head_attention_forward", "group_norm",
                 "dropout1d", "dropout2d", "prelu", "selu", "celu", "adaptive_avg_pool1d",
                 "adaptive_avg_pool2d", "normalize", "cosine_similarity", "pairwise_distance",
                 "logsigmoid", "softmin", "glu", "kl_div"):
        assert name in F.__all__ and callable(getattr(F, name))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.LSTM(2, 3, 2, dropout=0.1)   # num_layers > 1: no warning
