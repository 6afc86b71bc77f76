"""Lazy modules: layers whose input size (in_features, in_channels, num_features) is read from
the first input. Until then their parameters and buffers are ``UninitializedParameter`` /
``UninitializedBuffer`` placeholders; the first call (or loading a state dict) materialises
them with the right shapes and PyTorch's initialisation, and the call turns the module into
its plain class (LazyLinear -> Linear)."""
from __future__ import annotations

from .. import _creation
from ..tensor import Tensor
from .conv_layers import ConvTranspose1d, ConvTranspose2d
from .layers import BatchNorm1d, BatchNorm2d, Conv1d, Conv2d, Linear
from .layers_3d import BatchNorm3d, Conv3d, ConvTranspose3d
from .norm_more import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .parameter import Parameter

__all__ = ["UninitializedParameter", "UninitializedBuffer", "LazyLinear", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
           "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]

_NO_SHAPE = ("Can't access the shape of an uninitialized parameter or buffer. This error usually "
             "happens in `load_state_dict` when trying to load an uninitialized parameter into "
             "an initialized one. Call `forward` to initialize the parameters before accessing "
             "their attributes.")


class _Uninitialized:
    """A placeholder with no shape yet; ``materialize`` gives it one (and its plain class)."""
    __slots__ = ()
    cls_to_become: type = Tensor

    def materialize(self, shape, device=None, dtype=None):
        """Become an uninitialised (empty) tensor of ``shape`` of the plain class."""
        data = _creation.empty(tuple(shape), device=device or self.device,
                               dtype=dtype or self.dtype)
        self._data = data._data
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(_NO_SHAPE)

    def size(self, dim=None):
        raise RuntimeError(_NO_SHAPE)

    @property
    def ndim(self):
        raise RuntimeError(_NO_SHAPE)

    def dim(self):
        raise RuntimeError(_NO_SHAPE)

    def numel(self):
        raise RuntimeError(_NO_SHAPE)

    def detach(self):
        return self

    def __repr__(self):
        return f"<{type(self).__name__}>"

    def __deepcopy__(self, memo):
        return type(self)(requires_grad=self._rg)

    def __reduce_ex__(self, proto):
        return (type(self), (self._rg,))


class UninitializedParameter(_Uninitialized, Parameter):
    """A parameter whose shape the first input decides."""
    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Parameter.__new__(cls, _creation.empty(0, device=device, dtype=dtype),
                                 requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass


class UninitializedBuffer(_Uninitialized, Tensor):
    """A buffer whose shape the first input decides."""
    __slots__ = ()

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        b = Tensor.__new__(cls)
        Tensor._init(b, _creation.empty(0, device=device, dtype=dtype)._data)
        if requires_grad:
            b.requires_grad = True
        return b

    def __init__(self, requires_grad=False, device=None, dtype=None):
        pass


class LazyModuleMixin:
    """Materialise the placeholders from the first input, then become ``cls_to_become``."""
    cls_to_become: type = None

    def has_uninitialized_params(self):
        return any(isinstance(v, _Uninitialized) for store in (self._parameters, self._buffers)
                   for v in store.values())

    def forward(self, *args, **kwargs):
        from ..autograd.grad_mode import no_grad
        with no_grad():   # reads the input's size; materialises what is still a placeholder
            self.initialize_parameters(*args, **kwargs)
        self.__class__ = self.cls_to_become
        return self.forward(*args, **kwargs)

    def _load(self, sd, prefix, missing, errors, expected, assign):
        # an uninitialised entry takes the checkpoint's shape before the copy
        for store in (self._parameters, self._buffers):
            for name, v in store.items():
                key = prefix + name
                if isinstance(v, _Uninitialized) and isinstance(sd.get(key), Tensor):
                    v.materialize(sd[key].shape)
        super()._load(sd, prefix, missing, errors, expected, assign)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self._size() != 0:
            super().reset_parameters()

    def _size(self):
        return self.in_channels


def _placeholders(module, names, kind, device, dtype):
    for name in names:
        if getattr(module, name, None) is not None:
            value = kind(device=device, dtype=dtype)
            (module.register_parameter if kind is UninitializedParameter
             else module.register_buffer)(name, value)


class LazyLinear(LazyModuleMixin, Linear):
    """Linear whose in_features is the first input's last dimension."""
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False, device, dtype)
        self.out_features = out_features
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def _size(self):
        return self.in_features

    def initialize_parameters(self, input):
        self.in_features = input.shape[-1]
        if self.has_uninitialized_params():
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self.reset_parameters()


class _LazyConvMixin(LazyModuleMixin):
    """Conv / ConvTranspose whose in_channels is the first input's channel dimension."""

    def __init__(self, out_channels, kernel_size, *args, device=None, dtype=None, **kw):
        super().__init__(0, 0, kernel_size, *args, device=device, dtype=dtype, **kw)
        self.out_channels = out_channels
        _placeholders(self, ("weight", "bias"), UninitializedParameter, device, dtype)

    def initialize_parameters(self, input, *args, **kwargs):
        n = self.cls_to_become._dims
        self.in_channels = input.shape[1] if input.ndim == n + 2 else input.shape[0]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if not self.has_uninitialized_params():
            return
        g = self.groups
        lead = ((self.in_channels, self.out_channels // g) if self.transposed else
                (self.out_channels, self.in_channels // g))
        self.weight.materialize(lead + tuple(self.kernel_size))
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()


class _LazyConv(_LazyConvMixin):
    transposed = False

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device=device, dtype=dtype)


class _LazyConvTranspose(_LazyConvMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(out_channels, kernel_size, stride, padding, output_padding, groups,
                         bias, dilation, padding_mode, device=device, dtype=dtype)


class LazyConv1d(_LazyConv, Conv1d):
    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    cls_to_become = ConvTranspose3d


class _LazyNorm(LazyModuleMixin):
    """BatchNorm whose num_features is the first input's channel dimension."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None):
        super().__init__(0, eps, momentum, affine, track_running_stats, device, dtype)
        _placeholders(self, ("weight", "bias"), UninitializedParameter, device, dtype)
        _placeholders(self, ("running_mean", "running_var"), UninitializedBuffer, device, dtype)

    def _size(self):
        return self.num_features

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            self.reset_running_stats()
            if self.affine:
                self.weight.fill_(1)
                self.bias.zero_()

    def initialize_parameters(self, input):
        self.num_features = input.shape[1]
        if not self.has_uninitialized_params():
            return
        for name in ("weight", "bias", "running_mean", "running_var"):
            v = getattr(self, name)
            if v is not None:
                v.materialize((self.num_features,))
        self.reset_parameters()


class LazyBatchNorm1d(_LazyNorm, BatchNorm1d):
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNorm, BatchNorm2d):
    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNorm, BatchNorm3d):
    cls_to_become = BatchNorm3d


class _LazyInstanceNorm(_LazyNorm):
    """InstanceNorm whose num_features is the first input's channel dimension (dim 1, or dim 0
    of an unbatched input); no affine parameters and no running statistics unless asked."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False,
                 device=None, dtype=None):
        super().__init__(eps, momentum, affine, track_running_stats, device, dtype)

    def initialize_parameters(self, input):
        dims = (self._no_batch, self._no_batch + 1)
        if input.dim() not in dims:
            raise ValueError(f"expected {dims[0]}D or {dims[1]}D input (got {input.dim()}D "
                             "input)")
        # NOTE: PyTorch reads dim 1 even for unbatched input; the channel dimension is meant
        channels = input.shape[input.dim() - self._no_batch]
        super().initialize_parameters(input.unsqueeze(0) if input.dim() == self._no_batch
                                      else input)
        self.num_features = channels


class LazyInstanceNorm1d(_LazyInstanceNorm, InstanceNorm1d):
    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyInstanceNorm, InstanceNorm2d):
    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyInstanceNorm, InstanceNorm3d):
    cls_to_become = InstanceNorm3d
