"""TensorBoard logging: ``SummaryWriter`` with PyTorch's API.

Events are written with the ``tensorboard`` package's own protobufs and event-file writer
(``pip install tensorboard``, or the ``gpugrad[tensorboard]`` extra); view them with
``tensorboard --logdir runs``.

``add_graph(model, x)`` runs one forward of ``model`` and writes its graph with module scopes
(``SimpleNet/Linear[fc1]/addmm``), op names and output shapes. Nothing is traced or compiled:
the graph is read from the autograd graph the forward records, and each op is placed in the
innermost module whose ``forward`` created it (forward hooks, see
:class:`gpugrad.viz.module_scopes`), so any Python control flow and any non-tensor inputs or
outputs (dicts, None, strings) are fine. ``backward=True`` also writes the autograd graph
itself (``MulBackward0``, ``AccumulateGrad``...) under the tag ``backward``: pick it in the
Graphs tab's *Tag* menu.
"""
from __future__ import annotations

import os
import re
import socket
import time
from datetime import datetime

import numpy as np

from ..viz import _graph as G
from ..viz._record import Recording
from . import _tb_media as M

try:
    from tensorboard.compat.proto import (
        config_pb2,
        event_pb2,
        graph_pb2,
        node_def_pb2,
        summary_pb2,
        tensor_pb2,
        tensor_shape_pb2,
        types_pb2,
        versions_pb2,
    )
    from tensorboard.compat.proto.attr_value_pb2 import AttrValue
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
except ImportError as e:  # pragma: no cover - depends on the environment
    _IMPORT_ERROR: ImportError | None = e
else:
    _IMPORT_ERROR = None

__all__ = ["SummaryWriter"]

BACKWARD_TAG = "backward"
_GRAPH_PLUGIN = "graph_run_metadata_graph"   # TensorBoard's "tagged op graph" summaries


def _require():
    if _IMPORT_ERROR is not None:
        raise ImportError("gpugrad.utils.tensorboard needs the tensorboard package: "
                          "pip install tensorboard  (or: pip install 'gpugrad[tensorboard]')"
                          ) from _IMPORT_ERROR


def _to_numpy(value) -> np.ndarray:
    if G.is_tensor(value):
        return np.asarray(value.detach().cpu().numpy())
    if hasattr(value, "get") and hasattr(value, "__cuda_array_interface__"):  # a CuPy array
        return value.get()
    return np.asarray(value)


def _scalar(value) -> float:
    a = _to_numpy(value)
    if a.size != 1:
        raise ValueError(f"scalar value must have exactly one element, got shape {a.shape}")
    return float(a.reshape(()))


