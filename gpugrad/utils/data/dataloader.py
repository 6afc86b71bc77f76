"""``DataLoader``: batches of a dataset, in the order its sampler gives, loaded in the calling
process (``num_workers=0``) or in worker processes.

With ``num_workers > 0`` each iterator starts that many processes (``multiprocessing``, in
``multiprocessing_context`` or, as in PyTorch, the platform's default start method: fork on Linux
up to Python 3.13). The worker loop and everything gpugrad hands a worker pickle, so spawn works
too when the dataset, ``collate_fn`` and ``worker_init_fn`` do. Each worker has an index queue;
the main process keeps up to ``prefetch_factor * num_workers`` batches in flight, handing them
out round robin, and yields them in the sampler's order (as they arrive with ``in_order=False``).
The workers' side is ``_utils/worker.py``. While it waits for a batch the main process checks
every ``_MAIN_POLL_S`` seconds that its workers are alive: a worker that died ends the iteration
with PyTorch's ``RuntimeError``, never a hang. Workers stop (joined, then terminated if they do
not) when the iterator is exhausted, deleted, or has failed for a dead worker or a timeout; with
``persistent_workers`` they live as long as the iterator the loader keeps.

A ``DataLoader`` with ``num_workers=0`` over a ``TensorDataset`` with the default collate indexes
each tensor once per batch (one gather) instead of stacking ``batch_size`` single samples; the
batches are the same.
"""
from __future__ import annotations

import itertools
import math
import multiprocessing
import os
import pickle
import queue
import signal
import sys
import time
import warnings

from ... import cuda
from ..._creation import arange, empty, int64
from ._utils.collate import default_collate, default_convert
from ._utils.fetch import create_fetcher
from ._utils.pin_memory import pin_memory
from ._utils.worker import (
    ExceptionWrapper,
    _IterableDatasetStopIteration,
    _ResumeIteration,
    _worker_loop,
    get_worker_info,
)
from .dataset import IterableDataset, TensorDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler, _InfiniteConstantSampler

__all__ = ["DataLoader", "get_worker_info"]

_MAIN_POLL_S = 0.1          # how often a waiting main process checks that its workers are alive
_SHUTDOWN_TIMEOUT_S = 5.0   # how long shutdown waits for the workers to stop before terminating


