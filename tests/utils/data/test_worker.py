"""DataLoader with num_workers > 0: real worker processes, PyTorch's order, seeding, worker info,
persistent workers, IterableDataset replicas, errors, dead workers, timeouts and shutdown
(compared with torch.utils.data where that is cheap).

Every test waits under ``deadline``: a regression that hangs fails the test instead of the run.
The datasets are module-level classes, so they also reach workers started by spawn."""
from __future__ import annotations

import contextlib
import functools
import gc
import multiprocessing
import os
import random
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import gpugrad
from gpugrad.utils.data import (
    DataLoader,
    Dataset,
    IterableDataset,
    Subset,
    get_worker_info,
)
from gpugrad.utils.data._utils import pin_memory as pinning
from tests.utils.data._datasets import Range, base_seed, gen, labels, pairs

pytestmark = pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs POSIX timers")


@contextlib.contextmanager
def deadline(seconds):
    """Fail (never hang) when the block takes longer than ``seconds``."""
    def expire(signum, frame):
        raise TimeoutError(f"still waiting after {seconds} s")
    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


_OTHERS: set = set()


def children():
    """The worker processes the running test started and that still run (``active_children``
    also reaps the ones that ended)."""
    return [p for p in multiprocessing.active_children() if p not in _OTHERS]


@pytest.fixture(autouse=True)
def _no_workers_left():
    """Every test ends with no worker process of its own left behind."""
    _OTHERS.update(multiprocessing.active_children())   # started by other tests, if any
    yield
    with deadline(10):
        assert children() == []


class Pids(Dataset):
    """Sample i is ``(i, pid of the process that loaded it)``."""

    def __init__(self, n=8):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i, os.getpid()


class Info(Dataset):
    """Sample i is what ``get_worker_info()`` says where it was loaded."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = get_worker_info()
        return (info.id, info.num_workers, info.seed, info.dataset is self) if info else None


class Draws(Dataset):
    """Sample i is ``(worker id, gpugrad draw, random draw, numpy draw)``."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return (get_worker_info().id, gpugrad.rand(1).item(), random.random(),
                np.random.rand())


def record_init(path, worker_id):
    """A worker_init_fn: one line ``"<worker_id> <pid> <seeded>"`` per call, ``seeded`` 1 when
    the worker info and gpugrad's seed are already those of this worker."""
    info = get_worker_info()
    seeded = info.id == worker_id and gpugrad.initial_seed() == info.seed
    with open(path, "a") as f:
        f.write(f"{worker_id} {os.getpid()} {int(seeded)}\n")


def init_calls(path):
    return sorted(tuple(map(int, line.split())) for line in path.read_text().split("\n") if line)