class SummaryWriter:
    """Writes TensorBoard event files into ``log_dir`` (default ``runs/<date>_<host><comment>``).

    Use as a context manager, or call :meth:`close` when done. Every ``add_*`` takes an
    optional ``global_step`` and ``walltime`` (seconds since the epoch).
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        _require()
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self._writers: dict | None = None
        self._writer()

    # -- files ----------------------------------------------------------------------------------
    def _writer(self, log_dir=None):
        """The event-file writer for ``log_dir`` (this run's by default), opened on first use."""
        if self._writers is None:
            self._writers = {}
        log_dir = log_dir or self.log_dir
        w = self._writers.get(log_dir)
        if w is None:
            w = self._writers[log_dir] = EventFileWriter(log_dir, self.max_queue,
                                                         self.flush_secs, self.filename_suffix)
            if self.purge_step is not None and log_dir == self.log_dir:
                # TensorBoard drops events of this run with a step >= purge_step
                w.add_event(event_pb2.Event(step=self.purge_step, file_version="brain.Event:2"))
                w.add_event(event_pb2.Event(step=self.purge_step, session_log=event_pb2.SessionLog(
                    status=event_pb2.SessionLog.START)))
                self.purge_step = None
        return w

    def get_logdir(self) -> str:
        return self.log_dir

    def _add_summary(self, summary, global_step=None, walltime=None, log_dir=None):
        event = event_pb2.Event(summary=summary,
                                wall_time=time.time() if walltime is None else walltime)
        if global_step is not None:
            event.step = int(global_step)
        self._writer(log_dir).add_event(event)

    # -- scalars, histograms, text ---------------------------------------------------------------
    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None):
        """Log one number (a Python/NumPy number or a one-element tensor) under ``tag``."""
        value = summary_pb2.Summary.Value(tag=tag, simple_value=_scalar(scalar_value))
        self._add_summary(summary_pb2.Summary(value=[value]), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Log several numbers on one chart: each key goes to its own run
        ``<log_dir>/<main_tag>_<key>``, all under the tag ``main_tag`` (PyTorch's layout)."""
        walltime = time.time() if walltime is None else walltime
        for key, scalar_value in tag_scalar_dict.items():
            log_dir = os.path.join(self.log_dir, f"{main_tag.replace('/', '_')}_{key}")
            value = summary_pb2.Summary.Value(tag=main_tag, simple_value=_scalar(scalar_value))
            self._add_summary(summary_pb2.Summary(value=[value]), global_step, walltime, log_dir)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        """Log the distribution of ``values`` (any shape). ``bins``: "tensorflow" (TensorBoard's
        exponential buckets), a NumPy rule name ("auto", "fd", ...), a count or the edges."""
        histo = _histogram(_to_numpy(values).astype(np.float64).reshape(-1),
                           _default_bins() if isinstance(bins, str) and bins == "tensorflow"
                           else bins, max_bins)
        value = summary_pb2.Summary.Value(tag=tag, histo=histo)
        self._add_summary(summary_pb2.Summary(value=[value]), global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Log a (Markdown) string, shown in the Text tab."""
        meta = summary_pb2.SummaryMetadata(
            plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text", content=b""))
        tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_STRING,
                                        string_val=[str(text_string).encode("utf-8")],
                                        tensor_shape=_shape_proto([1]))
        value = summary_pb2.Summary.Value(tag=tag + "/text_summary", metadata=meta, tensor=tensor)
        self._add_summary(summary_pb2.Summary(value=[value]), global_step, walltime)

    # -- images, hyperparameters, curves, embeddings -------------------------------------------
    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """Log one image: a tensor/array laid out as ``dataformats`` ("CHW", "HWC", "HW"...),
        uint8 in [0, 255] or floats in [0, 1]; one channel is shown as gray, 4 as RGBA."""
        value = M.image_value(summary_pb2, tag, _to_numpy(img_tensor), dataformats)
        self._add_summary(summary_pb2.Summary(value=[value]), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """Log a batch of images as one grid (8 to a row)."""
        self.add_image(tag, img_tensor, global_step, walltime, dataformats)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """Log a matplotlib figure (or a list of them, as a grid) as an image; ``close`` closes
        the figures once drawn."""
        if isinstance(figure, list):
            images = np.stack([M.figure_to_chw(f, close) for f in figure])
            self.add_image(tag, images, global_step, walltime, "NCHW")
        else:
            self.add_image(tag, M.figure_to_chw(figure, close), global_step, walltime, "CHW")

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        """Log one run of a hyperparameter search (the HParams tab): ``hparam_dict`` maps names
        to numbers, strings, bools or one-element tensors, ``metric_dict`` names to the numbers
        it reached. As in PyTorch, the run goes to a sub-folder ``run_name`` (default: the
        time) with the metrics logged there as scalars."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        summaries = M.hparams_summaries(summary_pb2, hparam_dict, metric_dict,
                                        hparam_domain_discrete)
        log_dir = os.path.join(self.log_dir, run_name or str(time.time()))
        with SummaryWriter(log_dir=log_dir) as w:
            for summary in summaries:
                w._add_summary(summary, global_step)
            for k, v in metric_dict.items():
                w.add_scalar(k, v, global_step)

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127,
                     weights=None, walltime=None):
        """Log a precision-recall curve of ``predictions`` (probabilities in [0, 1]) against
        0/1 ``labels``, at ``num_thresholds`` (at most 127) evenly spaced thresholds."""
        num_thresholds = min(int(num_thresholds), 127)
        data = M.pr_curve(_to_numpy(labels), _to_numpy(predictions), num_thresholds,
                          None if weights is None else _to_numpy(weights))
        value = M.pr_curve_value(summary_pb2, tensor_pb2, _shape_proto, tag, data,
                                 num_thresholds)
        self._add_summary(summary_pb2.Summary(value=[value]), global_step, walltime)

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag="default",
                      metadata_header=None):
        """Log points (N, D) for the Projector tab, with optional labels per point (a list, or
        rows of columns named by ``metadata_header``) and thumbnails ``label_img`` (N, C, H, W)."""
        M.write_embedding(self.log_dir, _to_numpy(mat), metadata,
                          None if label_img is None else _to_numpy(label_img), global_step, tag,
                          metadata_header)

    # -- graphs ---------------------------------------------------------------------------------
    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True,
                  backward=False):
        """Run ``model(*input_to_model)`` once and write its graph for the Graphs tab.

        input_to_model: a tensor, or a tuple/list of positional arguments.
        verbose:        print the graph (protobuf text).
        use_strict_trace: accepted for PyTorch compatibility; nothing is traced, so it has no
                        effect (non-tensor inputs and outputs always work).
        backward:       also write the autograd graph (the graph ``backward()`` runs), shown
                        under the tag "backward". It is the graph a training step builds: ops
                        that only depend on the input are not in it.

        Only ops on tensors that require grad are recorded (the input is recorded as if it
        required grad); buffers and constants appear through the ops that use them.
        """
        del use_strict_trace
        rec = Recording(model, input_to_model)
        graph = _forward_graph(rec)
        if verbose:
            print(graph)
        self._writer().add_event(event_pb2.Event(graph_def=graph.SerializeToString(),
                                                 wall_time=time.time()))
        if backward:
            bgraph = _backward_graph(rec)
            if verbose:
                print(bgraph)
            self.add_graph_def(bgraph, tag=BACKWARD_TAG)

    def add_graph_def(self, graph_def, tag=BACKWARD_TAG, global_step=None, walltime=None):
        """Write a ``GraphDef`` as a tagged op graph (selectable in the Graphs tab's Tag menu)."""
        run_metadata = config_pb2.RunMetadata(function_graphs=[
            config_pb2.RunMetadata.FunctionGraphs(pre_optimization_graph=graph_def)])
        meta = summary_pb2.SummaryMetadata(
            plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name=_GRAPH_PLUGIN,
                                                               content=b"1"),
            data_class=summary_pb2.DATA_CLASS_BLOB_SEQUENCE)
        tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_STRING,
                                        string_val=[run_metadata.SerializeToString()],
                                        tensor_shape=_shape_proto([1]))
        value = summary_pb2.Summary.Value(tag=tag, metadata=meta, tensor=tensor)
        self._add_summary(summary_pb2.Summary(value=[value]), global_step or 0, walltime)

    # -- lifetime ---------------------------------------------------------------------------------
    def flush(self) -> None:
        """Write everything pending to disk."""
        for w in (self._writers or {}).values():
            w.flush()

    def close(self) -> None:
        """Flush and close the event files (a later ``add_*`` opens new ones)."""
        for w in (self._writers or {}).values():
            w.flush()
            w.close()
        self._writers = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


