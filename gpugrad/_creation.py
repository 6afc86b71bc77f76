"""Tensor creation: from data, buffers and strides, filled, ranges, and random (seeded by
``manual_seed``)."""
from __future__ import annotations

import builtins
import contextlib
import math
import numbers
import warnings

import numpy as np

from . import _backend, _bfloat16
from ._arguments import expect_int, expect_number, expect_tensor, fits, overflow, type_name
from ._promotion import complex_of
from .autograd.grad_mode import state as grad_state
from .tensor import DEFAULT, Tensor, scalar_name

float16 = half = np.dtype(np.float16)
float32 = float = np.dtype(np.float32)
float64 = double = np.dtype(np.float64)
int8 = np.dtype(np.int8)
uint8 = np.dtype(np.uint8)
int16 = short = np.dtype(np.int16)
int32 = int = np.dtype(np.int32)
int64 = long = np.dtype(np.int64)
bool = np.dtype(np.bool_)
bfloat16 = _bfloat16.bfloat16   # a numpy dtype of ml_dtypes (a placeholder without it)
_builtin_float, _builtin_int, _builtin_bool = builtins.float, builtins.int, builtins.bool


def as_dtype(d):
    """A numpy dtype from a gpugrad/numpy dtype, a Python type or a name."""
    if d is None or isinstance(d, np.dtype):
        return d
    if isinstance(d, str):
        d = d.replace("torch.", "").replace("gpugrad.", "")
        if d == "bfloat16":
            d = _bfloat16.bfloat16
    _bfloat16.require(d)
    try:
        return np.dtype(d)
    except TypeError:
        raise TypeError(f"not a dtype: {d!r}") from None


def get_default_dtype():
    return DEFAULT.float


def set_default_dtype(d):
    d = as_dtype(d)
    if d.kind != "f":   # bfloat16 too: PyTorch refuses it as the default dtype
        raise TypeError(f"only floating-point types are supported as the default type (got {d})")
    DEFAULT.float = d


def as_array(data, default_float=None, dtype=None):
    """Array of ``data`` (nested lists, scalars, tensors, arrays) with PyTorch's dtype rules."""
    dtype = as_dtype(dtype)
    if isinstance(data, Tensor):
        a = data._data
        return a.copy() if dtype is None else a.astype(dtype)
    if _backend.is_array(data) and not isinstance(data, np.generic):
        return data.copy() if dtype is None else data.astype(dtype)
    want = None
    if isinstance(data, (list, tuple)) and data:
        # entries that carry a dtype (tensors, numpy scalars and arrays) take part in it
        typed = [v for v in _flat(data) if isinstance(v, (Tensor, np.generic, np.ndarray))]
        if typed:
            want = _sequence_dtype(typed, data, default_float or DEFAULT.float)
            data = _host_lists(data)
    try:
        a = np.array(data)
    except ValueError:
        raise _ragged_error(data) or ValueError("could not build a tensor of these data") from None
    except OverflowError:   # an int past 2**64
        raise ValueError("Overflow when unpacking long long") from None
    if a.dtype == object or a.dtype.kind in "USV":
        raise _data_error(data)
    if a.dtype == np.uint64 and not isinstance(data, np.generic):   # an int past int64
        raise ValueError("Overflow when unpacking long long")
    if dtype is not None:
        if dtype.kind in "iu" and a.dtype.kind in "iuf" and a.size and not isinstance(
                data, np.generic):
            _check_fits(a, dtype)
        return a.astype(dtype)
    if want is not None:
        return a.astype(want)
    if a.dtype.kind == "f" and not isinstance(data, np.generic):
        return a.astype(default_float or DEFAULT.float)
    if a.dtype.kind in "iu" and not isinstance(data, np.generic):
        return a.astype(np.int64)
    if a.dtype.kind == "c" and not isinstance(data, np.generic):   # PyTorch's default complex
        return a.astype(complex_of(None))
    return a


def _check_fits(a, dtype):
    """PyTorch's overflow error for Python numbers that the integer ``dtype`` cannot hold (a
    float is truncated first: 1.5 is 1, 300.0 is no int8)."""
    info = np.iinfo(dtype)
    low = -info.max if info.min == 0 else info.min   # -1 into uint8 wraps to 255, as in PyTorch
    v = np.trunc(a) if a.dtype.kind == "f" else a
    if not (np.isfinite(v).all() if a.dtype.kind == "f" else True) or v.min() < low \
            or v.max() > info.max:
        raise overflow(0, dtype)


