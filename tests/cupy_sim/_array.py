"""The simulated ``cupy.ndarray``: a numpy array held on the "device", with CuPy's surface."""
from __future__ import annotations

import operator
import re
import weakref

import numpy as np

from . import _capture, _device, _memory, _refusals


class ndarray:
    """Device memory (really a numpy array) with CuPy's methods, operators and rules."""

    __slots__ = ("_a", "_base", "__weakref__")
    __array_priority__ = 100
    __hash__ = None

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C"):
        self._a = np.empty(shape, dtype, order=order)
        self._base = None
        _memory.allocated(self)
        if _capture.ACTIVE:
            _capture.allocated_now(self._a)

    # -- what CuPy refuses -------------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use "
                        "`.get()` to construct a NumPy array explicitly.")

    def __array_ufunc__(self, uf, method, *inputs, **kw):
        from . import module
        mine = getattr(module, uf.__name__, None)
        if mine is None or not hasattr(mine, "_np"):
            return NotImplemented
        if method == "__call__":
            return mine(*inputs, **kw)
        return getattr(mine, method)(*inputs, **kw)

    def __array_function__(self, func, types, args, kwargs):
        from . import module
        where = func.__module__ or ""
        ns = module.linalg if where.endswith("linalg") else module
        mine = getattr(ns, func.__name__, None)
        if mine is None:
            raise TypeError(f"no implementation found for '{where}.{func.__name__}' on types "
                            f"that implement __array_function__: [<class 'cupy.ndarray'>]")
        return mine(*args, **kwargs)

    # -- attributes ----------------------------------------------------------------------------
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    strides = property(lambda self: self._a.strides)
    T = property(lambda self: wrap(self._a.T))
    mT = property(lambda self: wrap(np.swapaxes(self._a, -1, -2)))
    flags = property(lambda self: _Flags(self._a))
    base = property(lambda self: self._base)
    data = property(lambda self: _memory.MemoryPointer(self._a, self._base))
    device = property(lambda self: _device.DEVICE)
    real = property(lambda self: wrap(self._a.real))
    imag = property(lambda self: wrap(self._a.imag))

    @shape.setter
    def shape(self, value):
        self._a.shape = value

    def get(self, stream=None, order="C", out=None, blocking=True):
        if _capture.ACTIVE and self.size:
            _capture.refuse_transfer("D2H transfers", stream)
        if out is not None:
            out[...] = self._a
            return out
        return np.array(self._a, order=order)

    def set(self, arr, stream=None):
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"Only numpy.ndarray can be set to cupy.ndarray, got {type(arr)}")
        if arr.shape != self.shape:
            raise ValueError(f"Shape mismatch. Old shape: {self.shape}, new shape: {arr.shape}")
        if _capture.ACTIVE:
            _capture.refuse_transfer("H2D transfers", stream)
        self._a[...] = arr

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return _device.Capsule(self)

    def __dlpack_device__(self):
        return (2, 0)

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "version": 3,
                "data": (self._a.ctypes.data, False), "strides": None}

    def toDlpack(self):
        return _device.Capsule(self)

    def scatter_add(self, slices, value):
        _scatter(self, np.add, slices, value)

    def scatter_max(self, slices, value):
        _scatter(self, np.maximum, slices, value)

    def scatter_min(self, slices, value):
        _scatter(self, np.minimum, slices, value)

    # -- Python protocols ------------------------------------------------------------------------
    def __getitem__(self, idx):
        np_idx = unwrap(idx, True)
        if _capture.ACTIVE:
            refuse_index(idx)
            return captured("getitem", _getitem, (self._a, np_idx), {})
        return wrap(_getitem(self._a, np_idx))

    def __setitem__(self, idx, value):
        np_idx, np_value = unwrap(idx, True), unwrap(value, True)
        if _capture.ACTIVE:
            refuse_index(idx, value)
            captured("setitem", _setitem, (self._a, np_idx, np_value), {}, (self._a,))
            return
        _setitem(self._a, np_idx, np_value)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self._a)))

    # each of these reads the array back with get() in CuPy (cupy/_core/core.pyx)
    def __bool__(self):
        if _capture.ACTIVE and self.size == 1:   # other sizes raise before the copy
            _capture.refuse_transfer("D2H transfers")
        return bool(self._a)

    def __int__(self):
        _read_back(self)
        return int(self._a)

    def __float__(self):
        _read_back(self)
        return float(self._a)

    def __complex__(self):
        _read_back(self)
        return complex(self._a)

    # no __index__: CuPy has none, so a device array is not a Python index or range bound

    def __repr__(self):
        _read_back(self)
        return repr(self._a)

    def __str__(self):
        _read_back(self)
        return str(self._a)

    def __format__(self, spec):
        _read_back(self)
        return format(self._a.item() if self.ndim == 0 else self._a, spec)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce__(self):
        return _rebuild, (self.get(),)


