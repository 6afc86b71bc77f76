"""gpugrad.viz's Graphviz picture of the seed graphs, asserted structurally, and a 100,000-deep
chain (no recursion anywhere)."""
from __future__ import annotations

import re
import shutil

import pytest
from conftest import SimpleNet

import gpugrad
from gpugrad import nn
from gpugrad.viz import dot as dot_mod
from gpugrad.viz import make_dot, module_scopes
from tests.viz._seed_graphs import seed_abc, seed_xy

needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="Graphviz 'dot' program not installed "
                                      "(Debian/Ubuntu: apt-get install graphviz)")


# -- DOT -------------------------------------------------------------------------------------------

_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s\]]+)', re.S)


def parse(dot):
    """(nodes {id: attrs}, edges [(tail, head, attrs)], clusters {name: [ids]}) of a graph."""
    nodes, edges, clusters, stack = {}, [], {}, []
    for stmt in dot.body:
        s = stmt.strip()
        if s.startswith("subgraph"):
            stack.append(s.split()[1].strip('"'))
            clusters[stack[-1]] = []
            continue
        if s == "}":
            stack.pop()
            continue
        if s.startswith("graph ["):
            continue
        m = re.match(r'^("[^"]*"|\S+) -> ("[^"]*"|\S+)(?: \[(.*)\])?$', s, re.S)
        if m:
            attrs = {k: v.strip('"') for k, v in _ATTR.findall(m.group(3) or "")}
            edges.append((m.group(1).strip('"'), m.group(2).strip('"'), attrs))
            continue
        m = re.match(r'^("[^"]*"|\S+) \[(.*)\]$', s, re.S)
        key = m.group(1).strip('"')
        nodes[key] = {k: v.strip('"') for k, v in _ATTR.findall(m.group(2))}
        for c in stack:
            clusters[c].append(key)
    return nodes, edges, clusters


def edge_set(edges):
    return {(t, h) for t, h, _ in edges}


def test_dot_seed_xy_torchviz_conventions():
    out, params = seed_xy()
    x, y = params["x"], params["y"]
    add, (mul, _), (acc_x, _) = out.grad_fn, *out.grad_fn.next_functions
    acc_y = mul.next_functions[1][0]
    nodes, edges, _ = parse(make_dot(out, params=params))
    i = lambda o: str(id(o))
    assert nodes[i(out)] == {"label": "\n (1)", "fillcolor": "darkolivegreen1"}
    assert nodes[i(x)] == {"label": "x\n (1)", "fillcolor": "lightblue"}
    assert nodes[i(y)]["label"] == "y\n (1)"
    assert nodes[i(add)] == {"label": "AddBackward0"}
    assert nodes[i(mul)] == {"label": "MulBackward0"}
    assert nodes[i(acc_x)] == {"label": "AccumulateGrad"}
    assert len(nodes) == 7            # x's accumulator appears once: one object, two edges
    assert edge_set(edges) == {(i(add), i(out)), (i(mul), i(add)), (i(acc_x), i(add)),
                               (i(acc_x), i(mul)), (i(acc_y), i(mul)), (i(x), i(acc_x)),
                               (i(y), i(acc_y))}


def test_dot_seed_abc_and_unnamed_leaves():
    out, params = seed_abc()
    nodes, edges, _ = parse(make_dot(out))
    labels = sorted(n["label"] for n in nodes.values())
    assert labels.count("AccumulateGrad") == 5
    assert labels.count("AddBackward0") == 2
    assert "DivBackward0" in labels and "MulBackward0" in labels
    blue = [n["label"] for n in nodes.values() if n.get("fillcolor") == "lightblue"]
    assert sorted(blue) == ["\n (1)"] * 2 + ["\n (2)"] * 3   # unnamed: empty name, like torchviz
    assert len(edges) == 5 + 5 + 3 + 1     # var->acc, acc->op, op->op, op->output


def test_dot_show_saved_and_attrs(device):
    out, params = seed_xy(device)
    mul = out.grad_fn.next_functions[0][0]
    nodes, edges, _ = parse(make_dot(out, params=params, show_saved=True, show_attrs=True))
    orange = {k: n["label"] for k, n in nodes.items() if n.get("fillcolor") == "orange"}
    assert sorted(orange.values()) == ["other\n (1)", "self\n (1)"]
    saved_edges = [(t, h) for t, h, a in edges if a.get("dir") == "none"]
    assert sorted(h for _, h in saved_edges) == sorted(orange)
    assert {t for t, _ in saved_edges} == {str(id(mul))}
    label = nodes[str(id(mul))]["label"]
    assert label.startswith("MulBackward0\n---") and "self : [saved tensor]" in label
    assert "alpha: 1" in nodes[str(id(out.grad_fn))]["label"]


def test_dot_simplenet_params_and_collapse():
    model = SimpleNet()
    params = dict(model.named_parameters())
    with module_scopes(model):
        out = model(gpugrad.randn(1, 10))
    nodes, edges, clusters = parse(make_dot(out, params=params))
    blue = sorted(n["label"] for n in nodes.values() if n.get("fillcolor") == "lightblue")
    assert blue == ["fc1.bias\n (5)", "fc1.weight\n (5, 10)", "fc2.bias\n (1)",
                    "fc2.weight\n (1, 5)"]
    assert sorted(n["label"] for n in nodes.values() if "fillcolor" not in n) == [
        "AccumulateGrad"] * 4 + ["AddmmBackward0"] * 2 + ["ReluBackward0"] + ["TBackward0"] * 2
    assert not clusters

    dot = make_dot(out, params=params, collapse=True, rankdir="LR")
    assert "rankdir=LR" in dot.source and 'label="fc1 (Linear)"' in dot.source
    nodes, edges2, clusters = parse(dot)
    assert set(clusters) == {"cluster_fc1", "cluster_relu", "cluster_fc2"}
    fc1 = {nodes[k]["label"] for k in clusters["cluster_fc1"]}
    assert fc1 == {"AddmmBackward0", "TBackward0", "AccumulateGrad", "fc1.weight\n (5, 10)",
                   "fc1.bias\n (5)"}
    assert edge_set(edges2) == edge_set(edges)      # grouping does not change the graph

    nodes, edges3, _ = parse(make_dot(out, params=params, collapse="fc1"))
    assert nodes["module fc1"]["label"] == "fc1 (Linear)\n6 nodes"
    assert not any(n["label"] == "fc1.weight\n (5, 10)" for n in nodes.values())
    relu = str(id(out.grad_fn.next_functions[1][0]))
    assert ("module fc1", relu) in edge_set(edges3)


