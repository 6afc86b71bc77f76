"""The host heap. An op's temporaries are whole arrays (a GELU on a 8x64x512 activation makes
four of a megabyte each), and glibc hands blocks that large back to the kernel when they are
freed, so the next op page-faults its memory in again: on a 2-core machine that doubled the cost
of such an op. gpugrad asks glibc, once at import, to keep freed blocks below 32 MiB in the
heap and to give the heap back only above 256 MiB of free space at its top (mallopt's
M_MMAP_THRESHOLD and M_TRIM_THRESHOLD, what jemalloc or tcmalloc preloaded would do for the
whole process). Larger arrays are still mapped and returned at once (numpy asks for huge pages
for them). Nothing changes outside glibc (macOS, Windows, musl); GPUGRAD_HEAP_TUNING=0 keeps
glibc's defaults."""
from __future__ import annotations

import ctypes
import os
import sys

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3   # glibc's mallopt parameters
MMAP_THRESHOLD = 32 << 20    # glibc's own ceiling for its moving threshold
TRIM_THRESHOLD = 256 << 20

tuned = False   # whether glibc took the settings


def keep_freed_buffers() -> bool:
    """Applies the settings (once; a no-op where the C library is not glibc)."""
    global tuned
    if tuned or not sys.platform.startswith("linux") or \
            os.environ.get("GPUGRAD_HEAP_TUNING", "1") == "0":
        return tuned
    try:
        libc = ctypes.CDLL(None)
        if not hasattr(libc, "gnu_get_libc_version"):   # musl's mallopt ignores every call
            return False
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    tuned = bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
        bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return tuned
