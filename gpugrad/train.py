"""``gpugrad train``: train a small MLP on a built-in data set (no download) and save it.

The loop is the PyTorch one (zero_grad, forward, loss, backward, step) on the public API. With a
given seed, a CPU run gives the same numbers every time: the weights are initialised on the CPU
from ``gpugrad.manual_seed(seed)`` and the batches are shuffled by a generator seeded the same.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

from . import _backend, cuda, datasets, nn, optim
from ._creation import Generator, manual_seed, zeros
from .autograd.grad_mode import no_grad
from .serialization import save
from .utils import collect_env
from .utils.data import DataLoader, TensorDataset

OPTIMIZERS = {"sgd": 0.1, "adam": 1e-2, "adamw": 1e-2}   # name -> default learning rate


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", default="auto",
                   help="cpu, cuda, cuda:N, or auto (cuda when available) [auto]")
    p.add_argument("--data", default="spirals", choices=sorted(datasets.DATASETS),
                   help="built-in data set [spirals]")
    p.add_argument("--width", type=_bounded(MAX_WIDTH), default=64,
                   help=f"hidden layer width, at most {MAX_WIDTH} [64]")
    p.add_argument("--depth", type=_bounded(MAX_DEPTH), default=2,
                   help=f"number of hidden layers, at most {MAX_DEPTH} [2]")
    p.add_argument("--epochs", type=_positive, default=40, help="passes over the data [40]")
    p.add_argument("--batch-size", type=_positive, default=64, help="samples per step [64]")
    p.add_argument("--optimizer", default="adam", choices=sorted(OPTIMIZERS),
                   help="adam, adamw, or sgd (momentum 0.9) [adam]")
    p.add_argument("--lr", type=_learning_rate, default=None,
                   help="peak learning rate, cosine-annealed to 0 [0.01 for adam/adamw, 0.1 for "
                        "sgd]")
    p.add_argument("--seed", type=int, default=0, help="seed of initialisation and shuffling [0]")
    p.add_argument("--out", default="model.safetensors",
                   help="where to save the model state dict (gpugrad.save): a .safetensors "
                        "file, which PyTorch reads too, or any other name for gpugrad's own "
                        "format [model.safetensors]; '' to skip")
    p.add_argument("--logdir", default=None,
                   help="write TensorBoard scalars (loss, accuracy, lr) to this directory")
    p.add_argument("--no-progress", dest="progress", action="store_false",
                   help="no progress bar or per-epoch lines")
    p.add_argument("--nproc", type=_positive, default=1,
                   help="train data-parallel in this many processes (MPI; gpugrad run -n N), "
                        "the batch split between them [1]")
    p.add_argument("--no-cuda-graph", dest="cuda_graph", action="store_false",
                   help="on CUDA, run every step eagerly instead of replaying a captured one")


MAX_WIDTH, MAX_DEPTH = 16384, 64   # a toy MLP: 16384 x 16384 float32 weights are 1 GiB


def _positive(s):
    v = int(s)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {s}")
    return v


def _bounded(limit):
    def parse(s):
        v = _positive(s)
        if v > limit:
            raise argparse.ArgumentTypeError(f"expected at most {limit}, got {s}")
        return v
    return parse


def _learning_rate(s):
    v = float(s)
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"expected a finite positive number, got {s}")
    return v


def run(args) -> int:
    """Entry point of the subcommand: check what can be checked before training (one line and
    exit status 2 for each problem), train, print the summary, return the exit status: 1 when
    the loss stopped being finite (the model file is then left as it was)."""
    kwargs = {k: v for k, v in vars(args).items() if not k.startswith("_") and k != "command"}
    nproc = kwargs.pop("nproc", 1)
    if nproc > 1 and int(os.environ.get("WORLD_SIZE", "1")) == 1:
        return _launch(nproc, sys.argv[1:] if sys.argv[1:2] == ["train"] else None, kwargs)
    try:
        check_outputs(kwargs.get("out"), kwargs.get("logdir"))
        train(**kwargs)
    except (DeviceError, OutputError) as e:
        print(f"gpugrad train: {e}", file=sys.stderr)
        return 2
    except Diverged as e:
        print(f"gpugrad train: {e}", file=sys.stderr)
        return 1
    except MemoryError:
        print(f"gpugrad train: a {kwargs.get('depth')}-layer MLP of width {kwargs.get('width')} "
              "does not fit in memory here; choose a smaller --width", file=sys.stderr)
        return 2
    return 0


def _launch(nproc, argv, kwargs) -> int:
    """Start ``nproc`` processes of this command, each training one replica (``run`` then
    sees ``WORLD_SIZE`` and joins the process group)."""
    from .distributed import run as launcher
    if argv is None:   # called from Python: rebuild the command line from the arguments
        argv = ["train"]
        for k, v in kwargs.items():
            flag = "--" + k.replace("_", "-")
            if isinstance(v, bool):
                if not v:
                    argv.append({"progress": "--no-progress",
                                 "cuda_graph": "--no-cuda-graph"}[k])
            elif v is not None:
                argv += [flag, str(v)]
    kept, skip = [], False
    for a in argv:    # drop --nproc N / --nproc=N: the ranks train one replica each
        if skip or a.startswith("--nproc="):
            skip = False
            continue
        skip = a == "--nproc"
        if not skip:
            kept.append(a)
    argv = kept
    try:
        return launcher.launch(nproc, ["-m", "gpugrad", *argv])
    except RuntimeError as e:
        print(f"gpugrad train: {e}", file=sys.stderr)
        return 2


class DeviceError(RuntimeError):
    pass


class OutputError(RuntimeError):
    """--out or --logdir cannot be written."""


class Diverged(RuntimeError):
    """The training loss stopped being finite."""


def check_outputs(out, logdir) -> None:
    """Fail before training, not after it, when the model file or the log cannot be written."""
    if out:
        parent = os.path.dirname(os.path.abspath(out))
        if os.path.isdir(out):
            raise OutputError(f"--out {out} is a directory; give a file name")
        if not os.path.isdir(parent):
            raise OutputError(f"--out {out}: the directory {parent} does not exist")
        if not os.access(parent, os.W_OK):
            raise OutputError(f"--out {out}: the directory {parent} is not writable")
    if logdir:
        try:
            from .utils.tensorboard import SummaryWriter  # noqa: F401
        except ImportError as e:
            raise OutputError(f"--logdir needs TensorBoard logging, which is not available "
                              f"({e}); pip install tensorboard, or leave --logdir out") from None


def cuda_problem() -> str | None:
    """What is missing for a training run on CUDA, in one line; None when nothing is."""
    return collect_env.cuda_problem()


def cuda_available() -> bool:
    return cuda_problem() is None


def resolve_device(name: str) -> str:
    """The one device of the job: its model, its data and its loader live there.

    ``auto`` is the default device when ``GPUGRAD_DEVICE`` or ``set_default_device`` chose
    one, else CUDA when it is usable here, else the CPU. A CUDA device asked for (by
    ``--device`` or by the environment) and not usable is a ``DeviceError`` naming what is
    missing."""
    asked = f"--device {name}"
    if name == "auto":
        try:
            source = _backend.default_device_source()
            chosen = _backend.default_device()
        except (RuntimeError, ValueError) as e:
            raise DeviceError(f"GPUGRAD_DEVICE={os.environ.get('GPUGRAD_DEVICE')!r} is not a "
                              f"device ({e}); expected cpu, cuda or cuda:N") from None
        if source is None:
            return "cuda" if cuda_available() else "cpu"
        name = str(chosen)
        asked = (f"GPUGRAD_DEVICE={os.environ.get('GPUGRAD_DEVICE')}" if source == "GPUGRAD_DEVICE"
                 else f"the default device ({name}, from set_default_device)")
    if name.startswith("cuda"):
        problem = cuda_problem()
        if problem is not None:
            raise DeviceError(f"{asked} needs CUDA, which is not usable here: {problem}; or "
                              "train on the CPU with --device cpu")
        index = name.partition(":")[2]
        if index and (not index.isdigit() or int(index) >= cuda.device_count()):
            raise DeviceError(f"{asked}: no such CUDA device ({cuda.device_count()} visible)")
        return name
    if name != "cpu":
        raise DeviceError(f"unknown device '{name}' (expected cpu, cuda, cuda:N or auto)")
    return name


def build_model(width=64, depth=2, in_features=2, classes=3) -> nn.Sequential:
    """in -> [Linear(width), ReLU] * depth -> Linear(classes)."""
    layers, n = [], in_features
    for _ in range(depth):
        layers += [nn.Linear(n, width), nn.ReLU()]
        n = width
    return nn.Sequential(*layers, nn.Linear(n, classes))


def accuracy(model, x, y) -> float:
    with no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def train(device="auto", data="spirals", width=64, depth=2, epochs=40, batch_size=64,
          optimizer="adam", lr=None, seed=0, out="model.safetensors", logdir=None, progress=True,
          cuda_graph=True, file=None) -> dict:
    """Train and evaluate; print a summary to ``file`` (stdout) and return the figures.

    On CUDA (unless ``cuda_graph=False``) each epoch captures the training step once as a CUDA
    graph and replays it for every full batch (``CapturedStep``): the same steps over the same
    batches as the eager loop, without Python or per-kernel launches per step."""
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        device = "cpu" if device == "auto" else device   # the mpi backend's processes
    device = resolve_device(device)
    with _backend.default_device_as(device):   # whatever the job creates lives there too
        return _train(device, data, width, depth, epochs, batch_size, optimizer, lr, seed, out,
                      logdir, progress, cuda_graph, file or sys.stdout)


def _train(device, data, width, depth, epochs, batch_size, optimizer, lr, seed, out, logdir,
           progress, cuda_graph, file) -> dict:
    lr = OPTIMIZERS[optimizer] if lr is None else lr
    split = datasets.load(data)
    classes = int(split.y_train.max().item()) + 1
    x_train, y_train = split.x_train.to(device), split.y_train.to(device)
    x_test, y_test = split.x_test.to(device), split.y_test.to(device)

    manual_seed(seed)
    with _backend.default_device_as("cpu"):   # the same initial weights on every device
        model = build_model(width, depth, x_train.shape[1], classes)
    model = model.to(device)
    params = model.parameters()
    world = _join_job()
    graphed = cuda_graph and device.startswith("cuda") and world is None
    opt = (optim.SGD(params, lr=lr, momentum=0.9) if optimizer == "sgd"
           else optim.Adam(params, lr=lr, capturable=graphed) if optimizer == "adam"
           else optim.AdamW(params, lr=lr, capturable=graphed))
    sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    if world is None:
        loader = DataLoader(TensorDataset(x_train, y_train), batch_size=batch_size,
                            shuffle=True, generator=Generator().manual_seed(seed))
        replica = model
    else:   # each rank a share of every epoch and of every batch; gradients averaged
        from .distributed import ReduceOp, all_reduce, get_rank
        from .nn.parallel import DistributedDataParallel
        from .utils.data.distributed import DistributedSampler
        train_set = TensorDataset(x_train, y_train)
        sampler = DistributedSampler(train_set, seed=seed)
        loader = DataLoader(train_set, batch_size=max(1, batch_size // world), sampler=sampler)
        replica = DistributedDataParallel(model)
        if get_rank() != 0:
            file, progress, out, logdir = open(os.devnull, "w"), False, "", None
    loss_fn = nn.CrossEntropyLoss()
    writer = _writer(logdir, file)
    if world is not None:
        print(f"gpugrad train: data-parallel over {world} processes (mpi), batch "
              f"{batch_size // world} per process", file=file)
    if writer is not None:  # the model's forward graph and, beside it, its autograd graph
        writer.add_graph(model, x_train[:batch_size], backward=True)
    n_params = sum(p.numel() for p in model.parameters())
    sizes = "-".join(map(str, [x_train.shape[1]] + [width] * depth + [classes]))
    print(f"gpugrad train: {data} ({len(y_train)} train / {len(y_test)} test) on {device} | MLP "
          f"{sizes} ({n_params:,} parameters) | {optimizer} lr {lr:g} | {epochs} epochs of "
          f"{len(loader)} steps, batch {batch_size}"
          f"{' | CUDA graph replay' if graphed else ''}", file=file)
    captured = CapturedStep(model, opt, loss_fn, x_train, y_train, batch_size) if graphed \
        else None

    bar = _progress(epochs * len(loader), progress, file)
    steps, elapsed, loss_value = 0, 0.0, float("nan")
    report_every = max(1, epochs // 10)
    for epoch in range(epochs):
        model.train()
        t0 = time.perf_counter()
        total = 0.0
        if world is not None:
            sampler.set_epoch(epoch)
        if captured is not None:
            total = captured.epoch(loader._epoch_order(), bar)   # the loader's order
        else:
            for xb, yb in loader:
                opt.zero_grad()
                loss = loss_fn(replica(xb), yb)
                loss.backward()
                opt.step()
                total = total + loss.detach()   # stays on the device: no sync per step
                if bar is not None:
                    bar.update(1)
        if world is not None:   # every rank sees the same mean loss (and stops alike)
            total = total.detach().reshape(1).clone() if hasattr(total, "detach") \
                else zeros(1) + total
            all_reduce(total, op=ReduceOp.AVG)
            total = total[0]
        loss_value = total.item() / len(loader)   # syncs once per epoch
        if not math.isfinite(loss_value):
            if bar is not None:
                bar.close()
            if writer is not None:
                writer.close()
            kept = f"; {out} is left as it was" if out else ""
            raise Diverged(f"the training loss is {loss_value} after epoch {epoch + 1}: stopped "
                           f"without saving the model{kept}. Try a smaller --lr (now {lr:g}).")
        dt = time.perf_counter() - t0
        elapsed += dt
        steps += len(loader)
        speed = len(y_train) / dt
        sched.step()
        if bar is not None:
            bar.set_postfix(loss=f"{loss_value:.4f}", samples_s=f"{speed:,.0f}", refresh=False)
        elif progress and ((epoch + 1) % report_every == 0 or epoch == 0):
            print(f"epoch {epoch + 1:>4}/{epochs}  loss {loss_value:.4f}  {speed:,.0f} samples/s",
                  file=file)
        if writer is not None:
            model.eval()
            writer.add_scalar("loss/train", loss_value, epoch + 1)
            writer.add_scalar("accuracy/test", accuracy(model, x_test, y_test), epoch + 1)
            writer.add_scalar("lr", opt.param_groups[0]["lr"], epoch + 1)
    if bar is not None:
        bar.close()

    model.eval()
    result = {"device": device, "train_accuracy": accuracy(model, x_train, y_train),
              "test_accuracy": accuracy(model, x_test, y_test), "loss": loss_value,
              "steps": steps, "seconds": elapsed, "steps_per_s": steps / elapsed,
              "samples_per_s": epochs * len(y_train) / elapsed, "model": model, "out": out or None}
    if writer is not None:
        writer.add_scalar("accuracy/train", result["train_accuracy"], epochs)
        writer.close()
    print(f"train accuracy {result['train_accuracy']:.2%}   test accuracy "
          f"{result['test_accuracy']:.2%}   final loss {loss_value:.4f}", file=file)
    print(f"{steps} steps in {elapsed:.2f} s: {result['steps_per_s']:,.0f} steps/s, "
          f"{result['samples_per_s']:,.0f} samples/s", file=file)
    if out:
        save(model.state_dict(), out)
        print(f"saved the model state dict to {out} (reload: gpugrad.train.build_model({width}, "
              f"{depth}).load_state_dict(gpugrad.load({out!r})))", file=file)
    return result


class CapturedStep:
    """The training step as a CUDA graph: gather the batch from the training set by a static
    index tensor, zero the gradients in place, forward, loss, backward, optimizer step, and add
    the loss to the epoch's sum, all on the device. Each epoch captures it anew (the learning
    rate of the step is a number baked into the capture) and replays it per full batch; a last,
    shorter batch runs the same step eagerly. The first epoch's first ``WARMUP`` batches run
    eagerly on a side stream, as PyTorch's recipe warms up, so every kernel is compiled and
    every buffer (gradients, optimizer state) exists before the first capture."""
    WARMUP = 3

    def __init__(self, model, opt, loss_fn, x, y, batch_size):
        self.model, self.opt, self.loss_fn, self.x, self.y = model, opt, loss_fn, x, y
        self.batch_size = batch_size
        self.index = zeros(batch_size, dtype=y.dtype, device=x.device)
        self.total = zeros((), device=x.device)
        self.warm, self.stream = 0, cuda.Stream()

    def step(self, index):
        xb, yb = self.x[index], self.y[index]
        self.opt.zero_grad(set_to_none=False)
        loss = self.loss_fn(self.model(xb), yb)
        loss.backward()
        self.opt.step()
        self.total.add_(loss.detach())

    def epoch(self, order, bar=None):
        """Run one epoch over the samples in ``order``; returns the sum of its batch losses
        (on the device)."""
        bs, n = self.batch_size, len(order)
        starts = list(range(0, n, bs))
        self.total.zero_()
        self.stream.wait_stream(cuda.current_stream())
        with cuda.stream(self.stream):
            g = None
            for start in starts:
                idx = order[start:start + bs]
                if len(idx) < bs or self.warm < self.WARMUP:
                    self.step(idx)
                    self.warm += len(idx) == bs
                else:
                    if g is None:
                        g = cuda.CUDAGraph()
                        with cuda.graph(g, stream=self.stream):
                            self.step(self.index)
                    self.index.copy_(idx)
                    g.replay()
                if bar is not None:
                    bar.update(1)
        cuda.current_stream().wait_stream(self.stream)
        return self.total


def _join_job():
    """The number of processes when this one is a rank of a data-parallel job (``gpugrad run``,
    ``gpugrad train --nproc``, torchrun's environment), after joining the process group; None
    when it trains alone."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world == 1:
        return None
    from . import distributed
    if not distributed.is_initialized():
        distributed.init_process_group("mpi")
    return distributed.get_world_size()


def _writer(logdir, file):
    if not logdir:
        return None
    try:
        from .utils.tensorboard import SummaryWriter
    except ImportError as e:
        print(f"note: --logdir ignored, TensorBoard logging is not available ({e})", file=file)
        return None
    return SummaryWriter(logdir)


def _progress(total, enabled, file):
    """A tqdm bar when tqdm is installed and progress is on; None otherwise."""
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="step", desc="train", file=sys.stderr, dynamic_ncols=True,
                mininterval=0.25)
