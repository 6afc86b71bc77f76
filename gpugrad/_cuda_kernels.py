"""CuPy side of :mod:`gpugrad.kernels`: compile ``kernels/<source>`` with NVRTC, bind, launch.

Every ``.cu`` exports one ``extern "C"`` entry per dtype, ``<name>_float`` and ``<name>_double``.
Arguments are bound to the entry's parameters *by name*, so the ``.cu`` signature is the one
description of a kernel's calling convention:

- a parameter named like an argument of the numpy reference receives that argument: a pointer
  gets the array (cast to the pointee type, broadcast, made contiguous), a scalar the value
  converted to the parameter's C type. ``const`` pointers are inputs; a non-const pointer the
  reference names is updated in place;
- a pointer the reference does not name is an output, allocated like the first array argument;
- ``n`` is the element count of the first array argument, ``cols`` its last dimension;
- ``<arg>_stride`` is 0 when ``<arg>`` holds one value (read by every element, no broadcast copy)
  and 1 when it holds one value per element (per row when the entry takes ``cols``);
- in an entry that takes ``cols`` (a row-wise kernel over ``(rows, cols)``), an output named
  ``<name>_row`` holds one value per row, and an input or output named ``<name>_col`` one per
  column.
"""
from __future__ import annotations

import ctypes
import functools
import inspect
import re
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from . import _backend

COMPILE_SECONDS: dict[str, float] = {}   # kernel name -> seconds its first compile took
THREADS = 256
BLOCKS_PER_SM = 32
NVRTC_OPTIONS = ("--std=c++17",)

_PACKAGE_DIR = Path(__file__).resolve().parent
# A wheel carries the sources inside the package (pyproject force-includes kernels/ as
# gpugrad/kernels_src); a source checkout has them at the repository root.
KERNEL_DIRS = (_PACKAGE_DIR / "kernels_src", _PACKAGE_DIR.parent / "kernels")

CTYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
_C_DTYPES = {"float": np.float32, "double": np.float64, "int": np.int32, "long long": np.int64}


class KernelCompileError(RuntimeError):
    """NVRTC rejected a kernel source; the message carries NVRTC's log."""


class Param(NamedTuple):
    name: str
    ctype: str        # pointee type for pointers: "float", "double", "long long", "int"
    pointer: bool
    const: bool


# -- sources ---------------------------------------------------------------------------------
def kernel_path(source: str) -> Path:
    for d in KERNEL_DIRS:
        path = d / source
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"kernel source {source!r} not found in " + " or ".join(str(d) for d in KERNEL_DIRS))


@functools.lru_cache(maxsize=None)
def read_source(source: str) -> str:
    return kernel_path(source).read_text()


_ENTRY = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(\w+)\s*\(([^)]*)\)')
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def parse_entries(text: str) -> dict[str, tuple[Param, ...]]:
    """The ``extern "C" __global__`` entries of a source and their parameters."""
    entries = {}
    for name, params in _ENTRY.findall(_COMMENT.sub("", text)):
        entries[name] = tuple(_parse_param(p) for p in params.split(",") if p.strip())
    return entries


def _parse_param(decl: str) -> Param:
    words = decl.replace("__restrict__", " ").replace("*", " * ").split()
    pointer, const = "*" in words, "const" in words
    words = [w for w in words if w not in ("*", "const")]
    return Param(words[-1], " ".join(words[:-1]), pointer, const)


@functools.lru_cache(maxsize=None)
def entries_of(source: str) -> dict[str, tuple[Param, ...]]:
    return parse_entries(read_source(source))


# -- NVRTC -------------------------------------------------------------------------------------
def nvrtc_module():
    """CuPy's NVRTC binding. Needs no GPU or driver: only CuPy and a libnvrtc, e.g. from the
    ``nvidia-cuda-nvrtc-cu12`` wheel (CuPy >= 14 finds it itself; older CuPy after a preload)."""
    cp = _backend.cupy_module()
    if cp is None:
        raise ImportError(f"compiling CUDA kernels needs CuPy ({_backend._cupy_error})")
    nvrtc = cp.cuda.nvrtc
    try:
        nvrtc.getVersion()
    except Exception as e:
        if not _preload_nvrtc_wheel():
            raise ImportError(
                f"CuPy cannot load NVRTC ({type(e).__name__}: {e}); "
                "install it with: pip install nvidia-cuda-nvrtc-cu12") from e
        nvrtc.getVersion()
    return nvrtc


