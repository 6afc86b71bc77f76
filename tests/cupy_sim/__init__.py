"""A stand-in for CuPy on machines without a GPU: numpy does the arithmetic, CuPy's rules apply.

The CUDA halves of the suite exist to catch what differs between numpy and CuPy, and a machine
without a GPU skips them. This package runs them anyway, against a module that answers to CuPy's
API as installed (its names, its signatures, read from the real ``cupy`` package, which imports
without a GPU) and enforces the rules that code written against numpy breaks most often:

- a numpy array where CuPy wants a device array raises ``TypeError`` (``cupy + numpy``, a
  numpy array passed to a CuPy function), and so does implicit conversion back
  (``numpy.asarray(device_array)``): host data must move with ``asarray`` / ``.get()``;
- reductions and single-element indexing give 0-d device arrays, never numpy scalars;
- a name CuPy lacks, or a keyword its function does not take, fails as it would on a GPU;
- results that numpy returns as named tuples (``slogdet``, ``eigh``, ``svd``) are plain tuples;
- ``cupy.random.default_rng`` has CuPy's few methods, not numpy's many;
- memory pools (each counting its own bytes, booked through ``set_allocator`` /
  ``using_allocator``), memory hooks, streams and events behave like CuPy's on one device.

What it cannot check: anything about the kernels themselves (launches run each kernel's numpy
reference instead), speed, and numerical differences of the GPU's own math libraries. Passing
here is evidence, not proof; ``docs/gpu.md`` says how the two are reported.

Install with ``cupy_sim.install()`` before the first CUDA array is made (``conftest.py`` does
so when ``GPUGRAD_CUPY_SIM=1``).
"""
from __future__ import annotations

import inspect
import types

import numpy as np

from . import _device, _memory
from ._array import check_call, ndarray, unwrap, wrap

__all__ = ["install", "module", "ndarray"]

_real = None       # the installed cupy package: names and signatures come from it
module = None      # the simulated ``cupy`` module, once built


def _signature(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


class _Function:
    """A CuPy function run by numpy: CuPy's signature is checked, numpy's function called."""

    __slots__ = ("name", "np_fn", "sig", "host_ok", "seen", "__wrapped__")

    def __init__(self, name, np_fn, sig, host_ok=False):
        self.name, self.np_fn, self.sig, self.host_ok = name, np_fn, sig, host_ok
        self.seen = set()

    def __call__(self, *args, **kw):
        if kw or self.sig is not None:
            check_call(self.sig, self.seen, f"cupy.{self.name}", args, kw)
            if "blocking" in kw:
                kw = {k: v for k, v in kw.items() if k not in _CUPY_ONLY_KW}
        if self.name == "take":   # out-of-bounds indices wrap around in CuPy
            kw["mode"] = "wrap"
        return wrap(self.np_fn(*unwrap(args, self.host_ok), **unwrap(kw, self.host_ok)))

    def __repr__(self):
        return f"<simulated cupy function {self.name}>"


_CUPY_ONLY_KW = ("blocking",)
_HOST_OK = {"array", "asarray", "asanyarray", "ascontiguousarray"}   # host-to-device copies


class ufunc:
    """A CuPy ufunc: inputs must be device arrays or scalars (not numpy arrays or lists)."""

    def __init__(self, name, np_ufunc, real):
        self.__name__ = self.name = name
        self._np = np_ufunc
        self.nin, self.nout, self.nargs = real.nin, real.nout, real.nargs
        self.types = real.types

    def __call__(self, *args, out=None, dtype=None, casting="same_kind", **kw):
        unknown = set(kw) - {"where"}
        if unknown:
            raise TypeError(f"Wrong arguments {kw}")
        if len(args) > self.nin:
            if out is not None:
                raise ValueError("Cannot specify 'out' as both a positional and keyword argument")
            args, out = args[:self.nin], args[self.nin:]
            out = out[0] if len(out) == 1 else out
        extra = {} if dtype is None else {"dtype": dtype}
        if out is not None:
            extra["out"] = unwrap(out)
        return wrap(self._np(*unwrap(_strict(args)), casting=casting, **extra,
                             **unwrap(kw)))

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False):
        return wrap(self._np.reduce(unwrap(_strict((array,)))[0], axis=axis, dtype=dtype,
                                    out=unwrap(out), keepdims=keepdims))

    def accumulate(self, array, axis=0, dtype=None, out=None):
        return wrap(self._np.accumulate(unwrap(_strict((array,)))[0], axis=axis, dtype=dtype,
                                        out=unwrap(out)))

    def at(self, a, indices, b=None):
        if not isinstance(a, ndarray):
            raise TypeError(f"Unsupported type {type(a)}")
        idx = unwrap(indices, True)
        if b is None:
            self._np.at(a._a, idx)
        else:
            self._np.at(a._a, idx, unwrap(b, True))

    def outer(self, A, B, **kw):
        return wrap(self._np.outer(*unwrap(_strict((A, B))), **unwrap(kw)))

    def __repr__(self):
        return f"<ufunc 'cupy_{self.name}'>"


def _strict(args):
    """A ufunc's inputs as CuPy takes them: device arrays and scalars, nothing host-side."""
    for a in args:
        if isinstance(a, (np.ndarray, list, tuple)):
            raise TypeError(f"Unsupported type {type(a)}")
    return args


def _strict_function(name, np_fn):
    def call(*args, **kw):
        return wrap(np_fn(*unwrap(_strict(args)), **unwrap(kw)))
    call.__name__ = name
    return call