def _data_error(data):
    """PyTorch's error for data that is not numbers in (nested) sequences: a string, or an
    entry of a type it cannot read (None, a dict)."""
    first = data
    while isinstance(first, (list, tuple)) and first:
        first = first[0]
    if isinstance(first, str) and first is not data:   # read as one more dimension
        return ValueError("too many dimensions 'str'")
    for v in _flat(data) if isinstance(data, (list, tuple)) else (data,):
        if isinstance(v, str):
            return TypeError("new(): invalid data type 'str'")
        if isinstance(v, _builtin_int) and not -2 ** 63 <= v < 2 ** 64:
            return ValueError("Overflow when unpacking long long")
        if not isinstance(v, (numbers.Number, np.generic, Tensor, np.ndarray)):
            return RuntimeError(f"Could not infer dtype of {type_name(v)}")
    return RuntimeError(f"Could not infer dtype of {type_name(data)}")


def _ragged_error(data):
    """PyTorch's error for nested sequences of uneven lengths: each dimension's length is the
    first entry's, and the first sequence that differs is named."""
    sizes, v = [], data
    while isinstance(v, (list, tuple)) and v:
        sizes.append(len(v))
        v = v[0]

    def walk(v, d):
        if d == len(sizes):   # (PyTorch's messages for a sequence or a number out of place)
            if isinstance(v, (list, tuple)):
                return TypeError(f"'{type(v).__name__}' object cannot be interpreted as an "
                                 f"integer")
            return None
        if not isinstance(v, (list, tuple)):
            return TypeError("not a sequence")
        if len(v) != sizes[d]:
            return ValueError(f"expected sequence of length {sizes[d]} at dim {d} (got {len(v)})")
        return next((e for e in (walk(x, d + 1) for x in v) if e is not None), None)
    return walk(data, 0)


def _sequence_dtype(typed, data, default):
    """PyTorch's dtype of a sequence: each entry's own (a Python float the default dtype, an
    int int64), promoted together: ``[np.float64(1.5), 2.0]`` is float64."""
    from ._promotion import _widest
    kinds = {type(v) for v in _flat(data) if not isinstance(v, (Tensor, np.generic, np.ndarray))}
    dtypes = {np.dtype(np.bool_) if k is _builtin_bool else np.dtype(np.int64)
              if issubclass(k, _builtin_int) else np.dtype(np.complex64) if issubclass(k, complex)
              else default for k in kinds}
    return _widest(list(dtypes) + [v.dtype for v in typed])


def _flat(data):
    for v in data:
        if isinstance(v, (list, tuple)):
            yield from _flat(v)
        else:
            yield v


def _host_lists(data):
    if isinstance(data, (list, tuple)):
        return [_host_lists(v) for v in data]
    if isinstance(data, Tensor):
        return data._host()
    return data


# -- the legacy constructors: Tensor(...), FloatTensor(...) ----------------------------------------
def legacy_array(args, dtype=None, device=None):
    """The array of ``Tensor(*args)`` and of the typed ``FloatTensor(*args)``: no args, ints or
    a ``Size`` give an uninitialised tensor of that shape (zeros here), data (a sequence or an
    array) a copy in ``dtype`` (default: the default float dtype), and a tensor is shared, as
    in PyTorch."""
    from .tensor import Size
    d = as_dtype(dtype) or DEFAULT.float
    one = args[0] if len(args) == 1 else None
    if isinstance(one, Tensor):
        if dtype is not None and one._data.dtype != d:
            raise TypeError(f"expected {d.name} tensor (got {one._data.dtype.name} tensor)")
        return one._data
    if isinstance(one, Size) or all(isinstance(v, _builtin_int) and not isinstance(
            v, _builtin_bool) for v in args):
        shape = tuple(one) if isinstance(one, Size) else args or (0,)
        return _backend.on_device(device, lambda xp: xp.zeros(shape, d))
    if one is None:
        bad = next(k for k, v in enumerate(args) if not isinstance(v, _builtin_int))
        raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {bad + 1} "
                        f"with error \"type must be tuple of ints,but got "
                        f"{type(args[bad]).__name__}\"")
    if isinstance(one, str):
        raise TypeError("new(): invalid data type 'str'")
    if not (isinstance(one, (list, tuple)) or _backend.is_array(one)) or isinstance(
            one, np.generic):
        raise TypeError(f"new(): data must be a sequence (got {type(one).__name__})")
    a = as_array(one, dtype=d)
    return a if device is None else _backend.to_device(a, _backend.device(device))


