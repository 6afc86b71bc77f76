"""PyTorch-style printing of tensors: ``tensor([0., 1., 2.], requires_grad=True)``."""
from __future__ import annotations

import numpy as np

_opts = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


_PROFILES = {"default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
             "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
             "full": {"precision": 4, "threshold": float("inf"), "edgeitems": 3, "linewidth": 80}}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """PyTorch's print options; a ``profile`` ('default', 'short', 'full') sets all four
    first, and the other arguments given override it."""
    if profile is not None:
        _opts.update(_PROFILES[profile])
    for k, v in (("precision", precision), ("threshold", threshold),
                 ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if v is not None:
            _opts[k] = v
    _opts["sci_mode"] = sci_mode


def _summarize(a, edge):
    """Indices kept when summarizing (None marks the '...')."""
    if a.ndim == 0 or a.shape[0] <= 2 * edge:
        return None
    return list(range(edge)) + [None] + list(range(a.shape[0] - edge, a.shape[0]))


def _formatter(a):
    """A function formatting one element, all elements padded to the same width."""
    if a.dtype.kind == "c":   # real and imaginary parts each formatted as PyTorch's
        real, imag = _formatter(a.real), _formatter(a.imag)

        def one(v):
            im = imag(v.imag).lstrip()
            return real(v.real) + ("" if im.startswith("-") else "+") + im + "j"
        one.width = real.width + imag.width + 2
        return one
    if a.dtype == np.bool_:
        width = 5 if (~a).any() else 4
        one = lambda v: str(bool(v)).rjust(width)
    elif a.dtype.kind in "iu":
        width = max((len(str(int(v))) for v in a.ravel()), default=1)
        one = lambda v: str(int(v)).rjust(width)
    if a.dtype.kind in "biu":
        one.width = width
        return one
    # NOTE: as PyTorch, the width comes from the nonzero finite values only, so nan, inf and
    # zeros may print narrower or wider than the rest
    p = _opts["precision"]
    finite = a[np.isfinite(a)].astype(np.float64)
    nonzero = finite[finite != 0]
    big, small = (np.abs(nonzero).max(), np.abs(nonzero).min()) if nonzero.size else (0, 0)
    int_mode = bool(np.all(nonzero == np.ceil(nonzero)))
    sci = _opts["sci_mode"]
    if sci is None:
        sci = nonzero.size > 0 and (big / small > 1000 or big > 1e8
                                    or (not int_mode and small < 1e-4))
    if sci:
        fmt = lambda v: f"{v:.{p}e}"
    elif int_mode:
        fmt = lambda v: f"{v:.0f}." if np.isfinite(v) else f"{v:.0f}"
    else:
        fmt = lambda v: f"{v:.{p}f}"
    width = max((len(fmt(v)) for v in nonzero), default=1)

    def one(v):
        return fmt(float(v)).rjust(width)
    one.width = width
    return one


def _rows(a, fmt, indent, summarize, edge):
    if a.ndim == 0:
        return fmt(a)
    keep = _summarize(a, edge) if summarize else None
    idx = range(a.shape[0]) if keep is None else keep
    if a.ndim == 1:
        items = [" ..." if i is None else fmt(a[i]) for i in idx]
        per_line = max(1, (_opts["linewidth"] - indent) // (fmt.width + 2))
        lines = [", ".join(items[j:j + per_line]) for j in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    sep = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    parts = ["..." if i is None else _rows(a[i], fmt, indent + 1, summarize, edge) for i in idx]
    return "[" + sep.join(parts) + "]"


def format_tensor(t) -> str:
    from ._backend import CPU
    from ._promotion import complex_of
    from .tensor import DEFAULT
    a = t._host()
    summarize = a.size > _opts["threshold"]
    edge = _opts["edgeitems"]
    if summarize:  # format only what is shown
        shown = a
        for ax in range(a.ndim):
            if a.shape[ax] > 2 * edge:
                shown = np.concatenate([np.take(shown, range(edge), axis=ax),
                                        np.take(shown, range(a.shape[ax] - edge, a.shape[ax]),
                                                axis=ax)], axis=ax)
        fmt = _formatter(shown)
    else:
        fmt = _formatter(a)
    body = "[]" if a.size == 0 else _rows(a, fmt, len("tensor("), summarize, edge)
    suffix = []
    if a.size == 0 and a.ndim > 1:
        suffix.append(f"size={tuple(a.shape)}")
    if t.device != CPU:
        suffix.append(f"device='{t.device}'")
    if a.dtype != DEFAULT.float and a.dtype not in (np.int64, np.bool_, complex_of(None)):
        suffix.append(f"dtype=gpugrad.{a.dtype.name}")
    if t.grad_fn is not None:
        suffix.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._rg:
        suffix.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + s for s in suffix) + ")"