def _quiet_linalg(fn):
    """CuPy's solvers do not raise on a singular (or not positive-definite) input unless
    ``cupyx.errstate(linalg='raise')`` is on: the result is garbage, here NaN."""
    def call(a, *rest, **kw):
        try:
            return fn(a, *rest, **kw)
        except np.linalg.LinAlgError:
            shape = fn(module.broadcast_to(module.eye(a.shape[-1], dtype=a.dtype), a.shape),
                       *rest, **kw).shape
            return module.full(shape, np.nan, dtype=np.result_type(a.dtype, np.float32))
    call.__name__ = fn.name
    return call


def _build_namespace(target, real, np_ns, prefix):
    """Fill ``target`` with the simulated counterpart of every public name of ``real``."""
    for name in dir(real):
        if name.startswith("_") and name not in ("__version__",):
            continue
        obj = getattr(real, name)
        if isinstance(obj, types.ModuleType):
            continue
        twin = getattr(np_ns, name, None)
        if type(obj).__name__ == "ufunc" and type(obj).__module__.startswith("cupy"):
            if isinstance(twin, np.ufunc):
                setattr(target, name, ufunc(name, twin, obj))
            elif callable(twin):      # a ufunc in CuPy, a function in numpy (i0, sinc)
                setattr(target, name, _strict_function(name, twin))
            continue
        if inspect.isfunction(obj) or inspect.isbuiltin(obj) or (
                callable(obj) and not isinstance(obj, type)):
            if twin is not None and callable(twin):
                setattr(target, name, _Function(prefix + name, twin, _signature(obj),
                                                name in _HOST_OK))
            continue
        if isinstance(obj, type):
            if twin is not None:
                setattr(target, name, twin)   # dtypes, finfo, iinfo, errstate-like classes
            continue
        setattr(target, name, obj if twin is None else twin)   # constants (pi, inf, newaxis)


def _build():
    global _real, module
    import cupy as real
    import cupy.lib.stride_tricks
    import cupy.linalg
    _real = real

    from . import _random, _special
    from ._array import _install_methods
    _install_methods(real.ndarray)
    cp = types.ModuleType("cupy")
    cp.__doc__ = "A simulated CuPy (numpy underneath); see tests/cupy_sim."
    _build_namespace(cp, real, np, "")
    cp.__version__ = real.__version__
    cp._environment = real._environment   # where CuPy looks for NVRTC (compiling needs no GPU)
    cp.ndarray = ndarray
    cp.asnumpy = lambda a, stream=None, order="C", out=None, blocking=True: (
        a.get() if isinstance(a, ndarray) else np.asarray(a))
    cp.get_array_module = lambda *args: cp if any(isinstance(a, ndarray) for a in args) else np
    cp.from_dlpack = _device.from_dlpack
    cp.fromDlpack = _device.from_dlpack
    cp.get_default_memory_pool = lambda: _memory.POOL
    cp.get_default_pinned_memory_pool = lambda: _memory.PINNED_POOL

    def _no_kernels(*args, **kw):
        raise NotImplementedError("the simulated CuPy runs no CUDA code: kernels are launched "
                                  "as their numpy references (see tests/cupy_sim)")
    for name in ("RawModule", "RawKernel", "ElementwiseKernel", "ReductionKernel", "fuse"):
        setattr(cp, name, _no_kernels)

    linalg = types.ModuleType("cupy.linalg")
    _build_namespace(linalg, real.linalg, np.linalg, "linalg.")
    linalg.LinAlgError = np.linalg.LinAlgError
    for name in ("inv", "cholesky", "solve"):
        setattr(linalg, name, _quiet_linalg(getattr(linalg, name)))
    cp.linalg = linalg

    lib = types.ModuleType("cupy.lib")
    lib.stride_tricks = types.ModuleType("cupy.lib.stride_tricks")
    lib.stride_tricks.as_strided = _device.as_strided
    lib.stride_tricks.sliding_window_view = _Function(
        "lib.stride_tricks.sliding_window_view", np.lib.stride_tricks.sliding_window_view,
        _signature(real.lib.stride_tricks.sliding_window_view))
    cp.lib = lib

    cp.random = _random.build(real.random)
    cp.cuda = _device.build_cuda(real.cuda)
    module = cp
    cp._submodules = {
        "cupy": cp, "cupy.linalg": linalg, "cupy.random": cp.random, "cupy.cuda": cp.cuda,
        "cupy.cuda.memory_hook": cp.cuda.memory_hook, "cupy.lib.stride_tricks": lib.stride_tricks,
        "cupy.cuda.memory": cp.cuda.memory,
        "cupyx": _special.cupyx(), "cupyx.scipy.special": _special.build(),
    }
    return cp


def install():
    """Make gpugrad see the simulated CuPy: its backend, kernel launches and fused regions."""
    from gpugrad import _backend, _cuda_kernels
    from gpugrad.autograd import _trace, fusion

    cp = module or _build()
    _backend._cupy, _backend._cupy_error = cp, None

    def submodule(name):
        if name not in cp._submodules:
            raise ImportError(f"the simulated CuPy has no {name}")
        return cp._submodules[name]
    _backend.cupy_submodule = submodule

    def launch(kernel, args):   # the reference is what every kernel is checked against
        return kernel.ref(cp, *args)

    def launch_multi(kernel, tensors, scalars):
        for arrays in tensors:
            kernel.ref(cp, *arrays, *scalars)

    def region(plan, arrays, params, shape, dtype):
        return _trace.evaluate(plan.nodes, plan.live, plan.outputs, arrays, params, dtype,
                               shape, cp)

    import sys
    sys.modules.update(cp._submodules)   # tests that import cupy themselves get this one too
    _cuda_kernels.launch = launch
    _cuda_kernels.launch_multi = launch_multi
    fusion.Plan._launch = region
    return cp