def _preload_nvrtc_wheel() -> bool:
    """Load the NVRTC wheel's libnvrtc.so.N globally, so that CuPy < 14, which looks the library up
    by soname on the system path only, finds it already loaded."""
    try:
        import nvidia  # namespace package of NVIDIA's CUDA wheels
    except ImportError:
        return False
    for root in nvidia.__path__:
        for lib in sorted(Path(root, "cuda_nvrtc", "lib").glob("libnvrtc.so.*")):
            ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
            return True
    return False


def compile_to_ptx(source_text: str, name: str, arch: str = "sm_80") -> str:
    """Compile a CUDA C++ translation unit to PTX for ``arch`` with NVRTC alone (no GPU needed).

    Raises :class:`KernelCompileError` with NVRTC's log when the source does not compile.
    """
    nvrtc = nvrtc_module()
    prog = nvrtc.createProgram(source_text, name, [], [])
    try:
        try:
            nvrtc.compileProgram(prog, [f"-arch={arch}", *NVRTC_OPTIONS])
        except nvrtc.NVRTCError as e:
            log = nvrtc.getProgramLog(prog)
            raise KernelCompileError(
                f"NVRTC failed to compile {name} for {arch} ({e}):\n{log}") from None
        ptx = nvrtc.getPTX(prog)
    finally:
        nvrtc.destroyProgram(prog)
    return ptx.decode() if isinstance(ptx, bytes) else ptx


# -- launch ------------------------------------------------------------------------------------
_modules: dict = {}   # (kernel name, device id) -> cupy.RawModule
_functions: dict = {}  # (kernel name, entry, device id) -> cupy.RawFunction
_sm_counts: dict = {}  # device id -> multiprocessor count


def _function(kernel, entry: str, device_id: int):
    key = (kernel.name, entry, device_id)
    fn = _functions.get(key)
    if fn is None:
        cp = _backend.cupy_module()
        mod = _modules.get((kernel.name, device_id))
        start = time.perf_counter()
        if mod is None:
            # One module per device holds every dtype's entry; CuPy caches the binary on disk.
            mod = _modules[(kernel.name, device_id)] = cp.RawModule(
                code=read_source(kernel.source), options=NVRTC_OPTIONS)
        fn = _functions[key] = mod.get_function(entry)   # compiles on first use
        COMPILE_SECONDS.setdefault(kernel.name, time.perf_counter() - start)
    return fn