# -- DataLoader -----------------------------------------------------------------------------------
class DataLoader:
    """Iterate over ``dataset`` in batches: ``for x, y in DataLoader(ds, batch_size=64,
    shuffle=True, generator=gpugrad.Generator().manual_seed(0))``.

    As in PyTorch: ``num_workers > 0`` loads in that many worker processes, each with its own
    copy of ``dataset`` (an ``IterableDataset`` is read whole by every worker unless it shards
    itself with ``get_worker_info()``). Each iterator draws a base seed from ``generator`` (or
    the default generator), with or without workers; worker ``i`` seeds gpugrad, ``random`` and
    numpy from ``base_seed + i`` before calling ``worker_init_fn(i)``. ``timeout`` (seconds)
    bounds the wait for each batch from the workers; it applies only with workers, as in
    PyTorch. ``pin_memory`` pins each batch when a CUDA device is present and otherwise warns
    and does nothing, as PyTorch does without an accelerator.
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset, self.num_workers, self.prefetch_factor = dataset, num_workers, prefetch_factor
        self.pin_memory, self.pin_memory_device = pin_memory, pin_memory_device
        self.timeout, self.worker_init_fn = timeout, worker_init_fn
        self.multiprocessing_context, self.in_order = multiprocessing_context, in_order
        self.persistent_workers, self._iterator = persistent_workers, None
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            given = [(name, value) for name, value, unset in (
                ("shuffle", shuffle, shuffle in (None, False)),
                ("sampler", sampler, sampler is None),
                ("batch_sampler", batch_sampler, batch_sampler is None)) if not unset]
            if given:
                name, value = given[0]
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"{name} option, but got {name}={value}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            sampler = (_InfiniteConstantSampler() if self._iterable
                       else RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        own_batches = batch_size is not None and batch_sampler is None
        if own_batches:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last, self.generator = batch_size, drop_last, generator
        self.sampler, self.batch_sampler = sampler, batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self._fast = (num_workers == 0 and type(dataset) is TensorDataset
                      and collate_fn is default_collate
                      and own_batches   # a batch sampler the user passed is followed as is
                      and (type(sampler) is SequentialSampler
                           or (type(sampler) is RandomSampler and not sampler.replacement
                               and sampler._num_samples is None)))

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers == 0:
                raise ValueError(f"multiprocessing_context can only be used with multi-process "
                                 f"loading (num_workers > 0), but got "
                                 f"num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(f"multiprocessing_context option should specify a valid "
                                     f"start method in {methods!r}, but got "
                                     f"multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError(f"multiprocessing_context option should be a valid context "
                                f"object or a string specifying the start method, but got "
                                f"multiprocessing_context={context}")
        self.__multiprocessing_context = context

    @property
    def _index_sampler(self):
        return self.batch_sampler if self.batch_sampler is not None else self.sampler

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
        return len(self._index_sampler)

    def __iter__(self):
        if self.num_workers == 0:
            pin = self._pinning()
            _base_seed(self.generator)   # drawn and unused, as in PyTorch: the generator moves
            # on exactly as with workers, so both give the same shuffled order
            return self._gather_batches(pin) if self._fast else self._load_batches(pin)
        if self.persistent_workers and self._iterator is not None and not self._iterator._shutdown:
            self._iterator._reset(self)   # the same workers serve the next epoch
            return self._iterator
        it = _MultiProcessingDataLoaderIter(self, _base_seed(self.generator), self._pinning())
        if self.persistent_workers:
            self._iterator = it
        return it

    def _pinning(self):
        if not self.pin_memory:
            return False
        if not cuda.is_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)
            return False
        return True

    def _load_batches(self, pin):
        fetcher = create_fetcher(self._iterable, self.dataset, self.batch_sampler is not None,
                                 self.collate_fn, self.drop_last)
        for index in self._index_sampler:
            try:
                data = fetcher.fetch(index)
            except StopIteration:   # the stream is exhausted (or a dataset says it is done)
                return
            yield pin_memory(data) if pin else data

    def _gather_batches(self, pin):
        """TensorDataset + default collate: each batch is one indexed gather per tensor (a copy,
        as stacking would give)."""
        n, bs = len(self.dataset), self.batch_size
        order = self._order()
        stop = n - n % bs if self.drop_last else n
        for start in range(0, stop, bs):
            idx = order[start:start + bs]
            batch = [t[idx] for t in self.dataset.tensors]
            yield pin_memory(batch) if pin else batch

    def _order(self):
        """The sample order of one epoch of the gather path, on the data's device (the
        training loop of ``gpugrad train`` replays its captured step over it)."""
        device = self.dataset.tensors[0].device
        if type(self.sampler) is RandomSampler:
            return self.sampler.permutation().to(device)
        return arange(len(self.dataset), device=device)

    def _epoch_order(self):
        """What ``iter(self)`` would visit, for a TensorDataset loaded in this process: the
        base seed drawn first, as every iterator draws it, then the order."""
        if not self._fast or self.num_workers:
            raise RuntimeError("the sample order is known up front only for a TensorDataset "
                               "loaded in the calling process")
        _base_seed(self.generator)
        return self._order()


def _base_seed(generator):
    """The int64 each iterator draws, as PyTorch's does; its workers are seeded from it."""
    return empty((), dtype=int64).random_(generator=generator).item()


# -- worker processes -----------------------------------------------------------------------------
def _exit_reason(worker):
    """Why a worker process ended, in the words of PyTorch's SIGCHLD handler."""
    code = worker.exitcode
    if code is not None and code < 0:
        try:
            name = signal.strsignal(-code) or -code
        except ValueError:
            name = -code
        return f"DataLoader worker (pid {worker.pid}) is killed by signal: {name}."
    return (f"DataLoader worker (pid {worker.pid}) exited unexpectedly with exit code {code}. "
            f"Details are lost due to multiprocessing. Rerunning with num_workers=0 may give "
            f"better error trace.")


