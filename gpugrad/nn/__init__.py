"""``gpugrad.nn``: modules, parameters, layers, losses, ``functional`` and ``init``."""
from __future__ import annotations

from . import functional, init, modules, utils
from .activations_more import (
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    RReLU,
    Softmax2d,
    Softshrink,
    Softsign,
    Tanhshrink,
    Threshold,
)
from .attention import MultiheadAttention
from .containers import (
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)
from .conv_layers import (
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    ConvTranspose1d,
    ConvTranspose2d,
    EmbeddingBag,
    Fold,
    MaxPool1d,
    PixelShuffle,
    PixelUnshuffle,
    Unfold,
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)
from .layers import (
    ELU,
    GELU,
    AvgPool2d,
    BatchNorm1d,
    BatchNorm2d,
    Conv1d,
    Conv2d,
    Dropout,
    Embedding,
    Flatten,
    Hardtanh,
    Identity,
    LayerNorm,
    LeakyReLU,
    Linear,
    LogSoftmax,
    MaxPool2d,
    Mish,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Tanh,
)
from .layers_3d import (
    AdaptiveAvgPool3d,
    AdaptiveMaxPool3d,
    AvgPool3d,
    BatchNorm3d,
    Conv3d,
    ConvTranspose3d,
    LPPool1d,
    LPPool2d,
    LPPool3d,
    MaxPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
)
from .layers_extra import (
    AlphaDropout,
    Bilinear,
    ChannelShuffle,
    Dropout3d,
    FeatureAlphaDropout,
)
from .layers_remaining import (
    AdaptiveLogSoftmaxWithLoss,
    Container,
    CTCLoss,
    DataParallel,
    FractionalMaxPool2d,
    FractionalMaxPool3d,
    NLLLoss2d,
    SyncBatchNorm,
)
from .lazy import (
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyBatchNorm3d,
    LazyConv1d,
    LazyConv2d,
    LazyConv3d,
    LazyConvTranspose1d,
    LazyConvTranspose2d,
    LazyConvTranspose3d,
    LazyInstanceNorm1d,
    LazyInstanceNorm2d,
    LazyInstanceNorm3d,
    LazyLinear,
    UninitializedBuffer,
    UninitializedParameter,
)
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .losses_more import (
    CosineEmbeddingLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    MarginRankingLoss,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    PoissonNLLLoss,
    SoftMarginLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)
from .module import Module
from .more_layers import (
    CELU,
    GLU,
    SELU,
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    CosineSimilarity,
    Dropout1d,
    Dropout2d,
    GroupNorm,
    KLDivLoss,
    LogSigmoid,
    PairwiseDistance,
    PReLU,
    Softmin,
    Unflatten,
)
from .norm_more import (
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LocalResponseNorm,
    RMSNorm,
)
from .padding import (
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from .parameter import Buffer, Parameter
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = ["Module", "Parameter", "functional", "init", "modules", "utils",
           # containers
           "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
           # layers
           "Linear", "Conv1d", "Conv2d", "MaxPool2d", "AvgPool2d", "Embedding", "LayerNorm",
           "BatchNorm1d", "BatchNorm2d", "Dropout", "Identity", "Flatten",
           # activations
           "ReLU", "LeakyReLU", "ReLU6", "ELU", "GELU", "SiLU", "Mish", "Softplus", "Hardtanh",
           "Tanh", "Sigmoid", "Softmax", "LogSoftmax",
           # losses
           "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "NLLLoss", "CrossEntropyLoss",
           "BCELoss", "BCEWithLogitsLoss",
           # recurrent and attention
           "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "RNNBase", "RNN", "LSTM", "GRU",
           "MultiheadAttention",
           # more layers, activations and losses
           "GroupNorm", "Dropout1d", "Dropout2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
           "Unflatten", "PReLU", "SELU", "CELU", "LogSigmoid", "Softmin", "GLU",
           "CosineSimilarity", "PairwiseDistance", "KLDivLoss",
           # transposed convolutions, pooling and resampling
           "ConvTranspose1d", "ConvTranspose2d", "MaxPool1d", "AvgPool1d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d",
           "PixelShuffle", "PixelUnshuffle", "Unfold", "Fold", "EmbeddingBag",
           # padding
           "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d",
           # further activations, normalisation, layers and losses
           "Hardsigmoid", "Hardswish", "Hardshrink", "Softshrink", "Softsign", "Tanhshrink",
           "Threshold", "RReLU", "Softmax2d", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d", "RMSNorm", "LocalResponseNorm", "Bilinear", "AlphaDropout",
           "FeatureAlphaDropout", "Dropout3d", "ChannelShuffle", "MarginRankingLoss",
           "HingeEmbeddingLoss", "CosineEmbeddingLoss", "SoftMarginLoss",
           "MultiLabelSoftMarginLoss", "MultiMarginLoss", "MultiLabelMarginLoss",
           "TripletMarginLoss", "TripletMarginWithDistanceLoss", "GaussianNLLLoss",
           "PoissonNLLLoss",
           # transformers
           "Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer",
           # 3-D layers, unpooling, Lp pools, lazy modules and buffers
           "Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d",
           "AdaptiveMaxPool3d", "BatchNorm3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
           "LPPool1d", "LPPool2d", "LPPool3d", "LazyLinear", "LazyConv1d", "LazyConv2d",
           "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "UninitializedParameter",
           "UninitializedBuffer", "Buffer",
           # CTC, adaptive softmax, fractional pooling, sync batch norm, data parallel, aliases
           "CTCLoss", "AdaptiveLogSoftmaxWithLoss", "FractionalMaxPool2d", "SyncBatchNorm",
           "DataParallel", "NLLLoss2d", "Container"]
__all__ += ["FractionalMaxPool3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
            "LazyInstanceNorm3d"]