class TensorType(type):
    """The legacy tensor types (``FloatTensor``, ``LongTensor`` ...): calling one builds a CPU
    tensor of its dtype (``LongTensor(3)``: three uninitialised entries, ``FloatTensor([1, 2])``
    that data); ``isinstance(t, FloatTensor)`` asks whether t is a float32 CPU tensor."""

    def __call__(cls, *args, device=None):
        return _finish(legacy_array(args, cls.dtype, device), False)

    def __instancecheck__(cls, obj):
        return (isinstance(obj, Tensor) and obj._data.dtype == cls.dtype
                and isinstance(obj._data, np.ndarray))

    def __repr__(cls):
        return f"<class 'gpugrad.{cls.__name__}'>"


def _tensor_type(name, dtype):
    return TensorType(name, (), {"dtype": np.dtype(dtype), "is_cuda": False, "is_sparse": False,
                                 "__module__": "gpugrad", "__slots__": ()})


FloatTensor = _tensor_type("FloatTensor", np.float32)
DoubleTensor = _tensor_type("DoubleTensor", np.float64)
HalfTensor = _tensor_type("HalfTensor", np.float16)
LongTensor = _tensor_type("LongTensor", np.int64)
IntTensor = _tensor_type("IntTensor", np.int32)
ShortTensor = _tensor_type("ShortTensor", np.int16)
CharTensor = _tensor_type("CharTensor", np.int8)
ByteTensor = _tensor_type("ByteTensor", np.uint8)
BoolTensor = _tensor_type("BoolTensor", np.bool_)
TENSOR_TYPES = {t.__name__: t for t in (FloatTensor, DoubleTensor, HalfTensor, LongTensor,
                                        IntTensor, ShortTensor, CharTensor, ByteTensor,
                                        BoolTensor)}


def _on(d, device):
    """``d`` after checking ``device`` can hold it (bfloat16 cannot go to CUDA)."""
    if d.kind == "V":
        dev = _backend.default_device() if device is None else _backend.device(device)
        _bfloat16.check_device(d, dev.type)
    return d


