"""Compile every kernels/*.cu to PTX with NVRTC for each target arch; no GPU needed.

Exits non-zero, printing NVRTC's log, when a source fails to compile or lacks an entry point.
Usage: python .ci/compile_kernels.py [arch ...]   (default: sm_80 sm_90)
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpugrad import _cuda_kernels  # noqa: E402

ARCHS = ("sm_80", "sm_90")
DTYPES = ("float", "double")


def main(archs) -> int:
    try:
        version = _cuda_kernels.nvrtc_module().getVersion()
    except ImportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    sources = sorted((ROOT / "kernels").glob("*.cu"))
    if not sources:
        print(f"error: no kernels/*.cu under {ROOT}", file=sys.stderr)
        return 2
    print(f"NVRTC {version[0]}.{version[1]}: {len(sources)} kernels x {', '.join(archs)}")
    failures = 0
    for path in sources:
        text = path.read_text()
        for arch in archs:
            start = time.perf_counter()
            try:
                ptx = _cuda_kernels.compile_to_ptx(text, path.name, arch)
            except _cuda_kernels.KernelCompileError as e:
                failures += 1
                print(f"FAIL {path.name} [{arch}]\n{e}", file=sys.stderr)
                continue
            missing = [f"{path.stem}_{t}" for t in DTYPES if f".entry {path.stem}_{t}(" not in ptx]
            if missing:
                failures += 1
                print(f"FAIL {path.name} [{arch}]: no extern \"C\" entry {', '.join(missing)}",
                      file=sys.stderr)
                continue
            print(f"ok   {path.name} [{arch}] {time.perf_counter() - start:.2f}s")
    if failures:
        print(f"{failures} compile failure(s)", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ARCHS))