class _MultiProcessingDataLoaderIter:
    """One pass (or, with ``persistent_workers``, every pass) over a ``DataLoader`` by worker
    processes. Task ``k`` is the sampler's ``k``-th index, sent to a worker's index queue;
    ``_task_info[k]`` is ``(worker,)`` while it is out and ``(worker, payload)`` once it came
    back early (before the tasks ahead of it)."""

    def __init__(self, loader, base_seed, pin):
        self._owner, self._shutdown = os.getpid(), True   # nothing to shut down yet
        self._workers, self._index_queues, self._result_queue = [], [], None
        self._num_workers, self._prefetch = loader.num_workers, loader.prefetch_factor
        if self._prefetch <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 for "
                                 "MultiProcessingDataLoaderIter")
        self._in_order, self._timeout = loader.in_order, loader.timeout
        self._persistent, self._pin = loader.persistent_workers, pin
        ctx = loader.multiprocessing_context or multiprocessing.get_context()
        # a forkserver's workers are its children, not ours: they watch the parent they find
        parent = self._owner if ctx.get_start_method() in ("fork", "spawn") else None
        self._result_queue, self._done_event = ctx.Queue(), ctx.Event()
        self._shutdown = False
        try:
            for i in range(self._num_workers):
                index_queue = ctx.Queue()
                index_queue.cancel_join_thread()   # a dead worker must not block our exit
                w = ctx.Process(target=_worker_loop, daemon=True, args=(
                    loader._iterable, loader.dataset, index_queue, self._result_queue,
                    self._done_event, loader.batch_sampler is not None, loader.collate_fn,
                    loader.drop_last, base_seed, loader.worker_init_fn, i, self._num_workers,
                    parent))
                w.start()
                self._index_queues.append(index_queue)
                self._workers.append(w)
            self._reset(loader, first_iter=True)
        except BaseException:
            self._shutdown_workers()
            raise

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._index_sampler)

    def __next__(self):
        if self._shutdown:
            raise StopIteration
        data = self._next_data()
        if isinstance(data, ExceptionWrapper):
            del self   # the traceback must not keep the iterator, and so its workers, alive
            data.reraise()
        return data

    def _reset(self, loader, first_iter=False):
        """Start a pass: the sampler afresh, every worker active, the first tasks sent."""
        self._index_sampler = loader._index_sampler
        self._sampler_iter = iter(self._index_sampler)
        self._send_idx = self._rcvd_idx = self._tasks_outstanding = 0
        self._task_info = {}
        self._workers_status = [True] * self._num_workers      # still has work this pass
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:   # persistent workers: drop what the last pass left, then resume
            for q in self._index_queues:
                q.put(_ResumeIteration())
            waiting = self._num_workers
            while waiting:
                if isinstance(self._get_data()[0], _ResumeIteration):
                    waiting -= 1
        for _ in range(self._prefetch * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        max_tasks = self._prefetch * self._num_workers
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):   # the next active worker with room, if any
            w = next(self._worker_cycle)
            if self._workers_status[w] and (
                    self._in_order
                    or self._workers_num_tasks[w] < max_tasks // sum(self._workers_status)):
                break
        else:
            return
        self._index_queues[w].put((self._send_idx, index))
        self._task_info[self._send_idx] = (w,)
        self._workers_num_tasks[w] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _next_data(self):
        while True:
            # skip the tasks of workers whose stream ran out before they could serve them
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:   # it came back early
                worker, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _IterableDatasetStopIteration):
                self._workers_status[data.worker_id] = False
                if not self._persistent:
                    self._index_queues[data.worker_id].put(None)   # it may stop now
                self._try_put_index()
                continue
            if idx == self._rcvd_idx or not self._in_order:
                worker = self._task_info.pop(idx)[0]
                if idx == self._rcvd_idx:
                    self._rcvd_idx += 1
                return self._process_data(data, worker)
            self._task_info[idx] += (data,)

    def _process_data(self, data, worker):
        self._workers_num_tasks[worker] -= 1
        self._try_put_index()
        data = pickle.loads(data)
        if self._pin and not isinstance(data, ExceptionWrapper):
            data = pin_memory(data)
        return data

    def _get_data(self):
        """The next ``(task index, payload)`` any worker sends; raises when a worker died or
        ``timeout`` passed first (after stopping the workers)."""
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = _MAIN_POLL_S if deadline is None else max(
                0.0, min(_MAIN_POLL_S, deadline - time.monotonic()))
            try:
                return self._result_queue.get(timeout=wait)
            except queue.Empty:
                pass
            failed = [w for i, w in enumerate(self._workers)
                      if self._workers_status[i] and not w.is_alive()]
            if failed:
                pids = ", ".join(str(w.pid) for w in failed)
                cause = RuntimeError(_exit_reason(failed[0]))
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited "
                                   f"unexpectedly") from cause
            if deadline is not None and time.monotonic() >= deadline:
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def _shutdown_workers(self):
        """Tell every worker to stop, give them ``_SHUTDOWN_TIMEOUT_S`` to do so, terminate the
        ones that did not; joining each leaves no zombie. Only the process that started them
        does this (a forked copy of the iterator must not), and not while Python exits, when
        ``multiprocessing`` itself ends its daemonic processes."""
        if self._shutdown or os.getpid() != self._owner or sys.is_finalizing():
            return
        self._shutdown = True
        try:
            self._done_event.set()
            for q in self._index_queues:
                q.put(None)
            deadline = time.monotonic() + _SHUTDOWN_TIMEOUT_S
            for w in self._workers:
                w.join(timeout=max(0.0, deadline - time.monotonic()))
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=1.0)
                if w.is_alive():
                    w.kill()
                    w.join()
            for q in self._index_queues:
                q.close()
            if self._result_queue is not None:
                self._result_queue.close()

    def __del__(self):
        self._shutdown_workers()