def _finish(a, requires_grad):
    t = Tensor._make(a)
    if requires_grad:
        if not _bfloat16.is_inexact(a.dtype):   # (capitalised, unlike the attribute's message)
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t.requires_grad = True
    if grad_state.inference:  # made inside inference_mode: may not be saved for backward
        t._m()["inference"] = True
    return t


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    a = as_array(data, dtype=dtype)
    if device is not None:
        a = _backend.to_device(a, _backend.device(device))
    elif isinstance(a, np.ndarray) and _backend.default_device().type != "cpu" and not (
            isinstance(data, Tensor)):   # lists and numpy arrays alike go to the default device
        a = _backend.to_device(a, _backend.default_device())
    return _finish(a, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Shares memory with ``data`` when dtype and device allow (like PyTorch)."""
    if isinstance(data, Tensor):
        out = data if dtype is None else data.to(as_dtype(dtype))
        return out if device is None else out.to(device)
    if _backend.is_array(data) and not isinstance(data, np.generic):
        a = data if dtype is None else data.astype(as_dtype(dtype), copy=False)
        if device is None and type(a) is np.ndarray and _backend.default_device().type != "cpu":
            device = _backend.default_device()   # PyTorch: "constructed on the current device"
        if device is not None:
            a = _backend.to_device(a, _backend.device(device))
        return Tensor._make(a)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(a: np.ndarray) -> Tensor:
    if not isinstance(a, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(a).__name__})")
    return Tensor._make(a)


def _sized(fn):
    """Accept the shape as ``f(2, 3)``, ``f((2, 3))`` or ``f(size=(2, 3))``."""
    import functools

    @functools.wraps(fn)
    def wrapper(*size, **kw):
        if "size" in kw:
            size = (kw.pop("size"),)
        check_size(fn.__name__, size)
        return fn(*size, **kw)
    return wrapper


def check_size(name, size):
    """PyTorch's errors for a size given as ``f(2, 3)`` or ``f((2, 3))`` holding a non-integer
    or a negative entry."""
    import operator
    if not size:
        raise TypeError(f"{name}() missing 1 required positional arguments: \"size\"")
    nested = len(size) == 1 and isinstance(size[0], (tuple, list))
    dims = size[0] if nested else size
    for k, v in enumerate(dims):
        try:
            if k == 0 and isinstance(v, _builtin_bool):   # PyTorch reads the first entry's
                raise TypeError                            # type only
            operator.index(v)
        except TypeError:
            kind = type(v).__name__
            if nested:
                msg = f"must be tuple of ints, but found element of type {kind} at pos {k}"
            elif len(size) == 1:
                msg = f"must be tuple of ints, not {kind}"
            else:
                raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos "
                                f"{k + 1} with error \"type must be tuple of ints,but got "
                                f"{kind}\"") from None
            raise TypeError(f"{name}(): argument 'size' (position 1) {msg}") from None
    dims = [operator.index(v) for v in dims]
    if any(n < 0 for n in dims):
        raise RuntimeError(f"{name}: Dimension size must be non-negative." if name == "zeros" else
                           f"Trying to create tensor with negative dimension "
                           f"{next(n for n in dims if n < 0)}: {dims}")


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return tuple(_builtin_int(s) for s in size)


def _fill(fn, size, dtype, device, requires_grad):
    d = _on(as_dtype(dtype) or DEFAULT.float, device)
    a = _backend.on_device(device, lambda xp: fn(xp, _size(size), d))
    return _finish(a, requires_grad)


@_sized
def zeros(*size, dtype=None, device=None, requires_grad=False, out=None):
    return _fill(lambda xp, s, d: xp.zeros(s, d), size, dtype, device, requires_grad)


@_sized
def ones(*size, dtype=None, device=None, requires_grad=False):
    return _fill(lambda xp, s, d: xp.ones(s, d), size, dtype, device, requires_grad)


@_sized
def empty(*size, dtype=None, device=None, requires_grad=False):
    return _fill(lambda xp, s, d: xp.empty(s, d), size, dtype, device, requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    check_size("full", (size,))
    if isinstance(fill_value, Tensor) and fill_value.ndim == 0:
        fill_value = fill_value.item()
    expect_number(fill_value, "full", "fill_value")
    if dtype is None:
        dtype = (np.bool_ if isinstance(fill_value, _builtin_bool) else np.int64
                 if isinstance(fill_value, _builtin_int) else complex_of(None)
                 if isinstance(fill_value, complex) else DEFAULT.float)
    elif not fits(fill_value, as_dtype(dtype)):
        raise overflow(fill_value, as_dtype(dtype))
    elif as_dtype(dtype).kind == "u" and fill_value < 0:   # wraps, as in PyTorch
        fill_value = _builtin_int(fill_value) % (np.iinfo(as_dtype(dtype)).max + 1)
    return _fill(lambda xp, s, d: xp.full(s, fill_value, d), (size,), dtype, device,
                 requires_grad)


def _like(fn, input, dtype, device, requires_grad, *args):
    expect_tensor(input, f"{fn.__name__}_like")
    dtype = as_dtype(dtype) or input._data.dtype
    device = device if device is not None else input.device
    return fn(input._data.shape, *args, dtype=dtype, device=device, requires_grad=requires_grad)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False):
    return _like(zeros, input, dtype, device, requires_grad)


def ones_like(input, *, dtype=None, device=None, requires_grad=False):
    return _like(ones, input, dtype, device, requires_grad)


def empty_like(input, *, dtype=None, device=None, requires_grad=False):
    return _like(empty, input, dtype, device, requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False):
    expect_tensor(input, "full_like")
    dtype = as_dtype(dtype) or input._data.dtype
    return full(input._data.shape, fill_value, dtype=dtype,
                device=device if device is not None else input.device,
                requires_grad=requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    for arg, v in (("start", start), ("end", end), ("step", step)):
        if not fits(expect_number(v, "arange", arg), float64):   # a complex number
            raise overflow(v, float64)
    if dtype is not None and as_dtype(dtype) == np.bool_:
        raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool'")
    if not (step > 0 or step < 0):
        raise RuntimeError("step must be nonzero")
    if not (np.isfinite(start) and np.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start:g} -> {end:g}")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        dtype = DEFAULT.float if any(isinstance(v, (_builtin_float, np.floating))
                                     for v in (start, end, step)) else np.int64
    elif as_dtype(dtype).kind in "iu":
        return _int_arange(start, end, step, as_dtype(dtype), device, requires_grad)
    d = _on(as_dtype(dtype), device)
    if d.kind == "V":   # bfloat16: the values in float32, rounded (numpy cannot step in it)
        return _finish(np.arange(start, end, step, dtype=np.float32).astype(d), requires_grad)
    return _finish(_backend.on_device(device, lambda xp: xp.arange(start, end, step, dtype=d)),
                   requires_grad)


def _int_arange(start, end, step, d, device, requires_grad):
    """arange in an integer dtype, as PyTorch computes it: the values step from the truncated
    start by the truncated step; their count comes from the truncated bounds for int64 and from
    the exact ones for the narrower types."""
    import math
    i0, i1, di = _builtin_int(start), _builtin_int(end), _builtin_int(step)
    if di == 0:
        raise ValueError("step must be nonzero")
    n = -((i0 - i1) // di) if d == np.int64 else math.ceil((end - start) / step)
    return _finish(_backend.on_device(device, lambda xp: (
        i0 + di * xp.arange(max(n, 0), dtype=np.int64)).astype(d)), requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    d = as_dtype(dtype) or DEFAULT.float
    expect_number(start, "linspace", "start")
    expect_number(end, "linspace", "end")
    steps = expect_int(steps, "linspace", "steps")
    if dtype is None and (isinstance(start, complex) or isinstance(end, complex)):
        d = complex_of(None)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return _finish(_backend.on_device(device, lambda xp: xp.linspace(start, end, steps).astype(d)),
                   requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    d = as_dtype(dtype) or DEFAULT.float
    for arg, v in (("n", n), ("m", m)):
        if (v is not None or arg == "n") and expect_int(v, "eye", arg) < 0:
            raise RuntimeError(f"{arg} must be greater or equal to 0, got {v}")
    return _finish(_backend.on_device(device, lambda xp: xp.eye(n, m, dtype=d)), requires_grad)


# -- random -------------------------------------------------------------------------------------
_DEFAULT_SEED = 67280421310721


class Generator:
    """A seeded source of random numbers (``gpugrad.Generator().manual_seed(0)``)."""

    def __init__(self, device="cpu"):
        self.device = _backend.device(device)
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed):
        self._seed = _builtin_int(seed)
        self._np = np.random.default_rng(self._seed)
        self._cp = None
        return self

    def initial_seed(self):
        return self._seed

    def seed(self):
        s = _builtin_int(np.random.SeedSequence().entropy % (2 ** 63))
        self.manual_seed(s)
        return s

    def _rng(self, xp):
        if xp is np:
            return self._np
        if self._cp is None:
            self._cp = xp.random.default_rng(self._seed)
        return self._cp

    def _fork(self):
        """A point the draws from here on can be replayed from (``_replay``), for code that runs
        twice and must draw the same numbers (checkpointing). The numpy state is copied; CuPy's
        generator cannot be read back without a sync, so a GPU generator already in use restarts
        from a seed drawn from the CPU stream (deterministic under ``manual_seed``)."""
        cuda_seed = None
        if self._cp is not None:
            cuda_seed = _builtin_int(self._np.integers(2 ** 63))
            self._cp = _backend.cupy_module().random.default_rng(cuda_seed)
        return self._np.bit_generator.state, cuda_seed

    @contextlib.contextmanager
    def _replay(self, fork):
        """Draw, within the block, what was drawn after ``fork``; the streams resume after."""
        saved = self._np.bit_generator.state, self._cp
        state, cuda_seed = fork
        self._np.bit_generator.state = state
        self._cp = None if cuda_seed is None else _backend.cupy_module().random.default_rng(
            cuda_seed)
        try:
            yield
        finally:
            self._np.bit_generator.state, self._cp = saved


default_generator = Generator()


def manual_seed(seed):
    """Seed every generator (CPU and all CUDA devices): same seed, same values."""
    default_generator.manual_seed(seed)
    return default_generator


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def _random(sample, size, dtype, device, requires_grad, generator):
    d = _on(as_dtype(dtype) or DEFAULT.float, device)
    gen = generator or default_generator

    def make(xp):
        rng = gen._rng(xp)
        work = d if d in (float32, float64) else float32
        return sample(rng, _size(size), work).astype(d, copy=False)
    return _finish(_backend.on_device(device, make), requires_grad)


@_sized
def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    return _random(lambda r, s, d: r.random(s, dtype=d), size, dtype, device, requires_grad,
                   generator)


@_sized
def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    return _random(lambda r, s, d: r.standard_normal(s, dtype=d), size, dtype, device,
                   requires_grad, generator)


def rand_like(input, *, dtype=None, device=None, requires_grad=False):
    expect_tensor(input, "rand_like")
    return rand(input._data.shape, dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad=False):
    expect_tensor(input, "randn_like")
    return randn(input._data.shape, dtype=dtype or input.dtype, device=device or input.device,
                 requires_grad=requires_grad)


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False):
    if size is None and isinstance(high, (tuple, list)):   # randint(high, size)
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    low, high = expect_int(low, "randint", "low"), expect_int(high, "randint", "high")
    check_size("randint", (size,))
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    d = as_dtype(dtype) or int64
    if d.kind in "iub":
        lo, hi = (0, 1) if d.kind == "b" else (np.iinfo(d).min, np.iinfo(d).max)
        for what, v in (("from", low), ("to - 1", high - 1)):
            if not lo <= v <= hi:
                raise RuntimeError(f"{what} is out of bounds for {_C_NAMES[d.name]}")
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(f"randint(): argument 'generator' must be torch.Generator, not "
                        f"{type(generator).__name__}")
    gen = generator or default_generator
    return _finish(_backend.on_device(
        device, lambda xp: gen._rng(xp).integers(low, high, _size((size,)), dtype=np.int64)
        .astype(d, copy=False)), requires_grad)


_C_NAMES = {"bool": "bool", "int8": "signed char", "uint8": "unsigned char", "int16": "short",
            "int32": "int", "int64": "long"}   # as PyTorch's range errors name the dtypes
_truth = builtins.bool   # this module defines ``bool`` (the dtype)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False):
    return randint(low, high, input._data.shape, dtype=dtype or input.dtype,
                   device=device or input.device, requires_grad=requires_grad)


def bernoulli(input, p=None, *, generator=None):
    """1 with probability ``input`` (or ``p``) per entry, else 0; ``input``'s dtype."""
    xp = _backend.xp_of(input._data)
    probs = input._data if p is None else xp.asarray(p)
    if probs.size and not _truth(((probs >= 0) & (probs <= 1)).all()):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    u = (generator or default_generator)._rng(xp).random(input._data.shape)
    return Tensor._make((u < probs).astype(input.dtype, copy=False))


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Category indices drawn by the (unnormalised) weights of each row of ``input``."""
    w = input._data
    if w.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    xp = _backend.xp_of(w)
    rows = w.reshape(1, -1) if w.ndim == 1 else w
    if _truth((rows < 0).any()) or not _truth(xp.isfinite(rows).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    positive = (rows > 0).sum(axis=1)
    if _truth((positive == 0).any()):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and (num_samples > rows.shape[1] or _truth((positive < num_samples).any())):
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement" if num_samples > rows.shape[1] else
                           "invalid multinomial distribution (with replacement=False, not "
                           "enough non-negative category to sample)")
    rng = (generator or default_generator)._rng(xp)
    if replacement:   # inverse CDF: how many cumulative weights lie at or below u
        cdf = xp.cumsum(rows, axis=1, dtype=np.float64)
        u = rng.random((rows.shape[0], num_samples)) * cdf[:, -1:]
        # a binary search per row: memory of the draws, not draws x categories
        out = xp.stack([xp.searchsorted(c, v, side="right") for c, v in zip(cdf, u)])
        out = xp.minimum(out, rows.shape[1] - 1)
    else:             # Gumbel top-k: the k largest log w + Gumbel noise, a draw without return
        with np.errstate(divide="ignore"):
            keys = xp.log(rows.astype(np.float64)) - xp.log(-xp.log(rng.random(rows.shape)))
        out = xp.argsort(-keys, axis=1)[:, :num_samples]
    out = out.astype(np.int64, copy=False)
    return Tensor._make(out[0] if w.ndim == 1 else out)


def randperm(n, *, generator=None, dtype=None, device=None):
    gen = generator or default_generator
    d = as_dtype(dtype) or int64
    def make(xp):
        rng = gen._rng(xp)
        if xp is np:
            return rng.permutation(n).astype(d, copy=False)
        return xp.argsort(rng.random(n)).astype(d, copy=False)  # CuPy's Generator: no permutation
    return _finish(_backend.on_device(device, make), False)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad=False):
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        ref = mean if isinstance(mean, Tensor) else std
        shape = np.broadcast_shapes(getattr(mean, "shape", ()), getattr(std, "shape", ()))
        z = randn(shape, generator=generator, dtype=ref.dtype, device=ref.device)
        return (z * std + mean).detach()
    z = randn(size if size is not None else (), generator=generator, dtype=dtype, device=device)
    out = z._data * z._data.dtype.type(std) + z._data.dtype.type(mean)
    return _finish(out, requires_grad)


# -- from Python data, buffers and strides -------------------------------------------------------
def scalar_tensor(s, *, dtype=None, device=None, layout=None, requires_grad=False,
                  pin_memory=False):
    """A 0-d tensor holding s, in the default float dtype unless dtype is given."""
    d = as_dtype(dtype) or DEFAULT.float
    if not fits(expect_number(s, "scalar_tensor", "s"), d):
        raise overflow(s, d)
    return _finish(_backend.on_device(device, lambda xp: xp.asarray(s, dtype=d)), requires_grad)


def _same_device(a, dev):
    return dev is None or _backend.device_of(a) == _backend.device(dev)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """obj as a tensor, sharing memory with it when dtype and device allow and copy is not True
    (a tensor comes back itself). ``copy=False`` raises where sharing is impossible."""
    d = as_dtype(dtype)
    if isinstance(obj, Tensor):
        a = obj._data
        if (d is None or d == a.dtype) and _same_device(a, device) and not copy:
            if requires_grad and not obj.requires_grad:
                obj.requires_grad_(True)
            return obj
        if copy is False:
            raise ValueError(f"can't alias tensor with dtype '{_kind(a.dtype)}' into dtype "
                             f"'{_kind(d)}'." if d is not None and d != a.dtype else
                             "can't alias tensor into another device.")
        out = obj.detach().to(device=device, dtype=d)
        out = out.clone() if out._data is a else out
        return _finish(out._data, requires_grad)
    if _backend.is_array(obj) and not isinstance(obj, np.generic):
        if (d is None or d == obj.dtype) and _same_device(obj, device) and not copy:
            return _finish(obj, requires_grad)
        if copy is False:
            raise ValueError(f"can't alias array with dtype '{obj.dtype}' into dtype '{d}'.")
        return tensor(obj, dtype=d, device=device, requires_grad=requires_grad)
    if copy is False:
        raise ValueError("can't alias arbitrary sequence into a tensor.")
    return tensor(obj, dtype=d, device=device, requires_grad=requires_grad)


def _kind(dtype):
    return scalar_name(dtype).capitalize()


RANGE_DEPRECATED = (
    "torch.range is deprecated and will be removed in a future release because its behavior is "
    "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values "
    "in [start, end).")


def range(start=0, end=None, step=1, *, dtype=None, device=None, layout=None,
          requires_grad=False, out=None):
    """start, start + step, ... up to and including end (deprecated, as in PyTorch: use
    arange, whose end is excluded). The default float dtype unless dtype is given."""
    warnings.warn(RANGE_DEPRECATED, UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = _builtin_int(math.floor((end - start) / step)) + 1
    d = as_dtype(dtype) or DEFAULT.float
    return _finish(_backend.on_device(device, lambda xp: (
        start + xp.arange(n, dtype=np.float64) * step).astype(d)), requires_grad)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialised tensor of ``size`` laid out with ``stride`` (in elements)."""
    size, stride = tuple(_builtin_int(s) for s in size), tuple(_builtin_int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    d = as_dtype(dtype) or DEFAULT.float
    need = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))

    def make(xp):
        buf = xp.zeros(max(need, 1), dtype=d)
        return xp.lib.stride_tricks.as_strided(buf, size, [s * d.itemsize for s in stride])
    return _finish(_backend.on_device(device, make), requires_grad)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D CPU tensor over the memory of an object with the buffer protocol (bytes, bytearray,
    array.array ...), sharing it. A read-only buffer gives a read-only tensor."""
    d = as_dtype(dtype)
    length = memoryview(buffer).nbytes
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % d.itemsize:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({d.itemsize})")
        count = (length - offset) // d.itemsize
    elif count * d.itemsize > length - offset:
        raise ValueError(f"requested buffer length ({count} * {d.itemsize} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    return _finish(np.frombuffer(buffer, dtype=d, count=count, offset=offset), requires_grad)


# -- windows ------------------------------------------------------------------------------------
