"""CUDA graphs, as PyTorch's ``torch.cuda.graphs``: a static piece of GPU work (a whole training
step) is captured once and replayed as one launch, with no Python, engine or per-kernel launch
cost on the host.

Built on CuPy's stream capture: ``Stream.begin_capture()`` / ``end_capture()`` give a
``cupy.cuda.graph.Graph`` whose ``launch()`` is the replay. While a stream captures, kernels
queued on it are recorded, not run, and the memory the captured work allocates comes from the
graph's own ``cupy.cuda.MemoryPool`` (made current with ``cupy.cuda.using_allocator``): nothing
else allocates from it while the graph lives, so every tensor made during the capture is a
valid static output of each replay. Freeing the graph (``reset()``, or dropping it) frees the
pool, unless another graph shares it through a handle (``graph_pool_handle()``, ``pool()``).

What differs from PyTorch, and why (docs/gpu.md, "CUDA graphs"):

- CuPy grows its pool with ``cudaMalloc``, which CUDA refuses inside a capture in the
  ``"global"`` and ``"thread_local"`` modes, so the stream always captures in CUDA's relaxed
  mode. ``capture_error_mode`` keeps PyTorch's meaning at gpugrad's level: reading a CUDA
  tensor on the host (``.item()``, ``.cpu()``, ``.numpy()``, ``print``, ``bool``) raises
  PyTorch's ``operation not permitted when stream is capturing`` from any thread in
  ``"global"`` mode, from the capturing thread in the other two.
- CuPy refuses cuBLAS during a capture, so the matrix products of a captured step run
  gpugrad's own kernel (``kernels/gemm.cu``); batched products are not capturable yet.
- An error inside ``with graph(g):`` ends the capture and discards it: the stream, the pool
  and ``g`` are usable again (PyTorch leaves the capture to fail at ``capture_end``).
"""
from __future__ import annotations

import gc
import threading

from .. import _backend
from .streams import Stream, StreamContext, current_stream, device_index, stream

__all__ = ["CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing",
           "make_graphed_callables"]

_MODES = ("global", "thread_local", "relaxed")


def _cupy():
    return _backend._require_cuda(_backend.device("cuda", device_index(None)))


def is_current_stream_capturing() -> bool:
    """True while the current CUDA stream captures a graph (False without CUDA)."""
    cp = _backend.cupy_module()
    if cp is None or not _backend.captures.count:
        return False
    return bool(cp.cuda.get_current_stream().is_capturing())


class _PoolHandle:
    """Names a private memory pool that several captures share (``graph(g, pool=handle)``)."""
    __slots__ = ("memory_pool",)

    def __init__(self, memory_pool):
        self.memory_pool = memory_pool

    def __repr__(self):
        return f"<gpugrad.cuda graph pool {hex(id(self.memory_pool))}>"


def graph_pool_handle() -> _PoolHandle:
    """A handle to a new private memory pool, for captures that share one
    (``with graph(g2, pool=handle):`` after ``with graph(g1, pool=handle):``)."""
    return _PoolHandle(_cupy().cuda.MemoryPool())