class Raising(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 1:
            raise ValueError(f"sample {i} is bad")
        return i


class KillsItsWorker(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        return i


class Slow(Dataset):
    def __init__(self, seconds, which=None):
        self.seconds, self.which = seconds, which

    def __len__(self):
        return 4

    def __getitem__(self, i):
        if self.which is None or i == self.which:
            time.sleep(self.seconds)
        return i


class FirstWaits(Dataset):
    """Sample 0 is loaded only after sample 1 (which another worker loads) and a pause."""

    def __init__(self, flag):
        self.flag = flag

    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 1:
            self.flag.touch()
        if i == 0:
            give_up = time.monotonic() + 10
            while not self.flag.exists() and time.monotonic() < give_up:
                time.sleep(0.01)
            time.sleep(0.3)
        return i


class Logged(Dataset):
    """Appends each index it loads to a file (the main process counts the loads)."""

    def __init__(self, path, n=20):
        self.path, self.n = path, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        with open(self.path, "a") as f:
            f.write(f"{i}\n")
        return i


class Shards(IterableDataset):
    """0 .. n-1, each worker reading every ``num_workers``-th element from its id on."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))


class Replicated(IterableDataset):
    """0 .. n-1 in every worker: without sharding each worker yields all of it."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))


class NonLeaf(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return gpugrad.ones(2, requires_grad=True) * 2


def plain(batch):
    """A batch as nested lists of numbers, to compare batches whatever their container."""
    if isinstance(batch, gpugrad.Tensor):
        return batch.tolist()
    return [plain(b) for b in batch] if isinstance(batch, (list, tuple)) else batch


def _unpicklable_batch(batch):
    return lambda: batch


# -- workers are processes, and give the main process's batches -----------------------------------
def test_workers_are_other_processes():
    with deadline(20):
        batches = list(DataLoader(Pids(8), batch_size=2, num_workers=2))
    pids = {p for _, pid in batches for p in pid.tolist()}
    assert os.getpid() not in pids and len(pids) == 2
    assert [i.tolist() for i, _ in batches] == [[0, 1], [2, 3], [4, 5], [6, 7]]


def test_batches_come_in_the_sampler_order_of_num_workers_0():
    def load(workers, ds, kw):
        with deadline(20):
            return [plain(b) for b in DataLoader(ds, num_workers=workers, **kw)]

    cases = [   # each made twice: a generator is used up by the first load
        lambda: (pairs(11), dict(batch_size=3, shuffle=True, generator=gen(1))),   # fast at 0
        lambda: (pairs(11), dict(batch_size=3, shuffle=True, generator=gen(1), drop_last=True)),
        lambda: (Range(9), dict(batch_size=2, shuffle=True, generator=gen(2))),
        lambda: (Range(9), dict(batch_size=None, shuffle=True, generator=gen(3))),
        lambda: (Range(9), dict(batch_sampler=[[8, 1], [4], [0, 2, 2]])),
        lambda: (Subset(Range(9), [5, 3, 7]), dict(batch_size=2)),                 # __getitems__
    ]
    for case in cases:
        assert load(2, *case()) == load(0, *case())
    shuffled_pids = load(2, Pids(9), dict(batch_size=2, shuffle=True, generator=gen(4)))
    assert [i for i, _ in shuffled_pids] == [i for i, _ in load(
        0, Pids(9), dict(batch_size=2, shuffle=True, generator=gen(4)))]
    assert os.getpid() not in {p for _, pids in shuffled_pids for p in pids}   # from workers


def test_prefetch_factor_defaults_and_get_worker_info_in_the_main_process():
    assert DataLoader(pairs(), num_workers=2).prefetch_factor == 2
    assert DataLoader(pairs(), num_workers=2, prefetch_factor=3).prefetch_factor == 3
    assert get_worker_info() is None


def test_the_main_process_keeps_prefetch_factor_batches_per_worker_in_flight(tmp_path):
    log = tmp_path / "loads"

    def loaded():
        return len(log.read_text().split()) if log.exists() else 0

    with deadline(20):
        it = iter(DataLoader(Logged(log), num_workers=2, prefetch_factor=2))
        assert next(it).tolist() == [0]
        while loaded() < 5:                # 2 * 2 in flight, plus the one handed out
            time.sleep(0.05)
        time.sleep(0.5)                    # room for the workers to run further, if they could
        assert loaded() == 5
        del it


def test_out_of_order_batches_are_yielded_as_they_arrive(tmp_path):
    with deadline(20):
        ordered = [b.item() for b in DataLoader(FirstWaits(tmp_path / "a"), num_workers=2)]
        arrived = [b.item() for b in DataLoader(FirstWaits(tmp_path / "b"), num_workers=2,
                                                in_order=False)]
    assert ordered == [0, 1, 2, 3]
    assert sorted(arrived) == [0, 1, 2, 3] and arrived[0] == 1   # sample 0 waits for sample 1


def test_spawned_workers_give_the_same_batches():
    # one worker: a spawned process imports gpugrad afresh, which is the slow part
    with deadline(60):
        batches = list(DataLoader(Pids(6), batch_size=3, num_workers=1,
                                  multiprocessing_context="spawn"))
    assert [i.tolist() for i, _ in batches] == [[0, 1, 2], [3, 4, 5]]
    assert os.getpid() not in {p for _, pid in batches for p in pid.tolist()}


def test_multiprocessing_context_errors_are_pytorchs():
    torch = pytest.importorskip("torch")
    for kwargs in (dict(num_workers=2, multiprocessing_context="nope"),
                   dict(num_workers=2, multiprocessing_context=3),
                   dict(num_workers=0, multiprocessing_context="spawn")):
        with pytest.raises((ValueError, TypeError)) as theirs:
            torch.utils.data.DataLoader(range(3), **kwargs)
        with pytest.raises(theirs.type, match=f"^{re.escape(str(theirs.value))}$"):
            DataLoader(range(3), **kwargs)
    ctx = multiprocessing.get_context("spawn")
    assert DataLoader(range(3), num_workers=1, multiprocessing_context=ctx) \
        .multiprocessing_context is ctx


# -- worker info, seeds, worker_init_fn, persistent workers ---------------------------------------
def test_get_worker_info_in_a_worker():
    with deadline(20):
        samples = list(DataLoader(Info(), batch_size=None, num_workers=2, generator=gen(5)))
    base = base_seed(gen(5))
    assert samples == [[0, 2, base, True], [1, 2, base + 1, True]] * 2   # converted to lists
    assert list(DataLoader(Info(), batch_size=None)) == [None] * 4


def test_workers_are_seeded_as_pytorch_seeds_them():
    pytest.importorskip("torch")
    from torch.utils.data._utils.worker import _generate_state
    with deadline(20):
        first = list(DataLoader(Draws(), batch_size=None, num_workers=2, generator=gen(9)))
        again = list(DataLoader(Draws(), batch_size=None, num_workers=2, generator=gen(9)))
        other = list(DataLoader(Draws(), batch_size=None, num_workers=2, generator=gen(10)))
    assert first == again and first != other
    assert first[0][1:] != first[1][1:]                          # each worker its own streams
    base = base_seed(gen(9))
    for worker, ours, py, npy in first[:2]:
        seed = base + worker
        assert ours == gpugrad.rand(1, generator=gpugrad.Generator().manual_seed(seed)).item()
        assert py == random.Random(seed).random()
        assert npy == np.random.RandomState(_generate_state(base, worker)).rand()


def test_worker_init_fn_runs_once_per_worker_after_seeding(tmp_path):
    log = tmp_path / "init"
    with deadline(20):
        batches = list(DataLoader(Pids(8), batch_size=2, num_workers=2,
                                  worker_init_fn=functools.partial(record_init, log)))
    pids = sorted({p for _, pid in batches for p in pid.tolist()})
    calls = init_calls(log)
    assert [w for w, _, _ in calls] == [0, 1] and sorted(p for _, p, _ in calls) == pids
    assert all(seeded for _, _, seeded in calls)


def test_persistent_workers_serve_every_epoch(tmp_path):
    log = tmp_path / "init"
    loader = DataLoader(Pids(8), batch_size=2, num_workers=2, persistent_workers=True,
                        worker_init_fn=functools.partial(record_init, log))
    with deadline(30):
        epochs = [list(loader) for _ in range(3)]
        assert len(children()) == 2                              # alive between epochs
        half = iter(loader)
        next(half)                                               # an epoch left half read
        assert [i.tolist() for i, _ in loader] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    pids = [sorted({p for _, pid in e for p in pid.tolist()}) for e in epochs]
    assert pids[0] == pids[1] == pids[2] and len(pids[0]) == 2
    assert [w for w, _, _ in init_calls(log)] == [0, 1]          # once per worker in all
    with deadline(20):
        del loader, half
        assert children() == []


# -- IterableDataset ------------------------------------------------------------------------------
def test_iterable_dataset_sharded_by_worker_info_gives_each_element_once():
    with deadline(20):
        batches = [b.tolist() for b in DataLoader(Shards(10), batch_size=2, num_workers=2)]
    assert sorted(sum(batches, [])) == list(range(10))
    assert batches == [[0, 2], [1, 3], [4, 6], [5, 7], [8], [9]]   # worker 0, 1, 0, 1, ...


def test_iterable_dataset_is_replicated_in_each_worker_as_in_pytorch():
    torch = pytest.importorskip("torch")

    class TorchReplicated(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(5))

    with deadline(30):
        ours = [b.tolist() for b in DataLoader(Replicated(5), batch_size=2, num_workers=2)]
        theirs = [b.tolist() for b in torch.utils.data.DataLoader(
            TorchReplicated(), batch_size=2, num_workers=2)]
        dropped = [b.tolist() for b in DataLoader(Replicated(5), batch_size=2, num_workers=2,
                                                  drop_last=True)]
        single = list(DataLoader(Replicated(2), batch_size=None, num_workers=2))
    assert ours == theirs == [[0, 1], [0, 1], [2, 3], [2, 3], [4], [4]]
    assert dropped == [[0, 1], [0, 1], [2, 3], [2, 3]] and single == [0, 0, 1, 1]


# -- errors ---------------------------------------------------------------------------------------
def test_an_error_in_a_worker_is_raised_in_the_main_process_as_pytorchs():
    torch = pytest.importorskip("torch")
    with deadline(30):
        it = iter(DataLoader(Raising(), num_workers=2))
        assert next(it).tolist() == [0]
        with pytest.raises(ValueError) as ours:
            next(it)
        rest = [b.item() for b in it]          # the iterator goes on, as PyTorch's does
        del it
        theirs_it = iter(torch.utils.data.DataLoader(Raising(), num_workers=2))
        next(theirs_it)
        with pytest.raises(ValueError) as theirs:
            next(theirs_it)
        theirs_rest = [b.item() for b in theirs_it]
    message = str(ours.value)
    assert message.startswith("Caught ValueError in DataLoader worker process 1.\n"
                              "Original Traceback (most recent call last):\n")
    assert message.split("\n")[0] == str(theirs.value).split("\n")[0]
    assert 'raise ValueError(f"sample {i} is bad")' in message
    assert message.endswith("ValueError: sample 1 is bad\n")
    assert rest == theirs_rest == [2, 3, 4, 5]


def test_a_failing_worker_init_fn_is_raised_with_the_worker_id():
    with deadline(20), pytest.raises(ZeroDivisionError,
                                     match="^Caught ZeroDivisionError in DataLoader worker "
                                           "process 0.\nOriginal Traceback"):
        list(DataLoader(Range(4), num_workers=1, worker_init_fn=lambda w: 1 / w))


def test_a_key_error_keeps_a_readable_message():
    class Missing(Range):
        def __getitem__(self, i):
            return {}["missing key"]

    with deadline(20), pytest.raises(KeyError) as e:
        list(DataLoader(Missing(2), num_workers=1))
    assert "\nOriginal Traceback" in str(e.value) and "'missing key'" in str(e.value)


def test_an_error_class_the_main_process_cannot_load_comes_back_as_a_runtime_error():
    class LocalError(Exception):   # cannot be pickled: it is not reachable by name
        pass

    class Failing(Range):
        def __getitem__(self, i):
            raise LocalError("no sample")

    with deadline(20), pytest.raises(RuntimeError, match="^Caught LocalError in DataLoader "
                                                         "worker process 0.\n(.|\n)*no sample"):
        list(DataLoader(Failing(2), num_workers=1))


def test_batches_that_cannot_leave_a_worker_raise_instead_of_hanging():
    with deadline(20), pytest.raises(RuntimeError, match="Cowardly refusing to serialize "
                                                         "non-leaf tensor which requires_grad"):
        list(DataLoader(NonLeaf(), num_workers=1))
    # multiprocessing's queue would drop an unpicklable batch in its feeder thread and the
    # main process would wait for it forever; the worker pickles it itself and says why
    with deadline(20), pytest.raises(AttributeError, match="^Caught AttributeError in "
                                                           "DataLoader worker process 0.\n"
                                                           "(.|\n)*Can't pickle local object"):
        list(DataLoader(Range(2), num_workers=1, collate_fn=_unpicklable_batch))


def test_a_killed_worker_ends_the_iteration_with_pytorchs_error():
    torch = pytest.importorskip("torch")
    start = time.monotonic()
    with deadline(20), pytest.raises(RuntimeError) as ours:
        list(DataLoader(KillsItsWorker(), num_workers=2))
    assert time.monotonic() - start < 5
    pid = re.match(r"^DataLoader worker \(pid\(s\) (\d+)\) exited unexpectedly$",
                   str(ours.value)).group(1)
    assert str(ours.value.__cause__) == (f"DataLoader worker (pid {pid}) is killed by signal: "
                                         f"Killed.")
    with deadline(30):
        try:
            list(torch.utils.data.DataLoader(KillsItsWorker(), num_workers=2))
        except RuntimeError as e:   # not kept: its traceback holds PyTorch's other worker
            theirs = str(e)
        gc.collect()
    # PyTorch's SIGCHLD handler raises the cause's message itself when it fires outside the
    # wait that turns it into the first one
    assert re.match(r"^DataLoader worker \(pid\(s\) \d+\) exited unexpectedly$|"
                    r"^DataLoader worker \(pid \d+\) is killed by signal: Killed\. $", theirs)


def test_timeout_bounds_the_wait_for_a_batch():
    start = time.monotonic()
    with deadline(20), pytest.raises(RuntimeError, match=r"^DataLoader timed out after 0\.5 "
                                                         r"seconds$"):
        list(DataLoader(Slow(1.0), num_workers=1, timeout=0.5))
    assert time.monotonic() - start < 3        # 0.5 s, then the sleeping worker stops
    with deadline(20):   # without workers timeout does nothing, as in PyTorch
        assert [b.item() for b in DataLoader(Slow(0.05), timeout=0.01)] == [0, 1, 2, 3]


# -- shutdown -------------------------------------------------------------------------------------
def test_no_worker_is_left_after_an_epoch_or_an_abandoned_iterator():
    with deadline(20):
        assert len(list(DataLoader(Pids(4), num_workers=2))) == 4
        assert children() == []
        it = iter(DataLoader(Pids(40), num_workers=2))
        next(it)
        assert len(children()) == 2
        del it
        assert children() == []
        for _ in DataLoader(Pids(40), num_workers=2):
            break
        assert children() == []


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads process states from /proc")
def test_workers_exit_when_the_main_process_dies(tmp_path):
    script = tmp_path / "main.py"
    script.write_text(
        "import multiprocessing, time\n"
        "import numpy as np\n"
        "from gpugrad.utils.data import DataLoader\n"
        "it = iter(DataLoader([np.zeros(100_000)] * 16, num_workers=2))\n"
        "next(it)\n"
        "time.sleep(0.5)   # the workers' next batches fill the pipe nobody will read\n"
        "print(*[p.pid for p in multiprocessing.active_children()], flush=True)\n"
        "time.sleep(60)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    main = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, env=env,
                            text=True)
    pids = []
    try:
        with deadline(30):
            pids = [int(p) for p in main.stdout.readline().split()]
            assert len(pids) == 2
            main.kill()                      # no chance to stop its workers itself
            main.wait()
            while any(_running(pid) for pid in pids):
                time.sleep(0.1)
    finally:                                 # a failure leaves no orphan behind
        main.kill()
        main.wait()
        main.stdout.close()
        for pid in pids:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)


def _running(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"    # a zombie has exited
    except FileNotFoundError:
        return False


# -- pin_memory -----------------------------------------------------------------------------------
def test_pin_memory_without_an_accelerator_warns_as_pytorch_and_keeps_the_values():
    torch = pytest.importorskip("torch")
    if gpugrad.cuda.is_available() or torch.accelerator.is_available():
        pytest.skip("checks the case without an accelerator")
    with pytest.warns(UserWarning) as theirs:
        list(torch.utils.data.DataLoader(range(2), pin_memory=True))
    for workers in (0, 2):
        with deadline(20), pytest.warns(UserWarning) as ours:
            batches = labels(DataLoader(pairs(4), batch_size=2, num_workers=workers,
                                        pin_memory=True))
        assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
        assert batches == [[0, 1], [2, 3]]


class Pinnable:
    """Stands for a tensor where pinning cannot run (no CUDA): ``pin_memory`` marks a copy."""

    def __init__(self, v, pinned=False):
        self.v, self.pinned = v, pinned

    def pin_memory(self):
        return Pinnable(self.v, pinned=True)


def _pinnables(batch):
    return [Pinnable(v) for v in batch]


def test_pin_memory_pins_every_tensor_of_a_batch_and_keeps_its_structure(monkeypatch):
    batch = {"a": [Pinnable(1), ("s", Pinnable(2))], "b": b"raw"}
    out = pinning.pin_memory(batch)
    assert out["b"] == b"raw" and out["a"][1][0] == "s" and type(out["a"][1]) is tuple
    assert out["a"][0].pinned and out["a"][1][1].pinned and not batch["a"][0].pinned
    monkeypatch.setattr(gpugrad.cuda, "is_available", lambda: True)
    with deadline(20):
        for workers in (0, 2):
            got = list(DataLoader(Range(3), batch_size=2, num_workers=workers, pin_memory=True,
                                  collate_fn=_pinnables))
            assert [[p.v for p in b] for b in got] == [[0, 1], [2]]
            assert all(p.pinned for b in got for p in b)
