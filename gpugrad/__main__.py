"""The ``gpugrad`` command (also ``python -m gpugrad``).

Each subcommand is one function below, registered with ``@command``: it receives the argparse
sub-parsers, adds its own parser and sets ``_run`` (``args -> exit status``). Its module is
imported only there, so adding a command is adding one function.
"""
from __future__ import annotations

import argparse
import sys

COMMANDS = {}   # name -> function(subparsers) adding the command's parser


def command(name):
    def register(fn):
        COMMANDS[name] = fn
        return fn
    return register


@command("train")
def _train(sub):
    from . import train
    p = sub.add_parser("train", help="train a small MLP on a built-in data set",
                       description="Train a small MLP on a built-in data set (no download), "
                                   "report its accuracy and save it.")
    train.add_arguments(p)
    p.set_defaults(_run=train.run)


@command("run")
def _run(sub):
    from .distributed import run
    p = sub.add_parser("run", help="run a script in N processes, data-parallel (MPI)",
                       description="Start N processes of a script under MPI's launcher with "
                                   "torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK ...); "
                                   "a rank that fails ends the job and is named.")
    run.add_arguments(p)
    p.set_defaults(_run=run.run)


@command("env")
def _env(sub):
    from .utils import collect_env
    p = sub.add_parser("env", help="report the Python, numpy, CuPy and CUDA set-up gpugrad sees",
                       description="Report versions, numpy's BLAS, the CUDA driver and runtime, "
                                   "the devices and which CUDA libraries CuPy can load. Exit "
                                   "status 1 when CUDA is not usable (the last line says why).")
    p.set_defaults(_run=lambda args: collect_env.main())


@command("bench")
def _bench(sub):
    # its options are parsed by gpugrad.bench itself (main() hands the rest of argv over)
    sub.add_parser("bench", add_help=False,
                   help="time gpugrad against PyTorch and a numpy/CuPy floor, on CPU and GPU")


def main(argv=None) -> int:
    from . import __version__
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["bench"]:
        from . import bench
        return bench.main(argv[1:]) or 0
    parser = argparse.ArgumentParser(prog="gpugrad", description="gpugrad command line tools")
    parser.add_argument("--version", action="version", version=f"gpugrad {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for register in COMMANDS.values():
        register(sub)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    return args._run(args) or 0


if __name__ == "__main__":
    sys.exit(main())