def _grid(n: int, device_id: int) -> int:
    sms = _sm_counts.get(device_id)
    if sms is None:
        cp = _backend.cupy_module()
        sms = _sm_counts[device_id] = cp.cuda.Device(device_id).attributes["MultiProcessorCount"]
    # Enough blocks to fill the GPU; the grid-stride loops cover the rest.
    return max(1, min(-(-n // THREADS), BLOCKS_PER_SM * sms))


@functools.lru_cache(maxsize=None)
def _ref_names(ref) -> tuple[str, ...]:
    # drop xp, and out: where the CPU writes a block of the output, never a kernel argument
    return tuple(n for n in inspect.signature(ref).parameters if n != "out")[1:]


# How each parameter of an entry is filled: (kind, name, argument index, dtype, layout).
_SCALAR, _INPUT, _INPLACE, _OUTPUT, _N, _COLS, _STRIDE = range(7)
_FULL, _STRIDED, _ROW, _COL = range(4)   # layouts: like the first array, per row, per column


@functools.lru_cache(maxsize=None)
def _plan(kernel, entry: str) -> tuple[tuple, bool]:
    """The binding of ``entry``'s parameters, worked out once per kernel and entry."""
    params = entries_of(kernel.source).get(entry)
    if params is None:
        raise RuntimeError(f"{kernel.name}: {kernel.source} has no entry {entry}")
    names = _ref_names(kernel.ref)
    pnames = {p.name for p in params}
    rowwise = "cols" in pnames
    slots = []
    for p in params:
        dtype = np.dtype(_C_DTYPES[p.ctype]) if p.ctype in _C_DTYPES else None
        layout = (_STRIDED if p.name + "_stride" in pnames
                  else _ROW if rowwise and (p.name.endswith("_row") or dtype.kind != "f")
                  else _COL if rowwise and p.name.endswith("_col") else _FULL) if dtype else None
        if p.name in names:
            kind = _SCALAR if not p.pointer else _INPUT if p.const else _INPLACE
            slots.append((kind, p.name, names.index(p.name), dtype, layout))
        elif p.pointer:
            slots.append((_OUTPUT, p.name, -1, dtype, layout))
        elif p.name in ("n", "cols"):
            slots.append((_N if p.name == "n" else _COLS, p.name, -1, None, None))
        elif p.name.endswith("_stride") and p.name[:-7] in names:
            slots.append((_STRIDE, p.name, -1, None, None))
        else:
            raise RuntimeError(f"{kernel.name}: cannot bind parameter {p.name!r} of {entry}")
    return tuple(slots), rowwise


def bind(kernel, args, xp):
    """Map a reference call ``kernel.ref(xp, *args)`` onto the kernel entry's parameters.

    Returns ``(entry, kernel_args, n, outputs, writeback)``: ``writeback`` lists
    ``(array, contiguous_copy)`` pairs for in-place arguments the kernel could not update
    directly. ``xp`` is the array module (numpy works too, which lets tests check the binding
    without a GPU). Arrays that already have the entry's dtype, shape and layout pass as they
    are: this runs once per launch, so the common case makes no array-module calls.
    """
    first = args[0] if args else None
    fast = _fast.get((kernel, first.__class__, getattr(first, "dtype", None)))
    if fast is not None:
        bound = fast(args)
        if bound is not None:
            return bound
    elif first is not None and first.__class__ is xp.ndarray:
        _fast[(kernel, first.__class__, first.dtype)] = _fast_binder(kernel, first.dtype, xp)
    return _bind(kernel, args, xp)


def _bind(kernel, args, xp):
    special = _BINDERS.get(kernel.name)
    if special is not None:
        return special(kernel, args, xp)
    names = _ref_names(kernel.ref)
    if len(args) != len(names):
        raise TypeError(f"{kernel.name}() takes {len(names)} arguments "
                        f"({', '.join(names)}), got {len(args)}")
    ndarray = xp.ndarray
    first = next((a for a in args if isinstance(a, ndarray)), None)
    if first is None:
        raise TypeError(f"{kernel.name}: expected at least one array argument")
    ctype = CTYPES.get(first.dtype)
    if ctype is None:
        raise TypeError(f"{kernel.name}: CUDA kernel supports float32 and float64, "
                        f"got {first.dtype}")
    entry = f"{kernel.name}_{ctype}"
    slots, rowwise = _plan(kernel, entry)
    shape = first.shape
    row_shape = shape[:-1] if rowwise else shape

    values, outputs, writeback = {}, [], []
    for kind, name, i, dtype, layout in slots:
        if kind == _INPUT or kind == _INPLACE:
            a = args[i]
            if a is None:
                values[name] = np.uint64(0)   # null: the entry documents when it is unused
                continue
        if kind == _INPUT:
            want = (shape if layout == _FULL else shape[-1:] if layout == _COL
                    else row_shape)
            if (a.__class__ is ndarray and a.dtype == dtype and a.shape == want
                    and a.flags.c_contiguous):
                values[name] = a
                if layout == _STRIDED:
                    values[name + "_stride"] = np.int64(a.size != 1)
                continue
            values[name], stride = _prepare(xp, kernel, name, a, dtype, want, layout)
            if layout == _STRIDED:
                values[name + "_stride"] = np.int64(stride)
        elif kind == _SCALAR:
            a = args[i]
            if a is None:   # np.float64(None) would be a silent nan
                raise TypeError(f"{kernel.name}: {name} must be a number, got None")
            values[name] = dtype.type(a)
        elif kind == _INPLACE:
            if a.shape != shape:
                raise ValueError(f"{kernel.name}: {name} has shape {a.shape}, expected {shape}")
            if a.dtype == dtype and a.flags.c_contiguous:
                values[name] = a
            else:   # the kernel updates a contiguous copy, written back after the launch
                values[name] = copy = xp.ascontiguousarray(a, dtype=dtype)
                writeback.append((a, copy))
        elif kind == _OUTPUT:
            if layout == _COL:   # a sum over the rows: zero when there are none
                out = (xp.zeros if first.size == 0 else xp.empty)(shape[-1:], dtype)
            else:
                out = xp.empty(row_shape if layout == _ROW else shape, dtype)
            values[name] = out
            outputs.append(out)
    values["n"] = np.int64(first.size)
    values["cols"] = np.int64(shape[-1] if shape else 1)
    kernel_args = tuple(values[name] for _, name, _, _, _ in slots)
    return entry, kernel_args, first.size, outputs, writeback


# -- the fast binding: generated once per kernel and dtype ----------------------------------------
_fast: dict = {}   # (kernel, array type, dtype) -> fast binder (or a binder that always declines)


def _declines(args):
    return None


def _fast_binder(kernel, dtype, xp):
    """``bind`` for the common call, written out once per kernel and dtype: the first argument
    is the first array, and every array already has the entry's dtype, shape and C layout (the
    caller made it so), so nothing is copied, broadcast or written back. The generated function
    checks exactly that and returns None otherwise, and ``bind``'s general path serves the call.
    It builds no dict and formats no string: per launch it costs a few attribute reads per
    argument where the general path costs ~10 us of Python."""
    ctype = CTYPES.get(np.dtype(dtype))
    if ctype is None or kernel.name in _BINDERS:
        return _declines
    entry = f"{kernel.name}_{ctype}"
    try:
        slots, rowwise = _plan(kernel, entry)
    except RuntimeError:
        return _declines
    names = _ref_names(kernel.ref)
    nargs = len(names)
    lines = ["def fast(args):", f"    if len(args) != {nargs}:", "        return None",
             f"    {', '.join(f'a{i}' for i in range(nargs))}, = args",
             "    shape = a0.shape", "    size = a0.size"]
    w = lines.append
    if rowwise:
        w("    rows = shape[:-1]")
        w("    cols_shape = shape[-1:]")
    w("    if a0.dtype != dt or not a0.flags.c_contiguous:")
    w("        return None")
    values, outputs = [], []
    for kind, name, i, slot_dtype, layout in slots:
        want = ("shape" if layout in (_FULL, _STRIDED) else "cols_shape" if layout == _COL
                else "rows")
        if kind in (_INPUT, _INPLACE):
            if slot_dtype != np.dtype(dtype) and kind == _INPLACE:
                return _declines
            w(f"    if a{i} is None:   # null: the entry documents when it is unused")
            w(f"        v_{name} = _null")
            if layout == _STRIDED:
                w(f"        s_{name} = _zero")
            w("    else:")
            if layout == _STRIDED:   # all values, or one read by every element (stride 0)
                w(f"        if (a{i}.__class__ is not Array or a{i}.dtype != _dt_{name} or "
                  f"not a{i}.flags.c_contiguous):")
                w("            return None")
                w(f"        if a{i}.size == 1:")
                w(f"            s_{name} = _zero")
                w(f"        elif a{i}.shape == shape:")
                w(f"            s_{name} = _one")
                w("        else:")
                w("            return None")
            else:
                w(f"        if (a{i}.__class__ is not Array or a{i}.dtype != _dt_{name} or "
                  f"a{i}.shape != {want} or not a{i}.flags.c_contiguous):")
                w("            return None")
            w(f"        v_{name} = a{i}")
            values.append(f"v_{name}")
        elif kind == _SCALAR:
            w(f"    if a{i} is None:")
            w("        return None")
            w(f"    v_{name} = _t_{name}(a{i})")
            values.append(f"v_{name}")
        elif kind == _OUTPUT:
            alloc = ("(xp.zeros if size == 0 else xp.empty)(cols_shape, _dt_{0})"
                     if layout == _COL else "xp.empty({1}, _dt_{0})").format(
                         name, "rows" if layout == _ROW else "shape")
            w(f"    v_{name} = {alloc}")
            values.append(f"v_{name}")
            outputs.append(f"v_{name}")
        elif kind == _N:
            values.append("_i64(size)")
        elif kind == _COLS:
            values.append("_i64(shape[-1] if shape else 1)")
        elif kind == _STRIDE:
            values.append(f"s_{name[:-7]}")
    w(f"    return {entry!r}, ({', '.join(values)},), size, [{', '.join(outputs)}], []")
    namespace = {"dt": np.dtype(dtype), "Array": xp.ndarray, "xp": xp, "_null": np.uint64(0),
                 "_one": np.int64(1), "_zero": np.int64(0), "_i64": np.int64}
    for _kind, name, _, slot_dtype, _ in slots:
        if slot_dtype is not None:
            namespace[f"_dt_{name}"] = slot_dtype
            namespace[f"_t_{name}"] = slot_dtype.type
    exec(compile("\n".join(lines), f"<bind {entry}>", "exec"), namespace)
    return namespace["fast"]


def _prepare(xp, kernel, name, a, dtype, want, layout):
    """(contiguous array of ``dtype`` and shape ``want`` for input ``name``, its stride) when
    ``a`` does not already fit: a scalar or a broadcast of one value is passed once, stride 0."""
    a = xp.asarray(a)
    if layout == _STRIDED:
        if a.size == 1 or (a.size and not any(a.strides)):   # one value, perhaps expanded
            return xp.ascontiguousarray(a[(0,) * a.ndim].reshape(1), dtype=dtype), 0
        return xp.ascontiguousarray(xp.broadcast_to(a, want), dtype=dtype), 1
    if dtype.kind != "f" or layout == _COL:   # targets, per-column vectors: their own shape
        if a.shape != want:
            raise ValueError(f"{kernel.name}: {name} has shape {a.shape}, expected {want}")
        return xp.ascontiguousarray(a, dtype=dtype), 1
    return xp.ascontiguousarray(xp.broadcast_to(a, want), dtype=dtype), 1


def bind_gemm(kernel, args, xp):
    """``gemm(a, b)``'s binding: the shapes and element strides of both matrices, an (m, n)
    output; the launch covers its m * n elements."""
    a, b = args
    ctype = CTYPES.get(a.dtype)
    if ctype is None or b.dtype != a.dtype or a.ndim != 2 or b.ndim != 2:
        raise TypeError(f"gemm: expected two float32 or float64 matrices of one dtype, got "
                        f"{a.dtype} {a.shape} and {b.dtype} {b.shape}")
    (m, k), n = a.shape, b.shape[1]
    if b.shape[0] != k:
        raise ValueError(f"gemm: shapes {a.shape} and {b.shape} cannot be multiplied")
    out = (xp.zeros if k == 0 else xp.empty)((m, n), a.dtype)
    size = a.itemsize
    strides = [np.int64(s // size) for s in (*a.strides, *b.strides)]
    kernel_args = (a, b, out, np.int64(m), np.int64(n), np.int64(k), *strides)
    return f"gemm_{ctype}", kernel_args, m * n if k else 0, [out], []


# The recurrent cells: the state argument whose (rows, hidden) sizes the step, and each output's
# shape from them; one thread per (row, hidden unit) does every gate of that unit.
_CELLS = {
    "lstm_cell": ("c", {"h_new": (1, 1), "c_new": (1, 1), "act": (5, 1)}),
    "lstm_cell_bwd": ("c", {"d": (1, 4), "dc": (1, 1)}),
    "gru_cell": ("h", {"h_new": (1, 1), "act": (4, 1)}),
    "gru_cell_bwd": ("h", {"d_gi": (1, 3), "d_gh": (1, 3), "dh": (1, 1)}),
}


@functools.lru_cache(maxsize=None)
def _cell_plan(kernel, entry: str) -> tuple:
    """Per parameter of a cell entry: ("in", argument index), ("rows"/"hidden", -1) or
    ("out", (k, m)), worked out once per kernel and entry."""
    names = _ref_names(kernel.ref)
    shapes = _CELLS[kernel.name][1]
    return tuple(("in", names.index(p.name)) if p.name in names
                 else (p.name, -1) if p.name in ("rows", "hidden")
                 else ("out", shapes[p.name]) for p in entries_of(kernel.source)[entry])


def bind_cell(kernel, args, xp):
    """A recurrent cell's binding: inputs made contiguous in the state's dtype (None: a null
    pointer, which the entry reads as zeros or no bias), outputs allocated as ``_CELLS`` says
    ((k, m): k blocks of (rows, m hidden), ``act`` as (k, rows, hidden)); ``rows`` and
    ``hidden`` from the state; the launch covers rows * hidden."""
    x = args[_ref_names(kernel.ref).index(_CELLS[kernel.name][0])]
    ctype = CTYPES.get(x.dtype)
    if ctype is None:
        raise TypeError(f"{kernel.name}: CUDA kernel supports float32 and float64, "
                        f"got {x.dtype}")
    rows, hidden = x.shape
    entry = f"{kernel.name}_{ctype}"
    values, outputs = [], []
    for kind, at in _cell_plan(kernel, entry):
        if kind == "in":
            a = args[at]
            values.append(np.uint64(0) if a is None else
                          a if a.dtype == x.dtype and a.flags.c_contiguous else
                          xp.ascontiguousarray(a, dtype=x.dtype))
        elif kind == "out":
            k, m = at
            out = xp.empty((k, rows, hidden) if k > 1 else (rows, m * hidden), x.dtype)
            values.append(out)
            outputs.append(out)
        else:
            values.append(np.int64(rows if kind == "rows" else hidden))
    return entry, tuple(values), rows * hidden, outputs, []


_BINDERS = {"gemm": bind_gemm,   # kernels whose output is not shaped like an input
            **{name: bind_cell for name in _CELLS}}


# -- multi-tensor launches ----------------------------------------------------------------------
SLOTS = 8   # tensors per launch of a ``<name>_multi_<ctype>`` entry
_SLOT = re.compile(r"(\w+?)_(\d+)")


@functools.lru_cache(maxsize=None)
def _multi_plan(kernel, entry: str) -> tuple:
    """Per parameter of a multi entry: ("slot", array position, k), ("n", -1, k) or
    ("scalar", position among the scalars, dtype)."""
    params = entries_of(kernel.source).get(entry)
    if params is None:
        raise RuntimeError(f"{kernel.name}: {kernel.source} has no entry {entry}")
    names = _ref_names(kernel.ref)
    arrays = [p.name for p in entries_of(kernel.source)[f"{kernel.name}_float"] if p.pointer]
    scalars = [n for n in names if n not in arrays]
    plan = []
    for p in params:
        m = _SLOT.fullmatch(p.name)
        if m and m.group(1) == "n":
            plan.append(("n", -1, int(m.group(2))))
        elif m and m.group(1) in arrays:
            plan.append(("slot", arrays.index(m.group(1)), int(m.group(2))))
        elif p.name in scalars:
            plan.append(("scalar", scalars.index(p.name), np.dtype(_C_DTYPES[p.ctype])))
        else:
            raise RuntimeError(f"{kernel.name}: cannot bind parameter {p.name!r} of {entry}")
    return tuple(plan)


def multi_arguments(kernel, group, scalars, ctype):
    """The arguments of one launch of ``kernel``'s multi entry over ``group`` (at most SLOTS
    tuples of arrays, in the reference's order), unused slots null."""
    args = []
    for kind, i, k in _multi_plan(kernel, f"{kernel.name}_multi_{ctype}"):
        if kind == "scalar":
            args.append(k.type(scalars[i]))
        elif k >= len(group):
            args.append(np.int64(0) if kind == "n" else np.uint64(0))
        elif kind == "n":
            args.append(np.int64(group[k][0].size))
        else:
            a = group[k][i]
            args.append(np.uint64(0) if a is None else a)
    return args


def launch_multi(kernel, tensors, scalars) -> None:
    """Run an in-place update ``kernel`` on each tuple of CuPy arrays in ``tensors`` (the
    reference's array arguments), SLOTS tuples per launch. Tuples whose arrays are not all
    contiguous, of the first's dtype and shape, run one launch each."""
    cp = _backend.cupy_module()
    first = tensors[0][0]
    ctype = CTYPES.get(first.dtype)
    fits, rest = [], []
    for arrays in tensors:
        ok = ctype is not None and all(
            a is None or (a.__class__ is cp.ndarray and a.dtype == first.dtype
                          and a.shape == arrays[0].shape and a.flags.c_contiguous
                          and a.device == first.device) for a in arrays)
        (fits if ok else rest).append(arrays)
    for arrays in rest:
        kernel(*arrays, *scalars)   # its reference on numpy, its own launch on CuPy
    if not fits:
        return
    device = first.device
    with device:
        fn = _function(kernel, f"{kernel.name}_multi_{ctype}", device.id)
        for i in range(0, len(fits), SLOTS):
            group = fits[i:i + SLOTS]
            largest = max(arrays[0].size for arrays in group)
            if largest:
                fn((_grid(largest, device.id), len(group)), (THREADS,),
                   tuple(multi_arguments(kernel, group, scalars, ctype)))


def launch(kernel, args):
    """Run ``kernel`` on CuPy arrays; returns what ``kernel.ref`` returns (None when in place)."""
    cp = _backend.cupy_module()
    first = next(a for a in args if isinstance(a, cp.ndarray))
    if first.dtype not in CTYPES:   # float16 and the like: the reference, run by CuPy
        return kernel.ref(cp, *args)
    device = first.device
    with device:
        entry, kernel_args, n, outputs, writeback = bind(kernel, args, cp)
        fn = _function(kernel, entry, device.id)
        if n:
            fn((_grid(n, device.id),), (THREADS,), kernel_args)
        for a, copy in writeback:
            a[...] = copy
    if kernel.outputs == 0:
        return None
    return outputs[0] if kernel.outputs == 1 else tuple(outputs)
