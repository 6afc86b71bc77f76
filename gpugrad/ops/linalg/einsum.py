"""``einsum``, computed the way PyTorch computes it: letters that only one operand has are summed
first, then operands are contracted pairwise, each pair as one batched matrix product (permute,
reshape, bmm). Two operands are contracted as written; three or more in the order numpy's
``einsum_path`` (greedy) picks from the shapes alone, so one plan serves numpy and CuPy and the
backward, made of the same pairwise nodes, follows the same cheap order. The graph is made of
ordinary nodes, so gradients and double backward come from them, on every device."""
from __future__ import annotations

import math
import string

import numpy as np

from ..._exports import export
from ..reduction import reduce
from ..shape import views as shape
from . import products as linalg


def _error(message):
    return RuntimeError(f"einsum(): {message}")


def _parse(equation, operands):
    """(subscripts per operand, output subscripts, size per letter); '...' becomes letters."""
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise _error(f"{'more' if len(operands) > len(terms) else 'fewer'} operands were "
                     "provided than specified in the equation")
    bad = [c for c in eq if not (c.isalpha() or c in ",.->")]
    if bad:
        raise _error(f"invalid subscript given in the equation: {bad[0]!r} (subscripts are "
                     "letters a-z and A-Z)")
    free = [c for c in string.ascii_letters if c not in eq]
    ell_dims = max((op.ndim - len(t.replace("...", "")) for t, op in zip(terms, operands)
                    if "..." in t), default=0)
    ell = "".join(free[:ell_dims])
    subs, sizes = [], {}
    for i, (t, op) in enumerate(zip(terms, operands)):
        if "..." in t:
            t = t.replace("...", ell[ell_dims - (op.ndim - len(t.replace("...", ""))):])
        if len(t) != op.ndim:
            raise _error(f"the number of subscripts in the equation ({len(t)}) does not match "
                         f"the number of dimensions ({op.ndim}) for operand {i} and no ellipsis "
                         "was given")
        if len(set(t)) != len(t):
            raise NotImplementedError(f"einsum(): operand {i} repeats a subscript ({t!r}): "
                                      "diagonals are not supported by gpugrad")
        for c, n in zip(t, op.shape):
            if sizes.get(c, 1) not in (1, n) and n != 1:
                raise _error(f"operands do not broadcast: subscript {c!r} has size "
                             f"{sizes[c]} and {n}")
            sizes[c] = max(sizes.get(c, 1), n)
        subs.append(t)
    if arrow:
        out = out.replace("...", ell)
        missing = [c for c in out if c not in sizes]
        if missing:
            raise _error(f"output subscript {missing[0]} does not appear in the equation for "
                         "any input operand")
    else:   # implicit: ellipsis dims, then letters used once, in alphabetical order
        joined = "".join(subs)
        out = ell + "".join(sorted(c for c in set(joined) - set(ell) if joined.count(c) == 1))
    return subs, out, sizes


def _sum_out(t, s, keep):
    """``t`` with the letters of ``s`` not in ``keep`` summed away."""
    drop = [i for i, c in enumerate(s) if c not in keep]
    if not drop:
        return t, s
    return reduce.sum(t, tuple(drop)), "".join(c for c in s if c in keep)


def _arrange(t, s, order):
    return (t if list(s) == order else shape.permute(t, *[s.index(c) for c in order])), order


def _pair(a, sa, b, sb, keep, sizes):
    """Contract ``a`` and ``b`` over the letters they share that ``keep`` does not hold."""
    batch = [c for c in sa if c in sb and c in keep]
    contract = [c for c in sa if c in sb and c not in keep]
    left, right = [c for c in sa if c not in sb], [c for c in sb if c not in sa]
    a, _ = _arrange(a, sa, batch + left + contract)
    b, _ = _arrange(b, sb, batch + contract + right)
    n = [math.prod(sizes[c] for c in g) for g in (batch, left, contract, right)]
    a = _fit(a, [sizes[c] for c in batch + left + contract])
    b = _fit(b, [sizes[c] for c in batch + contract + right])
    y = linalg.bmm(shape.reshape(a, n[0], n[1], n[2]), shape.reshape(b, n[0], n[2], n[3]))
    y = shape.reshape(y, *[sizes[c] for c in batch + left + right])
    return y, "".join(batch + left + right)


def _fit(t, full):
    """``t`` expanded where a size-1 dimension broadcasts against another operand's."""
    return t if tuple(t.shape) == tuple(full) else shape.expand(t, *full)


@export("einsum")
def einsum(equation, *operands):
    """Sum of products over the letters of ``equation`` (numpy/PyTorch notation, with '...'
    and the implicit output of letters used once)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    subs, out, sizes = _parse(equation, operands)
    if len(operands) > 2:
        return _planned(list(operands), subs, out, sizes)
    later = [set("".join(subs[i + 1:])) for i in range(len(subs))]
    cur, cs = _sum_out(operands[0], subs[0], set(out) | later[0])
    for i in range(1, len(operands)):
        op, s = _sum_out(operands[i], subs[i], set(out) | set(cs) | later[i])
        cur, cs = _pair(cur, cs, op, s, set(out) | later[i], sizes)
    cur, cs = _sum_out(cur, cs, set(out))
    cur = _fit(cur, [sizes[c] for c in cs]) if len(operands) == 1 else cur
    return _arrange(cur, cs, list(out))[0]


def _planned(ops, subs, out, sizes):
    """Contract the pairs numpy's greedy planner picks (it reads only the shapes: the operands
    stand in as zero-stride arrays)."""
    shapes = [np.broadcast_to(np.empty(()), tuple(t.shape)) for t in ops]
    path, _ = np.einsum_path(",".join(subs) + "->" + out, *shapes, optimize="greedy")
    for step in path[1:]:
        picked = [(ops[i], subs[i]) for i in step]
        for i in sorted(step, reverse=True):
            del ops[i], subs[i]
        rest = set(out).union(*subs)
        cur, cs = _sum_out(*picked[0], rest.union(*(s for _, s in picked[1:])))
        for k, (t, s) in enumerate(picked[1:], 1):
            keep = rest.union(*(s2 for _, s2 in picked[k + 1:]))
            t, s = _sum_out(t, s, keep | set(cs))
            cur, cs = _pair(cur, cs, t, s, keep, sizes)
        ops.append(cur)
        subs.append(cs)
    cur, cs = _sum_out(ops[0], subs[0], set(out))
    return _arrange(cur, cs, list(out))[0]


OPS: list = []
