"""The worker side of a ``DataLoader`` with ``num_workers > 0``: the loop each worker process runs
(``_worker_loop``), what a worker knows about itself (``get_worker_info``), how it is seeded,
and how its batches and errors travel back to the main process.

A worker reads ``(task index, sampler index)`` pairs from its own index queue, loads and collates
the batch with a fetcher and puts ``(task index, payload)`` on the result queue it shares with the
other workers. The payload is the batch pickled by the worker itself, so a batch that cannot cross
(a GPU tensor, a non-leaf tensor that requires grad, an unpicklable object) fails in the worker's
``try`` and reaches the main process as that worker's error instead of being dropped by the
queue's feeder thread. ``None`` on the index queue tells a worker to stop; a worker whose parent
process has died stops by itself.
"""
from __future__ import annotations

import io
import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import numpy as np

from ...._creation import manual_seed
from ....tensor import Tensor
from .fetch import create_fetcher

# seconds a waiting worker sleeps between checks that its parent is still alive
MP_STATUS_CHECK_INTERVAL = 1.0


@dataclass(frozen=True)
class WorkerInfo:
    """What ``get_worker_info()`` answers in a worker: its ``id`` (0 to ``num_workers - 1``),
    ``num_workers``, the ``seed`` it was seeded with and ``dataset``, its own copy."""

    id: int
    num_workers: int
    seed: int
    dataset: object


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """In a ``DataLoader`` worker process, that worker's ``WorkerInfo`` (use ``id`` and
    ``num_workers`` to give each worker its own share of an ``IterableDataset``); ``None`` in the
    main process."""
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """A worker's stream is exhausted: the main process sends it no more tasks this epoch."""

    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """A persistent worker starts a new epoch (the worker answers with the same object)."""


class KeyErrorMessage(str):
    """A message that ``KeyError`` prints as it is (``KeyError`` shows the repr of its
    argument, which would print the traceback's newlines as ``\\n``)."""

    __slots__ = ()

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception caught in a worker, carried to the main process as its type and its
    formatted traceback (a traceback object cannot be pickled)."""

    def __init__(self, exc_info=None, where="in background"):
        exc_type, exc, tb = exc_info if exc_info is not None else sys.exc_info()
        self.exc_type, self.exc_name = exc_type, exc_type.__name__
        self.exc_msg = "".join(traceback.format_exception(exc_type, exc, tb))
        self.where = where

    def reraise(self):
        """Raise the worker's exception type again here, with a message naming the worker and
        holding the original traceback (a ``RuntimeError`` when that type cannot be rebuilt
        from one message)."""
        msg = f"Caught {self.exc_name} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class _BatchPickler(pickle.Pickler):
    """Pickle, refusing the tensors that cannot leave a worker as PyTorch refuses them."""

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            if obj.device.type != "cpu":
                raise RuntimeError(
                    f"a DataLoader worker can only return CPU tensors, got one on {obj.device}; "
                    f"load to the CPU and move each batch in the main process "
                    f"(pin_memory=True speeds up that copy)")
            if obj.requires_grad and obj.grad_fn is not None:
                raise RuntimeError(
                    "Cowardly refusing to serialize non-leaf tensor which requires_grad, since "
                    "autograd does not support crossing process boundaries.  If you just want "
                    "to transfer the data, call detach() on the tensor before serializing "
                    "(e.g., putting it on the queue).")
        return NotImplemented


def _dumps(obj) -> bytes:
    buf = io.BytesIO()
    _BatchPickler(buf, pickle.HIGHEST_PROTOCOL).dump(obj)
    return buf.getvalue()


def _encode(data, worker_id) -> bytes:
    """``data`` (a batch or an ``ExceptionWrapper``) pickled for the result queue; a batch that
    cannot be pickled becomes this worker's error."""
    try:
        return _dumps(data)
    except Exception:
        if isinstance(data, ExceptionWrapper):   # its exception class cannot be pickled
            data.exc_type = None                 # the main process raises a RuntimeError
            return _dumps(data)
        return _dumps(ExceptionWrapper(where=f"in DataLoader worker process {worker_id}"))


class ManagerWatchdog:
    """Tells a worker whether the process that started it is still alive (an orphaned worker
    is re-parented, so its parent pid changes). ``manager_pid`` is the parent the main process
    says the worker has (itself, for fork and spawn): read in the worker, it would already be
    the new parent's when the main process died before the worker got this far."""

    def __init__(self, manager_pid=None):
        self.manager_pid = os.getppid() if manager_pid is None else manager_pid
        self.manager_dead = False

    def is_alive(self) -> bool:
        if not self.manager_dead:
            self.manager_dead = os.getppid() != self.manager_pid
        return not self.manager_dead


def _seed(base_seed, worker_id) -> int:
    """Seed this process as PyTorch seeds a worker: ``base_seed + worker_id`` for gpugrad's
    default generator and Python's ``random``; numpy's global generator from a state mixed from
    both (``SeedSequence``), so it does not repeat the others' stream."""
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    mask = 0xFFFFFFFF
    entropy = [worker_id, base_seed & mask, base_seed >> 32, 0]
    np.random.seed(np.random.SeedSequence(entropy).generate_state(4))
    return seed


def _worker_loop(iterable, dataset, index_queue, data_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers, manager_pid):
    global _worker_info
    where = f"in DataLoader worker process {worker_id}"
    watchdog = ManagerWatchdog(manager_pid)
    try:
        seed = _seed(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_error = fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_error = ExceptionWrapper(where=where)   # sent in place of every batch

        # a worker whose stream is exhausted skips its tasks until told to stop or resume
        iteration_end = False
        while watchdog.is_alive():
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn,
                                         drop_last)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_error is not None:
                data = init_error
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if not iterable:
                        data = ExceptionWrapper(where=where)
                    else:
                        data, iteration_end = _IterableDatasetStopIteration(worker_id), True
                except Exception:
                    data = ExceptionWrapper(where=where)
            if not isinstance(data, _IterableDatasetStopIteration):
                data = _encode(data, worker_id)
            data_queue.put((idx, data))
            del data, idx, index, r   # hold no batch while waiting for the next task
    except KeyboardInterrupt:
        pass   # the main process has it too, and shuts the workers down
    if done_event.is_set() or watchdog.manager_dead:
        # the main process may no longer read: exit without waiting to flush the queue
        data_queue.cancel_join_thread()
        data_queue.close()