# -- histograms ---------------------------------------------------------------------------------

_BINS: list = []


def _default_bins() -> np.ndarray:
    """TensorFlow's bucket edges: 0 and +-1e-12 * 1.1**k up to 1e20."""
    if not _BINS:
        pos = [1e-12]
        while pos[-1] < 1e20:
            pos.append(pos[-1] * 1.1)
        _BINS.append(np.array([-v for v in reversed(pos)] + [0.0] + pos))
    return _BINS[0]


def _histogram(values, bins, max_bins=None):
    if values.size == 0:
        raise ValueError("add_histogram: the values are empty")
    if not np.isfinite(values).all():
        raise ValueError("add_histogram: the values contain NaN or infinity")
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        step = -(-len(counts) // max_bins)
        pad = (-len(counts)) % step
        counts = np.pad(counts, (0, pad)).reshape(-1, step).sum(axis=1)
        limits = np.append(limits[:-1:step], limits[-1])
    # keep the non-empty range plus one empty bucket on the left: TensorBoard takes each
    # bucket's left edge from the previous bucket's limit
    nz = np.flatnonzero(counts)
    start, end = int(nz[0]), int(nz[-1]) + 1
    if start > 0:
        counts, limits = counts[start - 1:end], limits[start:end + 1]
    else:
        counts, limits = np.concatenate([[0], counts[:end]]), limits[:end + 1]
    return summary_pb2.HistogramProto(
        min=float(values.min()), max=float(values.max()), num=int(values.size),
        sum=float(values.sum()), sum_squares=float(values.dot(values)),
        bucket_limit=limits.tolist(), bucket=counts.astype(np.float64).tolist())


class _Names:
    """Unique node names: ``addmm``, ``addmm_1``, ``addmm_2`` (TensorBoard groups such series)."""

    def __init__(self):
        self.used: set = set()

    def __call__(self, base: str) -> str:
        name, k = base, 0
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.used.add(name)
        return name


def _shape_proto(shape):
    if shape is None:
        return tensor_shape_pb2.TensorShapeProto(unknown_rank=True)
    return tensor_shape_pb2.TensorShapeProto(
        dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=int(s)) for s in shape])


