"""DistributedDataParallel: one replica of the model per process, gradients averaged across
the processes during backward.

At construction the ranks check they hold the same parameters (count, shapes, dtypes) and take
rank 0's parameters and buffers. The gradients are grouped in buckets of about
``bucket_cap_mb`` (the first one small, as in PyTorch, so communication starts early), in the
reverse order of ``parameters()``, which is about the order backward produces them. A
post-accumulate-grad hook copies each gradient into its bucket; when a bucket's last gradient
arrives its all-reduce is started, nonblocking, and backward goes on computing the gradients of
the next buckets while it runs. When the last bucket has been started the hook waits for them
all, in order, and writes the averages back into ``.grad``."""
from __future__ import annotations

import contextlib
import threading
import time

import numpy as np

from ... import _backend
from ... import distributed as dist
from ...autograd.grad_mode import is_grad_enabled, no_grad
from ...distributed.distributed_c10d import Work
from ...tensor import Tensor
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1024 * 1024   # PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by "
    "making sure all `forward` function outputs participate in calculating loss.")


class _Bucket:
    """Gradients of some parameters of one dtype and device, flattened into one buffer."""

    def __init__(self, index, params, xp):
        self.index, self.params = index, params
        self.offsets, n = [], 0
        for p in params:
            self.offsets.append(n)
            n += p.numel()
        self.flat = xp.zeros(n, params[0]._data.dtype)
        self.ready = 0
        self.work = None


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        super().__init__()
        pg = process_group if process_group is not None else dist.GroupMember.WORLD
        if pg is None:
            raise ValueError("Default process group has not been initialized, please make "
                             "sure to call init_process_group.")
        self.module = module
        self.device_ids, self.output_device, self.dim = device_ids, output_device, dim
        self.process_group = pg
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view, self.static_graph = gradient_as_bucket_view, static_graph
        self.require_backward_grad_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 2 ** 20)
        seen, params = set(), []
        for p in module.parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                params.append(p)
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self._params = params
        self._verify_same_model()
        self._sync_module_states()
        self._build_buckets()
        for i, p in enumerate(params):
            p.register_post_accumulate_grad_hook(self._hook_for(i))
        self._reset(sync=False)
        self.comm_stats = {"wait_s": 0.0, "buckets": len(self._buckets), "steps": 0}

    # -- construction ---------------------------------------------------------------------------
    def _verify_same_model(self):
        pg = self.process_group
        row = [len(self._params)]
        for p in self._params:
            row += [p.numel(), p._data.ndim, np.dtype(p._data.dtype).num]
        mine = np.array([len(row)] + row, np.int64)
        n = Tensor._make(np.array([mine.size], np.int64))
        most = Tensor._make(n._data.copy())
        dist.all_reduce(most, op=dist.ReduceOp.MAX, group=pg)
        padded = np.full(int(most._data[0]), -1, np.int64)
        padded[:mine.size] = mine
        everyone = [Tensor._make(np.empty_like(padded)) for _ in range(pg.size())]
        dist.all_gather(everyone, Tensor._make(padded), group=pg)
        ref = everyone[0]._data
        for r, t in enumerate(everyone):
            if not np.array_equal(t._data, ref):
                a, b = ref[1], t._data[1]
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but Rank {pg.rank()} sees rank "
                    f"{pg.ranks[r]} with {b} parameters (sizes, dtypes) differing from rank "
                    f"{pg.ranks[0]}'s {a}")

    def _sync_module_states(self):
        """Every rank starts from rank 0's parameters and buffers (one broadcast per dtype)."""
        states = list(self._params) + [b for b in self.module.buffers()]
        self._broadcast(states)

    def _broadcast(self, tensors):
        pg = self.process_group
        if pg.size() == 1 or not tensors:
            return
        groups = {}
        for t in tensors:
            groups.setdefault((t._data.dtype, type(t._data)), []).append(t)
        root = pg.ranks[0]
        with no_grad():
            for ts in groups.values():
                xp = _backend.xp_of(ts[0]._data)
                flat = xp.concatenate([t._data.reshape(-1) for t in ts])
                dist.broadcast(Tensor._make(flat), src=root, group=pg)
                off = 0
                for t in ts:
                    n = t._data.size
                    t._data[...] = flat[off:off + n].reshape(t._data.shape)
                    t._version_box().v += 1
                    off += n

    def _build_buckets(self):
        """Buckets in the reverse order of ``parameters()``, one dtype and device each, the
        first capped at 1 MB, the others at ``bucket_cap_mb``."""
        self._buckets, self._where, cur, size = [], {}, [], 0
        cap = min(_FIRST_BUCKET_BYTES, self.bucket_bytes_cap)

        def close():
            nonlocal cur, size, cap
            if cur:
                b = _Bucket(len(self._buckets), cur, _backend.xp_of(cur[0]._data))
                for j, p in enumerate(cur):
                    self._where[id(p)] = (b, j)
                self._buckets.append(b)
                cap = self.bucket_bytes_cap
            cur, size = [], 0
        for p in reversed(self._params):
            key = (p._data.dtype, type(p._data))
            if cur and (key != (cur[0]._data.dtype, type(cur[0]._data)) or size >= cap):
                close()
            cur.append(p)
            size += p._data.nbytes
        close()
        self._index = {id(p): i for i, p in enumerate(self._params)}

    # -- one step ---------------------------------------------------------------------------------
    def _reset(self, sync):
        if not hasattr(self, "_lock"):
            self._lock = threading.Lock()   # one thread at a time tests an MPI request
            self._wake, self._progress = threading.Event(), None
        with self._lock:
            self._sync = sync
            self._next = 0        # the next bucket to start: buckets start in order on all ranks
            for b in self._buckets:
                b.ready, b.work = 0, None
            self._pending = 0     # gradients still expected in this backward
            self._used = np.zeros(len(self._params), np.int32)
            self._finished = True
            self._stop = False

    def forward(self, *inputs, **kwargs):
        if not self._finished and self._pending < len(self._params):
            raise RuntimeError(_UNFINISHED)
        if self.broadcast_buffers and self.process_group.size() > 1:
            buffers = list(self.module.buffers())
            if buffers:
                self._broadcast(buffers)
        out = self.module(*inputs, **kwargs)
        sync = is_grad_enabled() and self.require_backward_grad_sync
        self._reset(sync)
        if sync:
            self._finished = False
            self._pending = len(self._params)
            if self.find_unused_parameters:
                used = _reachable_leaves(out)
                for p in self._params:
                    if id(p) not in used:
                        self._mark_ready(p, None)
        return out

    def _hook_for(self, i):
        p = self._params[i]

        def hook(_):
            if self._sync:
                self._used[i] = 1
                self._mark_ready(p, p.grad)
        return hook

    def _mark_ready(self, p, grad):
        b, j = self._where[id(p)]
        off, n = b.offsets[j], p.numel()
        if grad is None:
            b.flat[off:off + n] = 0
        else:
            b.flat[off:off + n] = grad._data.reshape(-1)
        b.ready += 1
        self._pending -= 1
        while self._next < len(self._buckets) and \
                self._buckets[self._next].ready == len(self._buckets[self._next].params):
            self._start(self._buckets[self._next])
            self._next += 1
        if self._pending == 0:
            self._finalize()

    def _start(self, b):
        pg = self.process_group
        with self._lock:
            b.work = Work(pg.comm.allreduce(b.flat, "sum"), pg, "DistributedDataParallel "
                          f"all_reduce of bucket {b.index}")
        b.work._seq = pg._seq = pg._seq + 1
        if self._pending > 0:       # backward goes on: drive this bucket behind it
            if self._progress is None:
                self._progress = threading.Thread(target=self._drive, daemon=True)
                self._progress.start()
            self._wake.set()

    def _drive(self):
        """MPI advances a nonblocking collective only inside an MPI call: while backward
        computes (numpy's kernels release the GIL), this thread polls the buckets in flight so
        their all-reduces progress behind it. Woken when a bucket starts before the last
        gradient; idle once finalize takes the lock."""
        while True:
            self._wake.wait()
            self._wake.clear()
            while True:
                with self._lock:
                    if self._stop:
                        break
                    busy = any(not b.work.is_completed() for b in self._buckets[:self._next])
                if not busy:
                    break
                time.sleep(5e-5)

    def _finalize(self):
        pg = self.process_group
        t0 = time.perf_counter()
        with self._lock:
            self._stop = True
            for b in self._buckets:
                b.work.wait()
        self.comm_stats["wait_s"] += time.perf_counter() - t0
        self.comm_stats["steps"] += 1
        used = None
        if self.find_unused_parameters:
            counts = Tensor._make(self._used.copy())
            dist.all_reduce(counts, group=pg)
            used = counts._data
        size = pg.size()
        with no_grad():
            for b in self._buckets:
                for j, p in enumerate(b.params):
                    if used is not None and used[self._index[id(p)]] == 0:
                        continue       # no rank used it: its .grad stays as it was
                    avg = b.flat[b.offsets[j]:b.offsets[j] + p.numel()].reshape(p._data.shape)
                    avg = avg / size
                    if p.grad is None:
                        p.grad = Tensor._make(avg.astype(p._data.dtype, copy=False))
                    else:
                        p.grad._data[...] = avg
                        p.grad._version_box().v += 1
        self._finished = True
        self._sync = False

    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes of forwards run inside skip the all-reduce: gradients accumulate
        locally, and the first synchronised backward after averages their sums."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old


def _reachable_leaves(out) -> set:
    """ids of the leaves the autograd graph of ``out`` reaches (PyTorch's unused-parameter
    search, run after forward)."""
    stack, seen, leaves = [], set(), set()

    def add(v):
        if isinstance(v, Tensor):
            if v.grad_fn is not None:
                stack.append(v.grad_fn)
            elif v.requires_grad:
                leaves.add(id(v))
        elif isinstance(v, (list, tuple)):
            for a in v:
                add(a)
        elif isinstance(v, dict):
            for a in v.values():
                add(a)
    add(out)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None:
            leaves.add(id(var))
        for nxt, _ in node.next_functions:
            if nxt is not None:
                stack.append(nxt)
    return leaves


