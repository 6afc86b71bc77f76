"""Specialised ``Op.apply``: one generated function per op class and number of inputs.

``Op.apply`` is the hot path of every op (it runs the forward and records the node). Written
generically it loops over the inputs and over the class's declarations (``saves``,
``reads_for``, ``saves_output``, ``broadcasts``) on every call; generated once per (class,
arity) with those loops unrolled and the declarations resolved, the same work costs well under
half as much (PyTorch generates its nodes from ``derivatives.yaml`` for the same reason). The
generated code does exactly what ``Op._apply_generic`` does; the op tests run through it.
"""
from __future__ import annotations

import numpy as np

from .. import _parallel

MAX_ARITY = 8  # above this (cat/stack of many tensors) the generic path runs


def build(cls, n: int, namespace: dict, direct: bool = False, name: str | None = None):
    """The specialised ``fast(cls, args, kw)`` for ``cls`` called with ``n`` positional args,
    or None when the generic path must serve (more inputs, or saves beyond the inputs).
    ``direct``: a plain ``fast(a0, ..., a{n-1})`` for calls without keywords instead, named
    ``name`` in the error for an input of the wrong type."""
    saves = cls.saves
    if n > MAX_ARITY or any(i >= n for i in saves):
        return None
    lines = []
    w = lines.append
    a = [f"a{i}" for i in range(n)]
    xs = ", ".join(f"x{i}" for i in range(n))
    if direct:
        w(f"def fast({', '.join(a)}):")
        w("    cls, kw = _cls, _no_kw")
    else:
        w("def fast(cls, args, kw):")
        w(f"    {', '.join(a)}, = args")
    w("    rec = _state.enabled")
    w("    need = False")
    w("    first = None")
    # bfloat16 computes in float32 (ops/_op.py lowp_apply): one dtype test per tensor input
    lowp = cls.upcasts and namespace["_BF16"] is not None
    for i in range(n):
        w(f"    t{i} = isinstance(a{i}, Tensor)")
        w(f"    if t{i}:")
        w(f"        x{i} = a{i}._data")
        w("        if first is None:")
        w(f"            first = x{i}")
        if lowp:
            w(f"            if x{i}.dtype is _BF16:")
            w(f"                return _lowp(cls, ({''.join(x + ', ' for x in a)}), kw)")
        if i:
            w(f"        elif x{i}.__class__ is not first.__class__ or (")
            w(f"                x{i}.__class__ is not ndarray and x{i}.device != first.device):")
            w(f"            return _mixed_devices(cls, ({', '.join(a)},), kw)")
            if lowp:   # (0-d float32 * bfloat16 is bfloat16, as in PyTorch)
                w(f"        elif x{i}.dtype is _BF16:")
                w(f"            return _lowp(cls, ({''.join(x + ', ' for x in a)}), kw)")
        w(f"        if a{i}._rg:")
        w("            need = True")
        w("    else:")
        w(f"        x{i} = a{i}")
        w(f"        if a{i}.__class__ not in _NUMBERS:")
        w(f"            _check_operand(cls, {i}, a{i}, _name)")
    w("    op = _new(cls)")
    w("    xp = np if first is None or first.__class__ is ndarray else xp_of(first)")
    w("    try:")
    if cls.elementwise and not cls.splits_itself:   # a large numpy array: over blocks on
        # the CPU's threads (the threshold is written in as a constant: a global's attribute
        # costs ~2 % of a small op)
        least = _parallel.MIN_ELEMENTS
        w(f"        if first is None or first.size < {least} or (")
        w("                first.__class__ is not ndarray) or (")
        w(f"                y := _threaded_forward(op, ({xs},), kw)) is None:")
        w(f"            y = op.forward(xp, {xs}, **kw) if kw else op.forward(xp, {xs})")
    else:
        w(f"        y = op.forward(xp, {xs}, **kw) if kw else op.forward(xp, {xs})")
    w("    except (ValueError, TypeError, IndexError) as e:")
    w(f"        raise op.bad_input(e, [{xs}], kw) from None")
    w("    except MemoryError as e:")
    w("        raise out_of_memory(e, cls.__name__) from None")
    if cls.broadcasts:
        w("    if first is not None and y.__class__ is not tuple:")
        w("        yd = y.dtype")
        w("        if yd is not first.dtype and yd != first.dtype:")
        w(f"            y = _promote(y, [{xs}])")
    w("    if not (need and rec):")
    w("        if y.__class__ is ndarray:")
    w("            out = _new(Tensor)")
    w("            out._data = y")
    w("            out._rg = False")
    w("            out.grad_fn = None")
    w("            out._out_nr = 0")
    w("            out._vbox = out._grad = out._acc = out._meta = None")
    w("            if not rec and _state.inference:")
    w("                out._m()['inference'] = True")
    w("            return out")
    w("        return _plain(y, rec)")
    for i in range(n):
        w(f"    if t{i} and a{i}._rg:")
        w(f"        m = a{i}._meta")
        w("        if m is not None and 'base' in m:")
        w(f"            _refresh_view(a{i})")
        w(f"        fn = a{i}.grad_fn")
        w("        if fn is not None:")
        w(f"            e{i} = (fn, a{i}._out_nr)")
        w("        else:")
        w(f"            r = a{i}._acc")
        w("            acc = r() if r is not None else None")
        w(f"            e{i} = (acc if acc is not None else accumulator_of(a{i}), 0)")
        w("    else:")
        w(f"        e{i} = NO_EDGE")
    w(f"    op.next_functions = ({', '.join(f'e{i}' for i in range(n))},)")
    w("    op._seq = next(_seq)")
    w("    op._extra = op._in_meta = None")
    w("    if y.__class__ is tuple:")
    w("        outs = tuple(_make_result(_as_array(v), op, k) for k, v in enumerate(y))")
    w("    else:")
    w("        if y.__class__ is not ndarray:")
    w("            y = _as_array(y)")
    if cls.broadcasts:
        w("        ys, yd = y.shape, y.dtype")
        cond = " or ".join(f"(hasattr(x{i}, 'shape') and (x{i}.shape != ys or x{i}.dtype != yd))"
                           for i in range(n))
        w(f"        if {cond}:")
        w(f"            op._in_meta = _in_meta([{xs}], y)")
    w("        outs = _new(Tensor)")
    w("        outs._data = y")
    w("        outs._rg = True")
    w("        outs.grad_fn = op")
    w("        outs._out_nr = 0")
    w("        outs._vbox = outs._grad = outs._acc = outs._meta = None")
    saved, versions = [], []
    reads = cls.reads_for if len(saves) > 1 else None
    for k, i in enumerate(saves):
        indent = "    "
        if reads is not None:
            r = reads[k]
            unused = " and ".join(f"e{j} is NO_EDGE" for j in r[:2])
            w(f"    if {unused}:")
            w(f"        s{k} = v{k} = None")
            w("    else:")
            indent = "        "
        w(f"{indent}s{k} = x{i}")
        w(f"{indent}if t{i}:")
        w(f"{indent}    m = a{i}._meta")
        w(f"{indent}    if m is not None and 'inference' in m:")
        w(f"{indent}        raise RuntimeError(INFERENCE_SAVED)")
        w(f"{indent}    vb = a{i}._vbox or a{i}._version_box()")
        w(f"{indent}    v{k} = (vb, vb.v, {i})")
        w(f"{indent}else:")
        w(f"{indent}    v{k} = None")
        saved.append(f"s{k}")
        versions.append(f"v{k}")
    if cls.saves_output:
        w("    vb = outs._vbox = Version()")
        saved.append("y")
        versions.append("(vb, 0, -1)")
    if saved:
        w(f"    op._saved = ({', '.join(saved)},)")
        w(f"    op._versions = ({', '.join(versions)},)")
        w("    if _saved_hooks.stack:")
        w(f"        _saved_hooks.pack(op, ({''.join(x + ', ' for x in a)}), outs)")
    else:
        w("    op._saved = ()")
        w("    op._versions = None")
    w("    if anomaly._state.enabled:")
    w("        anomaly.record(op)")
    w("    return outs")
    source = "\n".join(lines) + "\n"
    ns = dict(namespace, _cls=cls, _no_kw={}, _name=name)
    exec(compile(source, f"<gpugrad apply: {cls.__name__}/{n}>", "exec"), ns)
    fast = ns["fast"]
    fast.source = source
    return fast


