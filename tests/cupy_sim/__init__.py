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
  ``using_allocator``), memory hooks, streams (the current one per thread) and events behave
  like CuPy's on one device;
- stream capture records CUDA graphs (``_capture``): work on a capturing stream runs at once
  only so that shapes, dtypes and errors are right, is replayed by ``Graph.launch()``, and is
  taken back when the capture ends (memory written gets its old contents, memory the capture
  fills holds NaN or 0x5A bytes until the first launch); what CuPy and CUDA refuse during a
  capture is refused with their exception and message (``_refusals``, ``_errors``).

What it cannot check: anything about the kernels themselves (launches run each kernel's numpy
reference instead), speed, numerical differences of the GPU's own math libraries, and, in a
capture, what ``docs/gpu.md`` lists (memory reuse, the strict capture modes). Passing here is
evidence, not proof; ``docs/gpu.md`` says how the two are reported.

Install with ``cupy_sim.install()`` before the first CUDA array is made (``conftest.py`` does
so when ``GPUGRAD_CUPY_SIM=1``).
"""
from __future__ import annotations

import inspect
import types

import numpy as np

from . import _capture, _device, _memory, _refusals
from ._array import captured, check_call, ndarray, out_argument, refuse_index, unwrap, wrap

__all__ = ["abandon_captures", "install", "module", "ndarray", "open_captures"]

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
        blocking = False
        if kw or self.sig is not None:
            check_call(self.sig, self.seen, f"cupy.{self.name}", args, kw)
            if "blocking" in kw:
                blocking = kw["blocking"]
                kw = {k: v for k, v in kw.items() if k not in _CUPY_ONLY_KW}
        if self.name == "take":   # out-of-bounds indices wrap around in CuPy
            kw["mode"] = "wrap"
        np_args, np_kw = unwrap(args, self.host_ok), unwrap(kw, self.host_ok)
        if _capture.ACTIVE:
            return self._captured(args, kw, np_args, np_kw, blocking)
        return wrap(self.np_fn(*np_args, **np_kw))

    def _captured(self, args, kw, np_args, np_kw, blocking):
        if self.host_ok:
            obj = args[0] if args else next(iter(kw.values()), None)
            if not _on_device(obj):
                _capture.refuse_transfer("H2D transfers")
            if blocking:            # CuPy synchronizes the stream after the copy
                _capture.synchronize(_capture.current_stream())
        _refusals.check(self.name, np_args, np_kw)
        if self.name in _refusals.HOST_ONLY:
            return wrap(self.np_fn(*np_args, **np_kw))
        if self.name in _ALLOCATIONS:   # memory only: undefined until written
            out = wrap(self.np_fn(*np_args, **np_kw))
            _capture.allocated_now(out._a)
            return out
        writes = out_argument(self.sig, np_args, np_kw)
        if self.name in _WRITES_FIRST and np_args:
            writes.append(np_args[0])
        return captured(self.name, self.np_fn, np_args, np_kw, writes)

    def __repr__(self):
        return f"<simulated cupy function {self.name}>"


_CUPY_ONLY_KW = ("blocking",)
_HOST_OK = {"array", "asarray", "asanyarray", "ascontiguousarray"}   # host-to-device copies
_ALLOCATIONS = {"empty", "empty_like"}
_WRITES_FIRST = {"copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis"}


def _on_device(obj):
    """Whether ``cupy.asarray(obj)`` finds its data on the device (a device array, or a
    sequence of them that CuPy concatenates there)."""
    if isinstance(obj, ndarray):
        return True
    return isinstance(obj, (list, tuple)) and len(obj) > 0 and all(
        _on_device(v) for v in obj)


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
        if _capture.ACTIVE:
            return captured(self.name, self._np, unwrap(_strict(args)),
                            {"casting": casting, **extra, **unwrap(kw)},
                            _capture.arrays_in(extra.get("out")))
        return wrap(self._np(*unwrap(_strict(args)), casting=casting, **extra,
                             **unwrap(kw)))

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False):
        return self._method(self._np.reduce, array, out, axis=axis, dtype=dtype,
                            keepdims=keepdims)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        return self._method(self._np.accumulate, array, out, axis=axis, dtype=dtype)

    def _method(self, fn, array, out, **kw):
        a, out = unwrap(_strict((array,)))[0], unwrap(out)
        if _capture.ACTIVE:
            return captured(f"{self.name}.{fn.__name__}", fn, (a,), {**kw, "out": out},
                            _capture.arrays_in(out))
        return wrap(fn(a, out=out, **kw))

    def at(self, a, indices, b=None):
        if not isinstance(a, ndarray):
            raise TypeError(f"Unsupported type {type(a)}")
        args = (a._a, unwrap(indices, True)) + (() if b is None else (unwrap(b, True),))
        if _capture.ACTIVE:
            refuse_index(indices, b)
            captured(f"{self.name}.at", self._np.at, args, {}, (a._a,))
            return
        self._np.at(*args)

    def outer(self, A, B, **kw):
        args, kw = unwrap(_strict((A, B))), unwrap(kw)
        if _capture.ACTIVE:
            return captured(f"{self.name}.outer", self._np.outer, args, kw,
                            _capture.arrays_in(kw.get("out")))
        return wrap(self._np.outer(*args, **kw))

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
        np_args, np_kw = unwrap(_strict(args)), unwrap(kw)
        if _capture.ACTIVE:
            return captured(name, np_fn, np_args, np_kw, _capture.arrays_in(np_kw.get("out")))
        return wrap(np_fn(*np_args, **np_kw))
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
        "cupy.cuda.graph": cp.cuda.graph, "cupy.cuda.memory": cp.cuda.memory,
        "cupy.cuda.stream": cp.cuda.stream,
        "cupyx": _special.cupyx(), "cupyx.scipy.special": _special.build(),
    }
    return cp


def _kernel_step(name, work, args, kernel_dtypes):
    """A gpugrad kernel launched while a stream may capture: one step of the graph whatever its
    reference does, as the compiled kernel is. Dtypes gpugrad has no kernel for run the
    reference through CuPy on a GPU too, op by op (``_cuda_kernels.launch``)."""
    arrays = [a for a in args if isinstance(a, ndarray)]
    seq = _capture.recording()
    if seq is None or not arrays or arrays[0].dtype not in kernel_dtypes:
        return work()
    return _capture.record_kernel(seq, name, work, arrays)


def open_captures():
    """How many stream captures are open, in every thread."""
    return _capture.ACTIVE


def abandon_captures():
    """End every open capture as if its stream were destroyed (a test that failed half-way):
    what their eager runs wrote is taken back. Their descriptions."""
    return _capture.abandon_all()


def install():
    """Make gpugrad see the simulated CuPy: its backend, kernel launches and fused regions."""
    from gpugrad import _backend, _cuda_kernels
    from gpugrad.autograd import _trace, fusion

    cp = module or _build()
    _backend._cupy, _backend._cupy_error = cp, None
    dtypes = _cuda_kernels.CTYPES     # what gpugrad's compiled kernels take

    def submodule(name):
        if name not in cp._submodules:
            raise ImportError(f"the simulated CuPy has no {name}")
        return cp._submodules[name]
    _backend.cupy_submodule = submodule

    def launch(kernel, args):   # the reference is what every kernel is checked against
        if _capture.ACTIVE:
            return _kernel_step(kernel.name, lambda: kernel.ref(cp, *args), args, dtypes)
        return kernel.ref(cp, *args)

    def launch_multi(kernel, tensors, scalars):
        for arrays in tensors:
            if _capture.ACTIVE:
                _kernel_step(kernel.name, lambda arrays=arrays: kernel.ref(cp, *arrays, *scalars),
                             arrays, dtypes)
            else:
                kernel.ref(cp, *arrays, *scalars)

    def region(plan, arrays, params, shape, dtype):
        def work():
            return _trace.evaluate(plan.nodes, plan.live, plan.outputs, arrays, params, dtype,
                                   shape, cp)
        if _capture.ACTIVE:
            return _kernel_step("backward_region", work, arrays, dtypes)
        return work()

    import sys
    sys.modules.update(cp._submodules)   # tests that import cupy themselves get this one too
    _cuda_kernels.launch = launch
    _cuda_kernels.launch_multi = launch_multi
    fusion.Plan._launch = region
    return cp