class CUDAGraph:
    """One captured graph: ``capture_begin()`` ... ``capture_end()`` on a side stream (or
    ``with gpugrad.cuda.graph(g):``), then ``replay()`` as often as wanted."""

    def __init__(self, keep_graph=False):
        self._graph = None     # the cupy Graph once captured
        self._pool = None      # the cupy MemoryPool its allocations come from
        self._capture = None   # while capturing: (stream, allocator context, captures entry)

    def capture_begin(self, pool=None, capture_error_mode="global"):
        """Start recording the current stream's work into this graph; allocations come from
        ``pool`` (a handle from ``graph_pool_handle()`` or another graph's ``pool()``) or from
        a pool of the graph's own."""
        if capture_error_mode not in _MODES:
            raise RuntimeError(f"Unknown capture error mode. Expected `global`, "
                               f"`thread_local`, or `relaxed`, got {capture_error_mode}")
        if self._graph is not None or self._capture is not None:
            raise RuntimeError("This CUDAGraph instance already owns a captured graph. To "
                               "capture a new graph, create a new instance.")
        cp = _cupy()
        stream = cp.cuda.get_current_stream()
        if stream.ptr in (0, 1, 2):   # the legacy and per-thread default streams
            raise RuntimeError("CUDA graphs must be captured on a non-default stream. "
                               "(However, after capture, it's ok to replay them on the "
                               "default stream.)")
        if pool is not None and not isinstance(pool, _PoolHandle):
            raise TypeError(f"pool must be a handle from graph_pool_handle() or "
                            f"CUDAGraph.pool(), not {type(pool).__name__}")
        memory_pool = pool.memory_pool if pool is not None else cp.cuda.MemoryPool()
        allocator = cp.cuda.using_allocator(memory_pool.malloc)
        allocator.__enter__()
        try:
            stream.begin_capture()   # CuPy's default, relaxed mode: the pool may grow
        except BaseException:
            allocator.__exit__(None, None, None)
            raise
        entry = (threading.get_ident(), capture_error_mode)
        _backend.captures.running.append(entry)
        _backend.captures.count += 1
        self._pool, self._capture = memory_pool, (stream, allocator, entry)

    def _stop(self):
        stream, allocator, entry = self._capture
        self._capture = None
        _backend.captures.running.remove(entry)
        _backend.captures.count -= 1
        try:
            return stream.end_capture()
        finally:
            allocator.__exit__(None, None, None)

    def capture_end(self):
        """Stop recording; the graph is ready to ``replay()``."""
        if self._capture is None:
            raise RuntimeError("Called CUDAGraph::capture_end without a preceding "
                               "capture_begin.")
        self._graph = self._stop()

    def _abandon(self):
        """End a capture that failed midway and keep nothing of it."""
        if self._capture is None:
            return
        try:
            self._stop()
        except Exception:   # an invalidated capture ends with an error: nothing to keep
            pass
        self._pool = None

    def replay(self):
        """Run the captured work again, on the current stream, over the same memory."""
        if self._graph is None:
            raise RuntimeError("Called CUDAGraph::replay without a preceding successful "
                               "capture.")
        self._graph.launch(_cupy().cuda.get_current_stream())

    def reset(self):
        """Drop the graph and, unless another graph shares it, its memory."""
        if self._capture is not None:
            self._abandon()
        self._graph = self._pool = None

    def pool(self) -> _PoolHandle:
        """A handle to this graph's memory pool, for a later capture to share it."""
        if self._pool is None:
            raise RuntimeError("Called CUDAGraph::pool without a preceding successful "
                               "capture.")
        return _PoolHandle(self._pool)

    def __del__(self):
        if getattr(self, "_capture", None) is not None:
            self._abandon()


class graph:
    """``with gpugrad.cuda.graph(g):`` captures the block's GPU work into ``g`` on a side
    stream (``stream``, or one made once per process), allocating from ``pool``'s memory or
    ``g``'s own. An error in the block ends and discards the capture before it propagates."""

    default_capture_stream = None

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        if not isinstance(cuda_graph, CUDAGraph):
            raise TypeError(f"graph() takes a CUDAGraph, not {type(cuda_graph).__name__}")
        if stream is None:
            if graph.default_capture_stream is None:
                idx = device_index(None)
                cp = _backend._require_cuda(_backend.device("cuda", idx))
                with cp.cuda.Device(idx):
                    graph.default_capture_stream = Stream._wrap(
                        cp.cuda.Stream(non_blocking=True), idx)
            stream = graph.default_capture_stream
        self.cuda_graph, self.pool = cuda_graph, pool
        self.capture_error_mode = capture_error_mode
        self.stream_ctx = StreamContext(stream)

    def __enter__(self):
        from .devices import synchronize
        from .memory import empty_cache
        synchronize()   # the capture starts from finished work and a pool with no stale blocks
        gc.collect()
        empty_cache()
        self.stream_ctx.__enter__()
        try:
            self.cuda_graph.capture_begin(self.pool, capture_error_mode=self.capture_error_mode)
        except BaseException:
            self.stream_ctx.__exit__(None, None, None)
            raise

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self.cuda_graph.capture_end()
            else:
                self.cuda_graph._abandon()
        finally:
            self.stream_ctx.__exit__(exc_type, exc, tb)
        return False