def build_run(cls, namespace: dict):
    """A specialised ``_run`` for a single-output op: the version checks unrolled over the
    declared saved values, which are passed to ``backward`` by position (``Op._run`` is the
    generic version, and still serves ``create_graph``)."""
    n = len(cls.saves) + bool(cls.saves_output)
    lines = []
    w = lines.append
    w("def _run(self, grads, create_graph):")
    w("    saved = self._saved")
    w("    if saved is None:")
    w("        self._check_saved()")
    w("    if saved.__class__ is not tuple:")
    w("        saved = saved.arrays()   # packed by saved-tensor hooks")
    if n:
        w("    versions = self._versions")
        w("    if versions is not None:")
        for k in range(n):
            w(f"        e = versions[{k}]")
            w("        if e is not None and e[0].v != e[1]:")
            w("            self._check_saved()")
    w("    if create_graph:")
    w("        return _generic_run(self, grads, True)")
    w("    g = grads[0]")
    w("    F = _ns_get(g.__class__) or _array_ns(g)")
    args = "".join(f", saved[{k}]" for k in range(n))
    w(f"    gxs = self.backward(F, g{args})")
    w("    if gxs.__class__ is not tuple:")
    w("        gxs = (gxs,)")
    w("    meta = self._in_meta")
    w("    if meta is not None:")
    w("        gxs = _fit_all(F, gxs, meta)")
    w("    return gxs")
    source = "\n".join(lines) + "\n"
    ns = dict(namespace)
    exec(compile(source, f"<gpugrad _run: {cls.__name__}>", "exec"), ns)
    return ns["_run"]


def direct(cls, n: int, namespace: dict, name: str | None = None):
    """A plain function ``f(a0, ..., a{n-1})`` running ``cls.apply`` with those inputs and no
    keywords, without the classmethod's dispatch (Tensor's operators and the hot functions)."""
    f = build(cls, n, namespace, direct=True, name=name)
    f.__name__ = f.__qualname__ = name or cls.__name__
    f.__doc__ = cls.__doc__
    return f


def namespace(**extra) -> dict:
    return dict(np=np, ndarray=np.ndarray, _new=object.__new__, **extra)