def _attrs(shapes=None, text=None) -> dict:
    attr = {}
    if text is not None:
        attr["attr"] = AttrValue(s=text.encode("utf-8"))
    if shapes is not None:
        attr["_output_shapes"] = AttrValue(list=AttrValue.ListValue(
            shape=[_shape_proto(s) for s in shapes]))
    return attr


def _node(name, op, inputs=(), shapes=None, text=None):
    return node_def_pb2.NodeDef(name=name, op=op, input=list(inputs), attr=_attrs(shapes, text))


def _graph_def(nodes):
    return graph_pb2.GraphDef(node=nodes, versions=versions_pb2.VersionDef(producer=22))


def _op_name(node) -> str:
    """The forward op: ``addmm`` for AddmmBackward0, the class name of a custom Function."""
    cls = type(node)
    fwd = getattr(cls, "_forward_cls", None)
    if fwd is not None:
        return fwd.__name__
    fn_name = getattr(cls, "fn_name", None)
    if fn_name is not None:
        return fn_name()
    return re.sub(r"Backward\d*$", "", cls.__name__) or cls.__name__


def _describe_attrs(node) -> str:
    items = [("grad_fn", G.node_label(node))] + list(G.node_attrs(node).items())
    return "{ " + ", ".join(f"{k} : {v}" for k, v in items) + " }"


def _leaf_name(rec, leaf, names, what):
    """Node name of a leaf: its input IO node, its parameter, or a plain tensor."""
    if id(leaf) in rec.inputs:
        return rec.inputs[id(leaf)]
    if id(leaf) in rec.params:
        scope, attr = rec.param_scope(leaf)
        return names(f"{scope}/{what.format(attr)}")
    return names(f"{rec.root}/{what.format('tensor')}")