def make_graphed_callables(callables, sample_args, num_warmup_iters=3, allow_unused_input=False,
                           pool=None):
    """Graphed versions of ``callables`` (a module or function, or a tuple of them, with a tuple
    of sample tensors each): each call replays a captured forward, and its backward a captured
    backward, so they mix with eager code in an ordinary training loop. Every call must take
    tensors of the samples' shapes, dtypes and ``requires_grad``; a module's graphed forward
    runs while it is in the training mode it was captured in, its own forward otherwise."""
    from .. import autograd  # layering: the graphed callables are autograd Functions
    from ..nn import Module  # layering: a module's parameters are inputs of its graphs
    from ..tensor import Tensor  # layering: cuda sits below the tensor in import order
    single = not isinstance(callables, tuple)
    if single:
        callables, sample_args = (callables,), (sample_args,)
    handle = pool if pool is not None else graph_pool_handle()
    results = []
    for fn, args in zip(callables, sample_args):
        args = tuple(args)
        if not all(isinstance(a, Tensor) for a in args):
            raise TypeError("In the beta API, sample_args for each callable must contain only "
                            "Tensors. Other types are not allowed.")
        params = tuple(fn.parameters()) if isinstance(fn, Module) else ()
        if isinstance(fn, Module) and any(b.requires_grad for b in fn.buffers()):
            raise AssertionError("In any callable passed to make_graphed_callables, all "
                                 "buffers must have requires_grad=False.")
        results.append(_graph_one(autograd, fn, args, params, isinstance(fn, Module),
                                  num_warmup_iters, allow_unused_input, handle))
    return results[0] if single else tuple(results)


def _graph_one(autograd, fn, args, params, is_module, warmups, allow_unused, handle):
    """Capture ``fn``'s forward and backward; return the graphed callable (the module, its
    forward replaced, for a module)."""
    no_grad = autograd.no_grad
    inputs = args + params
    wants = tuple(t for t in inputs if t.requires_grad)
    side = Stream()
    side.wait_stream(current_stream())
    with stream(side):   # PyTorch's recipe: warm up off the default stream
        for _ in range(warmups):
            outs = _flat(fn(*args))
            live = [o for o in outs if o.requires_grad]
            if live and wants:
                autograd.grad(live, wants, [o.detach() * 0 + 1 for o in live],
                              allow_unused=allow_unused)
            del outs, live
    current_stream().wait_stream(side)
    fwd, bwd = CUDAGraph(), CUDAGraph()
    with graph(fwd, pool=handle):
        raw = fn(*args)
    one = not isinstance(raw, (tuple, list))   # give back what the callable gives: one or many
    static_out = _flat(raw)
    live = [o for o in static_out if o.requires_grad]
    static_grad_out = [o.detach().clone() for o in live]
    with graph(bwd, pool=handle):
        static_grads = autograd.grad(live, wants, static_grad_out, allow_unused=allow_unused) \
            if live and wants else ()
    static_grads = dict(zip(map(id, wants), static_grads))

    class Graphed(autograd.Function):
        @staticmethod
        def forward(ctx, *given):
            with no_grad():
                for mine, new in zip(args, given[:len(args)]):
                    if mine is not new:
                        mine.copy_(new)
            fwd.replay()
            return tuple(o.detach() for o in static_out)

        @staticmethod
        def backward(ctx, *grads):
            with no_grad():
                for mine, new in zip(static_grad_out, (g for g, o in zip(grads, static_out)
                                                       if o.requires_grad)):
                    if new is None:
                        mine.zero_()
                    elif mine is not new:
                        mine.copy_(new)
            bwd.replay()
            out = []
            for t in inputs:
                g = static_grads.get(id(t)) if t.requires_grad else None
                out.append(None if g is None else g.detach())
            return tuple(out)

    def graphed(*given):
        outs = Graphed.apply(*given, *params)
        return outs[0] if one else outs

    if is_module:
        own_forward, training = fn.forward, fn.training

        def forward(*given):
            if fn.training == training:
                return graphed(*given)
            return own_forward(*given)
        fn.forward = forward
        return fn
    return graphed


def _flat(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)