def test_dot_collapse_without_scopes_uses_param_names():
    model = SimpleNet()
    out = model(gpugrad.randn(1, 10))
    _, _, clusters = parse(make_dot(out, params=dict(model.named_parameters()), collapse=True))
    assert set(clusters) == {"cluster_fc1", "cluster_fc2"}
    assert all(len(v) == 4 for v in clusters.values())   # 2 parameters + 2 accumulators


def test_dot_collapse_nested_and_by_depth():
    model = nn.Sequential(nn.Linear(3, 4), nn.Sequential(nn.Linear(4, 4), nn.ReLU()),
                          nn.Linear(4, 1))
    params = dict(model.named_parameters())
    with module_scopes(model):
        out = model(gpugrad.randn(2, 3))
    dot = make_dot(out, params=params, collapse=True)
    _, _, clusters = parse(dot)
    assert set(clusters) == {"cluster_0", "cluster_1", "cluster_1.0", "cluster_1.1", "cluster_2"}
    assert set(clusters["cluster_1.0"]) < set(clusters["cluster_1"])
    assert 'label="1 (Sequential)"' in dot.source
    nodes, edges, _ = parse(make_dot(out, params=params, collapse=1))
    assert sorted(k for k in nodes if k.startswith("module ")) == ["module 0", "module 1",
                                                                   "module 2"]
    assert edge_set(edges) == {("module 0", "module 1"), ("module 1", "module 2"),
                               ("module 2", str(id(out)))}


def test_dot_max_depth_and_rankdir_validation():
    out, _ = seed_abc()
    nodes, edges, _ = parse(make_dot(out, max_depth=1))
    labels = sorted(n["label"] for n in nodes.values())
    assert labels == ["\n (2)", "... (2 more)", "... (2 more)", "AddBackward0", "DivBackward0",
                      "MulBackward0"]
    with pytest.raises(ValueError, match="rankdir"):
        make_dot(out, rankdir="XY")


def test_dot_view_base_and_tuple_outputs():
    x = gpugrad.randn(3, 4, requires_grad=True)
    b = x * 2
    v = b[0]
    nodes, edges, _ = parse(make_dot(v))
    assert nodes[str(id(b))]["fillcolor"] == "darkolivegreen3"
    assert (str(id(b)), str(id(v)), {"style": "dotted"}) in edges
    nodes, _, _ = parse(make_dot((x.sum(), x.mean())))
    assert sum(n.get("fillcolor") == "darkolivegreen1" for n in nodes.values()) == 2


def test_dot_auto_size():
    x = gpugrad.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(200):
        y = y * 1.0
    dot = make_dot(y)
    size = float(dot.graph_attr["size"].split(",")[0])
    assert size == pytest.approx(0.15 * len(dot.body))
    assert make_dot(x * 2).graph_attr["size"] == "12,12"


def test_dot_without_graphviz_package(monkeypatch, tmp_path):
    out, params = seed_xy()
    real = make_dot(out, params=params, show_saved=True)
    monkeypatch.setattr(dot_mod, "_graphviz", None)
    dot = make_dot(out, params=params, show_saved=True)
    assert isinstance(dot, dot_mod.Digraph)
    if type(real) is not dot_mod.Digraph:
        assert dot.source == real.source         # same DOT text either way
    path = dot.save(tmp_path / "g.gv")
    assert (tmp_path / "g.gv").read_text() == dot.source and str(path).endswith("g.gv")
    monkeypatch.setattr(dot_mod.shutil, "which", lambda name: None)
    with pytest.raises(dot_mod.ExecutableNotFound, match="apt-get install graphviz"):
        dot.render(tmp_path / "g", format="svg")


@needs_dot
@pytest.mark.parametrize("package", [True, False], ids=["graphviz-package", "fallback"])
def test_dot_render_svg(package, monkeypatch, tmp_path):
    if package:
        pytest.importorskip("graphviz")
    else:
        monkeypatch.setattr(dot_mod, "_graphviz", None)
    model = SimpleNet()
    out = model(gpugrad.randn(1, 10))
    dot = make_dot(out, params=dict(model.named_parameters()), collapse=True)
    path = dot.render(str(tmp_path / "simplenet"), format="svg")
    svg = open(path, encoding="utf-8").read()
    assert "<svg" in svg and "fc1.weight" in svg and "AddmmBackward0" in svg


# -- a very deep graph -----------------------------------------------------------------------------

def test_deep_chain_dot(chain):
    x, y = chain
    dot = make_dot(y, params={"x": x})
    source = dot.source
    assert source.count(" -> ") == 100_002                    # output, chain, leaf edges
    assert source.count("[label=MulBackward0]") == 100_000
    assert f"{id(x)} [label=\"x\n (1)\" fillcolor=lightblue]" in source