def _forward_graph(rec):
    """GraphDef of the forward: IO nodes, parameters, and one node per recorded op."""
    names = _Names()
    out = []
    for t in rec.input_tensors:
        names.used.add(rec.inputs[id(t)])
        out.append(_node(rec.inputs[id(t)], "IO Node", shapes=[tuple(t.shape)]))
    node_name: dict = {}
    for acc in rec.accumulators:
        leaf = acc.variable
        name = node_name[id(acc)] = _leaf_name(rec, leaf, names, "{}")
        if id(leaf) not in rec.inputs:
            op = "Parameter" if id(leaf) in rec.params else "Tensor"
            out.append(_node(name, op, shapes=[tuple(leaf.shape)]))
    for n in rec.ops:
        name = node_name[id(n)] = names(f"{rec.scope(n)}/{_op_name(n)}")
        inputs = [node_name[id(m)] + (f":{nr}" if nr and not G.is_accumulator(m) else "")
                  for m, nr in G.inputs(n) if m is not None]
        shapes = [rec.shape(n, k) for k in range(rec.n_outputs(n))]
        out.append(_node(name, _op_name(n), inputs, shapes, _describe_attrs(n)))
    for i, t in enumerate(rec.outputs):
        src = []
        if t.grad_fn is not None:
            src = [node_name[id(t.grad_fn)] + (f":{t.output_nr}" if t.output_nr else "")]
        elif id(t) in rec.inputs:
            src = [rec.inputs[id(t)]]
        else:
            acc = next((a for a in rec.accumulators if a.variable is t), None)
            src = [node_name[id(acc)]] if acc is not None else []
        out.append(_node(f"output/output.{i + 1}", "IO Node", src, [tuple(t.shape)]))
    return _graph_def(out)


def _backward_graph(rec):
    """GraphDef of the autograd graph: gradients flow from the outputs' seeds through each
    ``<Op>Backward`` node into the ``AccumulateGrad`` of each parameter."""
    live = set()   # nodes that exist without the input requiring grad
    for acc in rec.accumulators:
        if id(acc.variable) not in rec.inputs:
            live.add(id(acc))
    for n in rec.ops:   # creation order: a node's inputs come before it
        if any(m is not None and id(m) in live for m, _ in G.inputs(n)):
            live.add(id(n))
    names = _Names()
    node_name: dict = {}
    consumers: dict = {}
    seeds: dict = {}
    for i, t in enumerate(rec.outputs):
        if t.grad_fn is not None and id(t.grad_fn) in live:
            seeds.setdefault(id(t.grad_fn), []).append(f"output/grad_output.{i + 1}")
    ops = [n for n in rec.ops if id(n) in live]
    for n in ops:
        node_name[id(n)] = names(f"{rec.scope(n)}/{G.node_label(n)}")
        for k, (m, _) in enumerate(G.inputs(n)):
            if m is not None and id(m) in live:
                consumers.setdefault(id(m), []).append(f"{node_name[id(n)]}"
                                                       + (f":{k}" if k else ""))
    out = []
    for i, t in enumerate(rec.outputs):
        if t.grad_fn is not None and id(t.grad_fn) in live:
            names.used.add(f"output/grad_output.{i + 1}")
            out.append(_node(f"output/grad_output.{i + 1}", "IO Node", shapes=[tuple(t.shape)]))
    for n in ops:
        shapes = [rec.shape(m, nr) if m is not None and id(m) in live else None
                  for m, nr in G.inputs(n)]
        out.append(_node(node_name[id(n)], G.node_label(n),
                         seeds.get(id(n), []) + consumers.get(id(n), []), shapes,
                         _describe_attrs(n)))
    for acc in rec.accumulators:
        if id(acc) in live:
            name = _leaf_name(rec, acc.variable, names, "AccumulateGrad[{}]")
            out.append(_node(name, "AccumulateGrad", consumers.get(id(acc), []),
                             text="{ variable : " + (rec.params.get(id(acc.variable)) or "tensor")
                             + " }"))
    return _graph_def(out)