def _rebuild(a):
    return wrap(np.array(a))


def _read_back(a):
    if _capture.ACTIVE and a.size:
        _capture.refuse_transfer("D2H transfers")


# -- indexing (numpy-level: a graph replays these) -----------------------------------------------
def _getitem(a, idx):
    try:
        out = a[idx]
    except IndexError:
        out = a[_wrapped_indices(a, idx)]
    if isinstance(out, np.generic):   # CuPy gives a 0-d view where numpy copies a scalar
        parts = idx if isinstance(idx, tuple) else (idx,)
        if Ellipsis not in parts:
            out = a[parts + (Ellipsis,)]
    return out


def _setitem(a, idx, value):
    try:
        a[idx] = value
    except IndexError:
        a[_wrapped_indices(a, idx)] = value


def _scatter(a, uf, slices, value):
    idx, value_np = unwrap(slices, True), unwrap(value, True)
    if _capture.ACTIVE:
        refuse_index(slices, value)
        captured(f"scatter_{uf.__name__}", uf.at, (a._a, idx, value_np), {}, (a._a,))
        return
    uf.at(a._a, idx, value_np)


_HOST_INDEX = (list, tuple, np.ndarray, bool, np.bool_)


def refuse_index(idx, value=None):
    """During a capture: CuPy copies host indices (and values) to the device, and reads a
    boolean mask's count back to size the result (cupy/_core/_routines_indexing.pyx)."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    if any(isinstance(p, _HOST_INDEX) for p in parts) or isinstance(value, (np.ndarray, list)):
        _capture.refuse_transfer("H2D transfers")
    if any(p.__class__ is ndarray and p.dtype == bool and p.size for p in parts):
        _capture.refuse_transfer("D2H transfers")


def _wrapped_indices(a, idx):
    """CuPy wraps out-of-bounds integer-array indices around (numpy raises): the same index
    with each integer array taken modulo its axis (an index out of range otherwise still
    raises numpy's IndexError)."""
    parts = list(idx) if isinstance(idx, tuple) else [idx]
    used = sum(1 if not isinstance(p, np.ndarray) or p.dtype != bool else p.ndim
               for p in parts if p is not None and p is not Ellipsis)
    axis, out = 0, []
    for p in parts:
        if p is Ellipsis:
            axis += a.ndim - used
        elif p is None:
            pass
        elif isinstance(p, (np.ndarray, list)) and np.asarray(p).dtype.kind in "iu":
            p = np.asarray(p) % a.shape[axis] if a.shape[axis] else np.asarray(p)
            axis += 1
        elif isinstance(p, np.ndarray) and p.dtype == bool:
            axis += p.ndim
        else:
            axis += 1
        out.append(p)
    return tuple(out)


class _Flags:
    """CuPy's flags: three of numpy's."""
    __slots__ = ("c_contiguous", "f_contiguous", "owndata")

    def __init__(self, a):
        self.c_contiguous = a.flags.c_contiguous
        self.f_contiguous = a.flags.f_contiguous
        self.owndata = a.flags.owndata

    def __getitem__(self, key):
        return getattr(self, {"C_CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
                              "OWNDATA": "owndata"}[key])


ndarray.__module__ = "cupy"   # as CuPy's own (code tells the array modules apart by it)

# the device array that owns each numpy buffer, so that views keep their base alive and report
# it, as CuPy's do (gpugrad decides whether a gradient may be stolen by who holds the base)
_OWNERS: dict[int, weakref.ref] = {}   # id(numpy root) -> its device array (pruned as it grows)
_PRUNE = [1024]


def _owner(root):
    ref = _OWNERS.get(id(root))
    out = ref() if ref is not None else None
    return out if out is not None and out._a is root else None


def _register(root, out):
    _OWNERS[id(root)] = weakref.ref(out)
    if len(_OWNERS) > _PRUNE[0]:
        for k in [k for k, r in _OWNERS.items() if r() is None]:
            del _OWNERS[k]
        _PRUNE[0] = max(1024, 2 * len(_OWNERS))


def _root(x):
    while isinstance(x.base, np.ndarray):
        x = x.base
    return x


# -- moving between the two worlds -------------------------------------------------------------
def wrap(x):
    """numpy results as CuPy gives them: arrays on the device, scalars as 0-d arrays, named
    tuples as tuples."""
    if isinstance(x, np.ndarray):
        if x.dtype == object:
            raise TypeError("Unsupported dtype object")
        root = _root(x)
        if root is x:
            known = _owner(x)
            if known is not None:
                return known
        out = object.__new__(ndarray)
        out._a = x if x.flags.writeable else _writable(x)
        if root is x:
            out._base = None
            _register(x, out)
            _memory.allocated(out)
        else:
            owner = _owner(root)
            out._base = wrap(root) if owner is None else owner
        return out
    if isinstance(x, np.generic) and not isinstance(x, (np.str_, np.bytes_)):
        return wrap(np.asarray(x))
    if isinstance(x, tuple):
        return tuple(wrap(v) for v in x)
    if isinstance(x, list):
        return [wrap(v) for v in x]
    return x


def _writable(x):
    """The same memory, writable: CuPy has no read-only arrays (numpy's broadcast_to and
    diagonal views are read-only; CuPy's write through, stride 0 or not)."""
    import warnings
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x.flags.writeable = True
        return x
    except ValueError:
        pass
    root = x
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not root.flags.writeable or x.size == 0:
        return x
    offset = x.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return np.ndarray(x.shape, x.dtype, buffer=root, offset=offset, strides=x.strides)


_PLAIN = frozenset((int, float, bool, complex, str, type(None), slice, type(Ellipsis)))


def unwrap(x, host_ok=False):
    """Device arrays as the numpy arrays they hold; a numpy array is refused unless CuPy would
    copy it over (``host_ok``: indices, values assigned, ``asarray``)."""
    cls = x.__class__
    if cls is ndarray:
        return x._a
    if cls in _PLAIN:
        return x
    if isinstance(x, np.ndarray):
        if host_ok:
            return x
        raise TypeError(f"Unsupported type {type(x)}")
    if isinstance(x, tuple):
        return tuple(unwrap(v, host_ok) for v in x)
    if isinstance(x, list):
        return [unwrap(v, host_ok) for v in x]
    if isinstance(x, dict):
        return {k: unwrap(v, host_ok) for k, v in x.items()}
    return x


# -- device operations while a stream captures --------------------------------------------------
def captured(name, fn, args, kw, writes=()):
    """``fn(*args, **kw)`` (numpy arrays and scalars in, numpy out) as the device op
    ``name`` while some stream captures: recorded when this thread's current stream is one of
    them (``writes``: the memory it writes in place), run as usual otherwise."""
    seq = _capture.recording()
    if seq is None:
        return wrap(fn(*args, **kw))
    for a in writes:
        seq.protect(a)
    raw = fn(*args, **kw)
    out = wrap(raw)
    _capture.record(seq, name, fn, args, kw, raw, out, writes)
    return out


def out_argument(sig, args, kw):
    """The numpy arrays an ``out`` argument names (by keyword, or by position when CuPy's
    signature is known)."""
    out = kw.get("out")
    if out is None and sig is not None and "out" in sig.parameters:
        try:
            out = sig.bind_partial(*args, **kw).arguments.get("out")
        except TypeError:
            out = None
    return _capture.arrays_in(out)


# -- methods and operators -------------------------------------------------------------------
def check_call(sig, seen, where, args, kw):
    """Bind a call to CuPy's signature (whether it binds depends only on how many positional
    arguments and which keywords: each such shape is checked once)."""
    shape = (len(args), tuple(kw))
    if sig is None or shape in seen:
        return
    try:
        sig.bind(*args, **kw)
    except TypeError as e:
        raise TypeError(f"{where}() {e}") from None
    seen.add(shape)


_MUTATING = frozenset(("fill", "sort", "partition", "put"))   # methods that write the array


def _method(name, sig):
    seen = set()
    fn = getattr(np.ndarray, name)

    def method(self, *args, **kw):
        check_call(sig, seen, f"cupy.ndarray.{name}", (self,) + args, kw)
        if name == "take":   # out-of-bounds indices wrap around in CuPy
            kw = {**kw, "mode": "wrap"}
        np_args, np_kw = unwrap(args), unwrap(kw)
        if _capture.ACTIVE:
            _refusals.check_method(name, self._a, np_args, np_kw)
            writes = out_argument(sig, (self._a,) + np_args, np_kw)
            if name in _MUTATING or name == "byteswap" and (
                    np_args[0] if np_args else np_kw.get("inplace")):
                writes.append(self._a)
            return captured(name, fn, (self._a,) + np_args, np_kw, writes)
        return wrap(fn(self._a, *np_args, **np_kw))
    method.__name__ = name
    return method


def _doc_signature(doc):
    """A method's signature from the first line of CuPy's docstring, or None."""
    import inspect
    first = (doc or "").split("\n", 1)[0]
    if "(" not in first:
        return None
    params = first[first.index("(") + 1:first.rindex(")")]
    params = re.sub(r"\b(?:int|bint|Py_ssize_t|str|object|bool|tuple|list|dict)\s+(?=\w)", "",
                    params)   # Cython's typed parameters
    try:
        return inspect.signature(eval(f"lambda {params}: None", {"numpy": np, "None": None}))
    except Exception:
        return None


def _operator(op, reflected=False, inplace=False):
    name = op.__name__

    def fn(self, other):
        if isinstance(other, (np.ndarray, list, tuple)):
            raise TypeError(f"Unsupported type {type(other)}")
        if not isinstance(other, _OPERANDS):
            return NotImplemented   # a gpugrad Tensor, say: its reflected operator answers
        o = other._a if isinstance(other, ndarray) else other
        operands = (o, self._a) if reflected else (self._a, o)
        if _capture.ACTIVE:
            if op is operator.matmul:
                _refusals.check("matmul", operands, {})
            out = captured(name, op, operands, {}, (self._a,) if inplace else ())
            return self if inplace else out
        if inplace:
            op(self._a, o)
            return self
        return wrap(op(*operands))
    return fn


_OPERANDS = (ndarray, int, float, complex, np.generic)


def _unary(op):
    def fn(self):
        if _capture.ACTIVE:
            return captured(op.__name__, op, (self._a,), {})
        return wrap(op(self._a))
    return fn


def _install_methods(real_ndarray):
    skip = {"get", "set", "toDlpack", "scatter_add", "scatter_max", "scatter_min", "device",
            "data", "flags", "base", "shape", "dtype", "ndim", "size", "itemsize", "nbytes",
            "strides", "T", "mT", "real", "imag", "cstruct", "mdspan", "reduced_view"}
    for name in dir(real_ndarray):
        if name.startswith("_") or name in skip or not hasattr(np.ndarray, name):
            continue
        attr = getattr(real_ndarray, name)
        if callable(attr):
            setattr(ndarray, name, _method(name, _doc_signature(attr.__doc__)))
    binary = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
              "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
              "pow": operator.pow, "matmul": operator.matmul, "and": operator.and_,
              "or": operator.or_, "xor": operator.xor, "lshift": operator.lshift,
              "rshift": operator.rshift}
    inplace = {"add": operator.iadd, "sub": operator.isub, "mul": operator.imul,
               "truediv": operator.itruediv, "floordiv": operator.ifloordiv,
               "mod": operator.imod, "pow": operator.ipow, "and": operator.iand,
               "or": operator.ior, "xor": operator.ixor}
    for name, op in binary.items():
        setattr(ndarray, f"__{name}__", _operator(op))
        setattr(ndarray, f"__r{name}__", _operator(op, reflected=True))
        if name in inplace:
            setattr(ndarray, f"__i{name}__", _operator(inplace[name], inplace=True))
    for name, op in {"lt": operator.lt, "le": operator.le, "gt": operator.gt,
                     "ge": operator.ge, "eq": operator.eq, "ne": operator.ne}.items():
        setattr(ndarray, f"__{name}__", _operator(op))
    ndarray.__divmod__ = lambda self, o: (self // o, self % o)
    for name, op in {"neg": operator.neg, "pos": operator.pos, "abs": operator.abs,
                     "invert": operator.invert}.items():
        setattr(ndarray, f"__{name}__", _unary(op))
