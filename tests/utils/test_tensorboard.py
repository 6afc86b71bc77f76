"""gpugrad.utils.tensorboard: event files read back with the tensorboard package's own reader,
and one end-to-end run of a real TensorBoard server on 127.0.0.1."""
from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import numpy as np
import pytest
from conftest import SimpleNet

import gpugrad
from gpugrad import nn
from gpugrad.utils import tensorboard as tb

needs_tb = pytest.mark.skipif(importlib.util.find_spec("tensorboard") is None,
                              reason="tensorboard not installed (pip install tensorboard)")


class Net(nn.Module):
    """Seed 002's network: y = x @ w + b."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(gpugrad.randn(2, 1))
        self.b = nn.Parameter(gpugrad.zeros(1, 1))

    def forward(self, x):
        return x @ self.w + self.b


def accumulator(path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(str(path), size_guidance={"scalars": 0, "histograms": 0,
                                                     "tensors": 0})
    acc.Reload()
    return acc


def tagged_graph(acc, tag="backward"):
    from tensorboard.compat.proto.config_pb2 import RunMetadata
    (event,) = acc.Tensors(tag)
    run_metadata = RunMetadata.FromString(event.tensor_proto.string_val[0])
    return run_metadata.function_graphs[0].pre_optimization_graph


def by_name(graph):
    return {n.name: n for n in graph.node}


def shapes(node):
    return [[d.size for d in s.dim] for s in node.attr["_output_shapes"].list.shape]


def test_missing_tensorboard_says_how_to_install(monkeypatch):
    monkeypatch.setattr(tb, "_IMPORT_ERROR", ImportError("No module named 'tensorboard'"))
    with pytest.raises(ImportError, match="pip install tensorboard"):
        tb.SummaryWriter("unused")


@needs_tb
def test_scalars_read_back(tmp_path):
    with tb.SummaryWriter(tmp_path) as w:
        w.add_scalar("loss", gpugrad.tensor(1.5), 0)
        w.add_scalar("loss", np.float32(0.75), 1)
        w.add_scalar("loss", 0.5, global_step=2, walltime=123.0)
        w.add_scalars("lr", {"fast": 0.1, "slow": 0.01}, 5)
    acc = accumulator(tmp_path)
    assert [(e.step, e.value) for e in acc.Scalars("loss")] == [(0, 1.5), (1, 0.75), (2, 0.5)]
    assert acc.Scalars("loss")[2].wall_time == 123.0
    for key, value in (("fast", 0.1), ("slow", 0.01)):
        (e,) = accumulator(tmp_path / f"lr_{key}").Scalars("lr")
        assert e.step == 5 and e.value == pytest.approx(value)
    with pytest.raises(ValueError, match="one element"):
        tb.SummaryWriter(tmp_path / "x").add_scalar("bad", gpugrad.ones(2))


@needs_tb
def test_histogram_and_text_read_back(tmp_path):
    values = np.arange(100, dtype=np.float32)
    with tb.SummaryWriter(tmp_path) as w:
        w.add_histogram("weights", gpugrad.tensor(values), 3)
        w.add_histogram("coarse", values, 3, bins=10)
        w.add_text("note", "hello *gpugrad*", 3)
    acc = accumulator(tmp_path)
    (h,) = acc.Histograms("weights")
    hv = h.histogram_value
    assert h.step == 3 and (hv.num, hv.min, hv.max, hv.sum) == (100, 0, 99, 4950)
    assert hv.sum_squares == float((values.astype(np.float64) ** 2).sum())
    assert sum(hv.bucket) == 100 and hv.bucket_limit == sorted(hv.bucket_limit)
    assert sum(acc.Histograms("coarse")[0].histogram_value.bucket) == 100
    (t,) = acc.Tensors("note/text_summary")
    assert t.tensor_proto.string_val == [b"hello *gpugrad*"]


@needs_tb
def test_add_graph_simplenet_module_scopes(tmp_path):
    model = SimpleNet()
    with tb.SummaryWriter(tmp_path) as w:
        w.add_graph(model, gpugrad.randn(1, 10))
    nodes = by_name(accumulator(tmp_path).Graph())
    for name, op, shape in [("input/x", "IO Node", [1, 10]),
                            ("SimpleNet/Linear[fc1]/weight", "Parameter", [5, 10]),
                            ("SimpleNet/Linear[fc1]/bias", "Parameter", [5]),
                            ("SimpleNet/Linear[fc2]/weight", "Parameter", [1, 5]),
                            ("SimpleNet/ReLU[relu]/relu", "relu", [1, 5]),
                            ("output/output.1", "IO Node", [1, 1])]:
        assert nodes[name].op == op and shapes(nodes[name]) == [shape]
    scopes = {n.rpartition("/")[0] for n in nodes}
    assert scopes == {"input", "output", "SimpleNet/Linear[fc1]", "SimpleNet/ReLU[relu]",
                      "SimpleNet/Linear[fc2]"}
    # output <- fc2's op <- relu <- fc1's op <- input, every op with its output shape
    (fc2_op,) = nodes["output/output.1"].input
    assert fc2_op.startswith("SimpleNet/Linear[fc2]/") and shapes(nodes[fc2_op]) == [[1, 1]]
    assert "SimpleNet/ReLU[relu]/relu" in nodes[fc2_op].input
    (fc1_op,) = nodes["SimpleNet/ReLU[relu]/relu"].input
    assert fc1_op.startswith("SimpleNet/Linear[fc1]/") and shapes(nodes[fc1_op]) == [[1, 5]]
    assert "input/x" in nodes[fc1_op].input
    assert "AddmmBackward0" in nodes[fc1_op].attr["attr"].s.decode()
    for name, node in nodes.items():       # every edge points at a node of the graph
        assert all(i.split(":")[0] in nodes for i in node.input), name


@needs_tb
def test_add_graph_net_seed_002(tmp_path):
    with tb.SummaryWriter(tmp_path) as w:
        w.add_graph(Net(), input_to_model=gpugrad.rand(10, 2))
    nodes = by_name(accumulator(tmp_path).Graph())
    assert {"input/x", "Net/w", "Net/b", "output/output.1"} <= set(nodes)
    ops = {n: node for n, node in nodes.items() if node.op not in ("IO Node", "Parameter")}
    assert all(n.startswith("Net/") for n in ops) and len(ops) == 2
    (add,) = nodes["output/output.1"].input
    assert "Net/b" in nodes[add].input and shapes(nodes[add]) == [[10, 1]]
    (mm,) = [i for i in nodes[add].input if i != "Net/b"]
    assert set(nodes[mm].input) == {"input/x", "Net/w"}


@needs_tb
def test_add_graph_backward(tmp_path, device):
    model = SimpleNet().to(device)
    model.train()
    with tb.SummaryWriter(tmp_path) as w:
        w.add_graph(model, gpugrad.randn(1, 10, device=device), backward=True)
        w.add_histogram("fc1.weight", model.fc1.weight, 0)
    assert model.training and model.fc1.training
    assert all(p.grad is None for p in model.parameters())     # nothing accumulated
    graph = tagged_graph(accumulator(tmp_path))
    nodes = by_name(graph)
    assert {"output/grad_output.1", "SimpleNet/ReLU[relu]/ReluBackward0",
            "SimpleNet/Linear[fc1]/AccumulateGrad[weight]",
            "SimpleNet/Linear[fc2]/AccumulateGrad[bias]"} <= set(nodes)
    assert not any(n.startswith("input/") for n in nodes)       # the input needs no grad
    assert sum(n.op == "AccumulateGrad" for n in nodes.values()) == 4
    # gradients flow from the output's seed to the parameters
    (fc2,) = [n for n in nodes if n.startswith("SimpleNet/Linear[fc2]/Addmm")]
    assert list(nodes[fc2].input) == ["output/grad_output.1"]
    assert nodes["SimpleNet/ReLU[relu]/ReluBackward0"].input[0].startswith(fc2)
    assert shapes(nodes["SimpleNet/ReLU[relu]/ReluBackward0"]) == [[1, 5]]
    assert accumulator(tmp_path).Histograms("fc1.weight")[0].histogram_value.num == 50


@needs_tb
def test_add_graph_non_tensor_io_and_reopen_after_close(tmp_path):
    class DictNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)

        def forward(self, x, scale=None, mode="sum"):
            return {"out": self.fc(x), "aux": None, "mode": mode}

    w = tb.SummaryWriter(tmp_path)
    w.close()
    w.add_graph(DictNet(), (gpugrad.randn(4, 3), None, "mean"))   # reopens a new event file
    w.close()
    nodes = by_name(accumulator(tmp_path).Graph())
    assert {"input/x", "DictNet/Linear[fc]/weight", "output/output.1"} <= set(nodes)
    assert shapes(nodes["output/output.1"]) == [[4, 2]]


@needs_tb
def test_default_log_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with tb.SummaryWriter(comment="_demo") as w:
        w.add_scalar("a", 1.0, 0)
    (run,) = os.listdir(tmp_path / "runs")
    assert run.endswith("_demo") and w.get_logdir() == os.path.join("runs", run)


# -- a real TensorBoard ---------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@needs_tb
def test_tensorboard_server_end_to_end(tmp_path):
    from google.protobuf import text_format
    from tensorboard.compat.proto.graph_pb2 import GraphDef

    with tb.SummaryWriter(tmp_path / "simplenet") as w:
        w.add_graph(SimpleNet(), gpugrad.randn(1, 10), backward=True)
        for step in range(3):
            w.add_scalar("loss", 1.0 / (step + 1), step)

    port = _free_port()
    log = open(tmp_path / "tensorboard.log", "w+b")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tensorboard.main", "--logdir", str(tmp_path), "--host",
         "127.0.0.1", "--port", str(port), "--load_fast=false", "--reload_interval", "1"],
        stdout=log, stderr=subprocess.STDOUT)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback only

    def get(path):
        with opener.open(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.read().decode()

    try:
        deadline = time.monotonic() + 25
        runs = []
        while "simplenet" not in runs:
            if proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                pytest.fail("tensorboard did not serve the run: "
                            + log.read().decode(errors="replace")[-2000:])
            try:
                runs = json.loads(get("/data/runs"))
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            time.sleep(0.25)
        info = json.loads(get("/data/plugin/graphs/info"))
        assert info["simplenet"]["run_graph"] is True
        assert info["simplenet"]["tags"]["backward"]["op_graph"] is True
        graph = text_format.Parse(get("/data/plugin/graphs/graph?run=simplenet"), GraphDef())
        names = {n.name for n in graph.node}
        assert {"input/x", "SimpleNet/ReLU[relu]/relu", "SimpleNet/Linear[fc1]/weight",
                "output/output.1"} <= names
        backward = text_format.Parse(
            get("/data/plugin/graphs/graph?run=simplenet&tag=backward"), GraphDef())
        assert "SimpleNet/Linear[fc1]/AccumulateGrad[weight]" in {n.name for n in backward.node}
        query = urllib.parse.urlencode({"run": "simplenet", "tag": "loss"})
        scalars = json.loads(get(f"/data/plugin/scalars/scalars?{query}"))
        assert [(s[1], round(s[2], 6)) for s in scalars] == [(0, 1.0), (1, 0.5), (2, 0.333333)]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
