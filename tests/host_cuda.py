"""Run CUDA sources on the host: a kernel written as grid-stride loops over plain arrays is C++
apart from its launch geometry, so compiled with a host compiler and called once per block
(one thread each), it computes what the GPU would, on numpy arrays, without a GPU. Kernels that
share memory between the threads of a block cannot run this way."""
from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np

PRELUDE = """#include <cmath>
using namespace std;
struct gg_dim3 { long long x, y; };
extern "C" { gg_dim3 gridDim = {1, 1}, blockDim = {1, 1}, blockIdx = {0, 0},
                     threadIdx = {0, 0}; }
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
#include <cstring>
inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
inline double __longlong_as_double(long long i) { double d; memcpy(&d, &i, 8); return d; }
"""


class _Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_longlong), ("y", ctypes.c_longlong)]


def compiler() -> str | None:
    return shutil.which("g++") or shutil.which("clang++")


def build(source: str, workdir: Path, cxx: str) -> ctypes.CDLL:
    """Compile ``source`` (a CUDA translation unit) into a shared library and load it."""
    n = len(list(workdir.glob("*.cpp")))
    src = workdir / f"k{n}.cpp"
    src.write_text(PRELUDE + source)
    lib = src.with_suffix(".so")
    subprocess.run([cxx, "-O1", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return ctypes.CDLL(str(lib))


def _c(a):
    if isinstance(a, np.ndarray):
        return ctypes.c_void_p(a.ctypes.data)
    if isinstance(a, np.uint64):
        return ctypes.c_void_p(int(a) or None)
    if isinstance(a, np.int64):
        return ctypes.c_longlong(int(a))
    if isinstance(a, np.int32):
        return ctypes.c_int(int(a))
    if isinstance(a, np.float32):
        return ctypes.c_float(float(a))
    return ctypes.c_double(float(a))


def call(lib: ctypes.CDLL, entry: str, args, grid_y: int = 1, grid_x: int = 1,
         block_x: int = 1) -> None:
    """Run ``entry`` as a launch of ``grid_x`` x ``grid_y`` blocks of ``block_x`` threads, one
    thread after another (only for kernels whose threads never wait for each other)."""
    fn = getattr(lib, entry)
    c_args = [_c(a) for a in args]
    block = _Dim3.in_dll(lib, "blockIdx")
    thread = _Dim3.in_dll(lib, "threadIdx")
    grid = _Dim3.in_dll(lib, "gridDim")
    grid.x, grid.y = grid_x, grid_y
    _Dim3.in_dll(lib, "blockDim").x = block_x
    for y in range(grid_y):
        block.y = y
        for x in range(grid_x):
            block.x = x
            for t in range(block_x):
                thread.x = t
                fn(*c_args)
