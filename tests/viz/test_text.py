"""gpugrad.viz's text tree of the seed graphs, asserted structurally, and a 100,000-deep chain
(no recursion anywhere)."""
from __future__ import annotations

import re

from conftest import SimpleNet, my_relu

import gpugrad
from gpugrad.viz import format_graph, module_scopes, print_graph
from tests.viz._seed_graphs import seed_abc, seed_xy


def tree(text):
    """Parse the text view into (depth, label) pairs: a label starts at column 4 * depth."""
    out = []
    for line in text.splitlines():
        pos = re.search(r"[A-Za-z.\[]", line).start()
        out.append((pos // 4, line[pos:]))
    return out


# -- text ------------------------------------------------------------------------------------------

def test_text_tree_seed_xy():
    out, params = seed_xy()
    text = format_graph(out, params=params)
    assert text.splitlines() == [
        "AddBackward0",
        "├── MulBackward0",
        "│   ├── AccumulateGrad  x (1,) float32",
        "│   └── AccumulateGrad  y (1,) float32",
        "└── AccumulateGrad  x (1,) float32",
    ]
    # the leaf is shown under both of its consumers (its gradient is accumulated twice)
    assert text.count("AccumulateGrad  x") == 2


def test_text_dag_shows_shared_leaf_once():
    out, params = seed_xy()
    lines = format_graph(out, params=params, dag=True).splitlines()
    assert sum("AccumulateGrad" in ln and " x (1,)" in ln for ln in lines) == 1
    first = next(ln for ln in lines if " x (1,)" in ln)
    k = re.search(r"#(\d+)", first).group(1)
    assert lines[-1] == f"└── AccumulateGrad #{k} (see above)"
    assert [d for d, _ in tree("\n".join(lines))] == [0, 1, 2, 2, 1]


def test_text_seed_abc_structure():
    out, params = seed_abc()
    got = tree(format_graph(out, params=params))
    names = [(d, lab.split("  ")[0]) for d, lab in got]
    assert names == [(0, "DivBackward0"), (1, "AddBackward0"), (2, "AddBackward0"),
                     (3, "AccumulateGrad"), (3, "AccumulateGrad"), (2, "AccumulateGrad"),
                     (1, "MulBackward0"), (2, "AccumulateGrad"), (2, "AccumulateGrad")]
    leaves = [lab.split("  ")[1].split()[0] for _, lab in got if lab.startswith("Accumulate")]
    assert leaves == ["a", "b", "c", "x", "y"]


def test_text_matches_next_functions():
    """The tree is the engine's graph: children are exactly next_functions, in order."""
    out, _ = seed_abc()
    lines = format_graph(out.grad_fn).splitlines()
    expected = [type(n).__name__ for n, _ in out.grad_fn.next_functions]
    assert [ln[4:].split()[0] for ln in lines if re.match(r"^[├└]── ", ln)] == expected


def test_text_show_saved_and_freed(device):
    out, params = seed_xy(device)
    text = format_graph(out, params=params, show_saved=True)
    mul = next(ln for ln in text.splitlines() if "MulBackward0" in ln)
    assert mul.endswith("saved: self (1,) float32, other (1,) float32")
    assert text.splitlines()[-1] == "-- 4 nodes, 2 saved values, 8 B saved"
    out.backward()
    text = format_graph(out, show_saved=True)
    assert "MulBackward0  saved: freed" in text
    assert "AddBackward0  saved" not in text          # Add keeps nothing for backward
    assert "1 nodes' saved values freed by backward" in text.splitlines()[-1]


def test_text_options():
    out, params = seed_abc()
    cut = format_graph(out, max_depth=1, ascii=True).splitlines()
    assert cut[0] == "DivBackward0"
    assert cut[1].startswith("|-- AddBackward0") and cut[2] == "|   `-- ... (2 more)"
    assert format_graph(out, max_lines=3).splitlines()[-1].startswith("... output cut at 3")
    no_grad = gpugrad.tensor([1.0]) * 2
    assert format_graph(no_grad).startswith("(no graph")


def test_print_graph(capsys):
    out, _ = seed_xy()
    print_graph(out)
    assert capsys.readouterr().out.splitlines()[0] == "AddBackward0"


def test_text_multi_output_and_custom_function():
    MyReLU = my_relu(gpugrad)
    t = gpugrad.arange(4.0, requires_grad=True)
    a, b = t.split(2)
    out = MyReLU.apply(a * b)
    text = format_graph(out, show_saved=True)
    lines = text.splitlines()
    assert lines[0].startswith("MyReLUBackward  saved: saved_tensors[0] (2,) float32")
    assert any("SplitBackward0 (output 1)" in ln for ln in lines)


def test_text_simplenet_module_scopes():
    model = SimpleNet()
    with module_scopes(model):
        out = model(gpugrad.randn(1, 10))
    text = format_graph(out, params=dict(model.named_parameters()))
    lines = text.splitlines()
    assert lines[0] == "AddmmBackward0  [fc2]"
    assert "ReluBackward0  [relu]" in text
    assert "AccumulateGrad  fc1.weight (5, 10) float32" in text
    assert sum("[fc1]" in ln for ln in lines) == 2      # addmm and t of fc1
    # hooks are gone afterwards
    assert not model.fc1._forward_hooks and not model.fc1._forward_pre_hooks


# -- a very deep graph -----------------------------------------------------------------------------

def test_deep_chain_text(chain):
    x, y = chain
    text = format_graph(y, params={"x": x})
    lines = text.splitlines()
    assert len(lines) == 100_001
    assert lines[0] == "MulBackward0"
    assert lines[-1].endswith("[depth 100000] AccumulateGrad  x (1,) float32")
    assert max(len(ln) for ln in lines) < 250                 # indentation is capped
    dag = format_graph(y, dag=True).splitlines()
    assert len(dag) == 100_001 and dag[-1].endswith("AccumulateGrad #100001  (1,) float32")
