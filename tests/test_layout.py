"""The layout rules of docs/architecture.md, checked on the source: layers point one way, files
are named by the concept they hold, and no file outgrows a readable size.

Layers, lowest first (a module may import its own layer and the layers below it):

0 backend      the array module, the bfloat16 dtype, the CUDA runtime, kernels, grad-mode state,
               hook handles
1 tensor       Tensor, dtype promotion, storage, creation, printing, devices and generators, the
               registry of public names (_exports)
2 autograd     the graph, the engine, saved-tensor hooks, anomaly mode, backward fusion
3 ops          every differentiable op, the in-place machinery, Tensor's methods, linalg, special
4 autograd API custom Functions, forward AD, functional transforms, gradcheck, func, amp, the
               process-wide switches of the root namespace (_runtime)
5 functional   nn.functional
6 nn / optim   modules, parameters, init, nn.utils, optimizers and schedulers
7 top          utils, viz, bench, train, distributions, profiler, serialization, the root package

A module-level import that points up fails. A function-local import that points up runs only
when the function is called, so it is allowed, but only with a one-line reason in a comment
``# layering: <why>`` on the import's first line or the line above it.
"""
from __future__ import annotations

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "gpugrad"

# (layer name, module prefixes); the longest matching prefix decides a module's layer
LAYERS = [
    ("backend", ("gpugrad._backend", "gpugrad._bfloat16", "gpugrad._host_memory",
                 "gpugrad._parallel", "gpugrad._cuda_kernels", "gpugrad._cpu_kernels",
                 "gpugrad.kernels",
                 "gpugrad.utils.hooks", "gpugrad.autograd.grad_mode")),
    ("tensor", ("gpugrad.tensor", "gpugrad._promotion", "gpugrad.storage", "gpugrad._creation",
                "gpugrad._format", "gpugrad._dlpack", "gpugrad._dtype_info", "gpugrad._windows",
                "gpugrad._memory_format", "gpugrad.cuda", "gpugrad.amp._state",
                "gpugrad._exports", "gpugrad._arguments", "gpugrad.distributed")),
    ("autograd", ("gpugrad.autograd.graph", "gpugrad.autograd.engine",
                  "gpugrad.autograd.anomaly", "gpugrad.autograd.saved_hooks",
                  "gpugrad.autograd.fusion", "gpugrad.autograd._trace")),
    ("ops", ("gpugrad.ops", "gpugrad.tensor_inplace", "gpugrad.linalg", "gpugrad.special")),
    ("autograd API", ("gpugrad.autograd", "gpugrad.func", "gpugrad.amp", "gpugrad._runtime")),
    ("functional", ("gpugrad.nn.functional",)),
    ("nn / optim", ("gpugrad.nn", "gpugrad.optim")),
    ("top", ("gpugrad", "gpugrad.utils", "gpugrad.viz", "gpugrad.bench", "gpugrad.train",
             "gpugrad.distributions", "gpugrad.profiler", "gpugrad.autograd.profiler",
             "gpugrad.serialization", "gpugrad._serialization_torch",
             "gpugrad._serialization_safetensors", "gpugrad.datasets",
             "gpugrad.backends", "gpugrad.accelerator", "gpugrad.onnx",
             "gpugrad.distributed.run", "gpugrad.version", "gpugrad.__main__")),
]

BAD_NAME = re.compile(r"(^|_)(more|extra|misc|remaining|last|new|compat)(_|$)")
MAX_LINES = 1000
BUDGETS = {"gpugrad/autograd/engine.py": 200}   # the engine stays readable in one sitting
REASON = re.compile(r"#\s*layering:\s*\S")


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str) -> int | None:
    best = None
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and (best is None or len(p) > best[1]):
                best = (i, len(p))
    return None if best is None else best[0]


def _targets(module: str, is_pkg: bool, node) -> list[str]:
    """The gpugrad modules an import statement reads (a name imported from a package counts as
    the submodule when there is one)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "gpugrad"]
    if node.level == 0:
        base = node.module or ""
    else:
        pkg = module.split(".") if is_pkg else module.split(".")[:-1]
        pkg = pkg[: len(pkg) - (node.level - 1)]
        base = ".".join(pkg + ([node.module] if node.module else []))
    if base.split(".")[0] != "gpugrad":
        return []
    return sorted({f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                   for a in node.names})


def _walk(node, module, is_pkg, lines, local, found):
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            for target in _targets(module, is_pkg, child):
                found.append((module, target, child.lineno, local, lines))
        inner = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        _walk(child, module, is_pkg, lines, inner, found)


def imports():
    """(module, target, line, function-local, source lines) for every gpugrad import."""
    found = []
    for module, path in MODULES.items():
        text = path.read_text()
        _walk(ast.parse(text), module, path.name == "__init__.py", text.splitlines(), False,
              found)
    return found


def _upward(module, target):
    a, b = layer_of(module), layer_of(target)
    return a is not None and b is not None and b > a


def test_every_module_has_a_layer():
    assert [m for m in MODULES if layer_of(m) is None] == []


def test_no_module_level_import_points_up():
    bad = [f"{m}:{line} imports {t} ({LAYERS[layer_of(m)][0]} -> {LAYERS[layer_of(t)][0]})"
           for m, t, line, local, _ in imports() if not local and _upward(m, t)]
    assert bad == [], "module-level imports that point up a layer:\n" + "\n".join(bad)


def test_function_local_upward_imports_say_why():
    bad = []
    for m, t, line, local, lines in imports():
        if local and _upward(m, t):
            here = lines[line - 1]
            above = lines[line - 2] if line > 1 else ""
            if not (REASON.search(here) or REASON.search(above)):
                bad.append(f"{m}:{line} imports {t}")
    assert bad == [], ("function-local imports that point up a layer need a `# layering: "
                       "<why>` comment (or should go):\n" + "\n".join(bad))


def test_files_are_named_by_concept():
    bad = [p.relative_to(ROOT).as_posix()
           for top in ("gpugrad", "tests")
           for p in (ROOT / top).rglob("*.py") if BAD_NAME.search(p.stem.lower())]
    assert bad == [], f"files named by a batch, not a concept: {bad}"


def test_files_stay_readable():
    over = []
    for p in PACKAGE.rglob("*.py"):
        rel = p.relative_to(ROOT).as_posix()
        n = len(p.read_text().splitlines())
        limit = BUDGETS.get(rel, MAX_LINES)
        if n > limit:
            over.append(f"{rel}: {n} lines (limit {limit})")
    assert over == [], "files past their size limit:\n" + "\n".join(over)


def test_imports_sit_at_the_top():
    # an import below a def or class is how an import cycle gets hidden: the module half-exists
    # when the other side reads it
    late = []
    for module, path in MODULES.items():
        seen_def = False
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                seen_def = True
            elif isinstance(node, (ast.Import, ast.ImportFrom)) and seen_def:
                late.append(f"{module}:{node.lineno}")
    assert late == [], "module-level imports below a def or class:\n" + "\n".join(late)
