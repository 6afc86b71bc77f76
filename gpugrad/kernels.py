"""Fused elementwise kernels: one CUDA source in ``kernels/`` paired with its numpy reference.

``@kernel("relu_bwd.cu")`` turns a numpy-reference function ``f(xp, *arrays, *scalars)`` into a
dispatcher: numpy arrays run the kernel's compiled CPU loop where it has one
(``gpugrad/_cpu_kernels``) and it applies, else the reference (the CPU path); CuPy arrays launch
the compiled kernel from the ``.cu`` file of the same name. Tests check every reference against
the unfused math, every CPU loop against its reference, and on a GPU every kernel against its
reference.
"""
from __future__ import annotations

import functools
import inspect
import math
import os

import numpy as np

from . import _backend, _cpu_kernels, _parallel

REGISTRY: dict[str, Kernel] = {}


class Kernel:
    """A fused kernel: ``source`` under ``kernels/``, ``ref`` its numpy reference;
    ``pointwise``: each output element depends on the same element of each input (the CPU may
    split a large call into blocks on several threads)."""

    def __init__(self, ref, source: str, outputs: int, inplace: tuple, pointwise: bool = False):
        self.ref = ref
        self.pointwise = pointwise
        self.name = ref.__name__
        self.source = source
        self.outputs = outputs
        self.inplace = inplace   # argument positions the kernel updates in place
        self.__doc__ = ref.__doc__

    def __call__(self, *args):
        if type(args[0]) is np.ndarray or isinstance(args[0], np.generic):
            return self.ref(np, *args)
        return self.launch(*args)

    def launch(self, *args):
        from . import _cuda_kernels
        return _cuda_kernels.launch(self, args)

    def __repr__(self):
        return f"<kernel {self.name} ({self.source})>"


def kernel(source: str, outputs: int = 1, inplace: tuple = (), pointwise: bool = False):
    """Register ``ref`` as the numpy reference of ``kernels/<source>``; the module-level name
    becomes a plain dispatcher function (one frame less than calling the Kernel object, which
    counts on the per-op path). A ``pointwise`` kernel's reference runs on the CPU's threads
    when its arrays are large (``_parallel.elementwise``); a reference with an ``out``
    parameter (an array, or a tuple of them for several outputs) writes each block in place."""
    def wrap(ref):
        k = Kernel(ref, source, outputs, inplace, pointwise)
        REGISTRY[k.name] = k
        ndarray, generic = np.ndarray, np.generic
        threaded = functools.partial(ref, np)
        into = "out" in inspect.signature(ref).parameters   # writes its block in place
        # read once, as the generated forwards do: a small call pays one comparison
        least = _parallel.MIN_ELEMENTS if pointwise else math.inf
        name = k.name
        compiled = _cpu_kernels.MIN_ELEMENTS.get(name, 0) if name in _cpu_kernels.NAMES \
            else math.inf

        def dispatch(*args):
            a = args[0]
            if a.__class__ is ndarray or isinstance(a, generic):
                if a.size >= compiled and (f := _cpu_kernels.get(name)) is not None and (
                        y := f(*args)) is not None:
                    return y
                if a.size >= least and (
                        y := _parallel.elementwise(threaded, args, into=into)) is not None:
                    return y
                return ref(np, *args)
            return k.launch(*args)
        functools.update_wrapper(dispatch, ref)
        dispatch.kernel = k
        return dispatch
    return wrap


# -- the forward of the commonest elementwise ops (CUDA) ------------------------------------------
# CuPy's general ufunc dispatch costs more host time per op than the op's launch; these kernels
# are launched through a binding planned once (gpugrad/_cuda_kernels.py) when their operands
# fit (``lean_binary``, ``lean_unary``). numpy never comes here: its operators are the CPU path.
@kernel("add.cu", pointwise=True)
def add(xp, x, y):
    """out = x + y"""
    return x + y


@kernel("mul.cu", pointwise=True)
def mul(xp, x, y):
    """out = x * y"""
    return x * y


@kernel("add_scalar.cu", pointwise=True)
def add_scalar(xp, x, s):
    """out = x + s   (s a Python number, rounded to x's dtype)"""
    return x + x.dtype.type(s)


@kernel("mul_scalar.cu", pointwise=True)
def mul_scalar(xp, x, s):
    """out = x * s   (s a Python number, rounded to x's dtype)"""
    return x * x.dtype.type(s)


@kernel("relu.cu", pointwise=True)
def relu(xp, x):
    """out = max(x, 0); NaN stays NaN"""
    return xp.maximum(x, x.dtype.type(0))


@kernel("tanh.cu", pointwise=True)
def tanh(xp, x):
    """out = tanh(x)"""
    return xp.tanh(x)


class _Lean:
    """Whether the forward of add, sub, mul, relu and tanh on CUDA runs the kernels above
    (``GPUGRAD_LEAN_FORWARD=0`` or ``kernels.lean.enabled = False``: CuPy's ufuncs, as before;
    the bench compares both in one run)."""
    enabled = os.environ.get("GPUGRAD_LEAN_FORWARD", "1") != "0"


lean = _Lean()
_LEAN_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_NUMBERS = (int, float)


def lean_binary(x, y, both, scalar):
    """``both(x, y)`` for two contiguous CUDA arrays of one shape and float dtype, ``scalar(x,
    y)`` for such an array and a Python number; None when the operands do not fit (the caller
    then uses CuPy's operator)."""
    flags = getattr(x, "flags", None)   # x may be the number (``2 + t``): not for us
    if flags is None or not lean.enabled or x.dtype not in _LEAN_DTYPES or not (
            flags.c_contiguous):
        return None
    cls = y.__class__
    if cls is x.__class__:
        if y.dtype == x.dtype and y.shape == x.shape and y.flags.c_contiguous and both:
            return both(x, y)
        return None
    if (cls is float or cls is int) and scalar is not None:
        return scalar(x, y)
    return None


def lean_unary(fn, x):
    """``fn(x)`` for a contiguous CUDA array of a float dtype, else None."""
    if lean.enabled and x.dtype in _LEAN_DTYPES and x.flags.c_contiguous:
        return fn(x)
    return None


# -- activation forward --------------------------------------------------------------------------
@kernel("sigmoid.cu", pointwise=True)
def sigmoid(xp, x):
    """y = 1 / (1 + exp(-x)) = 0.5 tanh(x / 2) + 0.5   (the tanh form cannot overflow)"""
    return 0.5 * xp.tanh(0.5 * x) + 0.5


# -- activation backward -------------------------------------------------------------------------
@kernel("relu_bwd.cu", pointwise=True)
def relu_bwd(xp, y, gy, out=None):
    """gx = 0 where y == 0 else gy   (y = relu(x) is > 0, 0 or NaN: NaN passes its gradient,
    as in PyTorch, where the gradient is cut at y <= 0)"""
    # NOTE: a multiply by the mask, not xp.where: numpy's where is ~8x slower on random masks
    return xp.multiply(gy, y != 0, dtype=gy.dtype, out=out)


@kernel("leaky_relu_bwd.cu", pointwise=True)
def leaky_relu_bwd(xp, x, gy, slope):
    """gx = gy where x > 0 else slope * gy"""
    m = (x > 0).astype(gy.dtype)
    m *= gy.dtype.type(1 - slope)
    m += gy.dtype.type(slope)
    m *= gy
    return m


@kernel("sigmoid_bwd.cu", pointwise=True)
def sigmoid_bwd(xp, y, gy, out=None):
    """gx = gy * y * (1 - y)"""
    t = xp.subtract(1, y, out=out)
    t *= y
    t *= gy
    return t


@kernel("tanh_bwd.cu", pointwise=True)
def tanh_bwd(xp, y, gy, out=None):
    """gx = gy * (1 - y * y)"""
    t = xp.multiply(y, y, out=out)
    if isinstance(t, np.generic):  # 0-d operands give a numpy scalar, which has no ``out=``
        return gy * (1 - t)
    xp.subtract(1, t, out=t)
    t *= gy
    return t


@kernel("gelu_bwd.cu", pointwise=True)
def gelu_bwd(xp, x, gy, tanh_approx):
    """gx = gy * (Phi(x) + x phi(x)); tanh form when ``tanh_approx``"""
    t = x.dtype.type
    if tanh_approx:
        k = t(math.sqrt(2 / math.pi))
        th = xp.tanh(k * (x + t(0.044715) * x * x * x))
        return gy * (t(0.5) * (1 + th) + t(0.5) * x * (1 - th * th) * k
                     * (1 + t(3 * 0.044715) * x * x))
    pdf = x * x
    if isinstance(pdf, np.generic):  # 0-d operands give a numpy scalar, which has no ``out=``
        return gy * (gelu_cdf(x) + x * xp.exp(t(-0.5) * pdf) * t(1 / math.sqrt(2 * math.pi)))
    pdf *= t(-0.5)
    xp.exp(pdf, out=pdf)
    pdf *= t(1 / math.sqrt(2 * math.pi))
    pdf *= x
    pdf += gelu_cdf(x)
    return gy * pdf


@kernel("silu_bwd.cu", pointwise=True)
def silu_bwd(xp, x, gy):
    """gx = gy * s * (1 + x * (1 - s)),  s = sigmoid(x)"""
    s = 0.5 * xp.tanh(0.5 * x) + 0.5
    return gy * s * (1 + x * (1 - s))


# -- arithmetic backward -------------------------------------------------------------------------
@kernel("mul_bwd.cu", outputs=2, pointwise=True)
def mul_bwd(xp, x, y, gz, out=(None, None)):
    """gx = gz * y,  gy = gz * x   (one pass over the three inputs)"""
    return xp.multiply(gz, y, out=out[0]), xp.multiply(gz, x, out=out[1])


@kernel("div_bwd.cu", outputs=2, pointwise=True)
def div_bwd(xp, x, y, gz):
    """gx = gz / y,  gy = -gz * x / y^2"""
    gx = gz / y
    return gx, -gx * x / y


@kernel("pow_bwd.cu", pointwise=True)
def pow_bwd(xp, x, gy, p):
    """gx = gy * p * x^(p - 1)   (p a number)"""
    t = x.dtype.type
    return gy * (t(p) * x ** t(p - 1))


# -- recurrent cells: the gate math of one time step (the products stay BLAS / cuBLAS) ------------
# The gates arrive as (N, k H) arrays whose k column blocks are the gates; the activations are
# kept as (k', N, H), each gate one contiguous block (numpy runs ~4x slower on column blocks).
def gate_blocks(a, k):
    """The (k, N, H) view of an (N, k H) array, for a C- or a Fortran-ordered one (the latter
    is how ``(w @ h.T).T`` comes out of BLAS without a copy); any other layout is copied."""
    n, kh = a.shape
    if a.ndim == 2 and a.T.flags.c_contiguous:
        return a.T.reshape(k, kh // k, n).transpose(0, 2, 1)
    return a.reshape(n, k, kh // k).transpose(1, 0, 2)


@functools.lru_cache(maxsize=None)
def _lstm_affine(xp, dtype):
    """act = tanh(x * scale) * scale + offset per gate block: sigmoid for i, f, o; tanh for g."""
    scale = xp.asarray([0.5, 0.5, 1.0, 0.5], dtype=dtype).reshape(4, 1, 1)
    return scale, xp.asarray([0.5, 0.5, 0.0, 0.5], dtype=dtype).reshape(4, 1, 1)


@kernel("lstm_cell.cu", outputs=3)
def lstm_cell(xp, hh, gi, b, c):
    """gates = hh + gi + b (hh = h W_hh^T, gi = x W_ih^T + b_ih: (N, 4H); b: (4H,) or None);
    i, f, g, o = sigmoid, sigmoid, tanh, sigmoid of its four blocks;  c' = f c + i g;
    h' = o tanh(c').  Returns h', c' and act = [i, f, g, o, tanh(c')] (5, N, H), what the
    backward reads besides c."""
    n, hidden = c.shape
    act = xp.empty((5, n, hidden), dtype=c.dtype)
    s = act[:4]
    xp.add(gate_blocks(hh, 4), gate_blocks(gi, 4), out=s)
    if b is not None:
        s += b.reshape(4, 1, hidden)
    scale, offset = _lstm_affine(xp, c.dtype)
    s *= scale                        # sigmoid(x) = 0.5 tanh(x / 2) + 0.5: cannot overflow
    xp.tanh(s, out=s)
    s *= scale
    s += offset
    i, f, g, o, tc = act
    c_new = f * c
    xp.multiply(i, g, out=tc)
    c_new += tc
    xp.tanh(c_new, out=tc)
    return o * tc, c_new, act


@kernel("lstm_cell_bwd.cu", outputs=2)
def lstm_cell_bwd(xp, act, c, gh, gc):
    """The gradients of lstm_cell from those of h' (gh) and c' (gc; either may be None: zero),
    act = [i, f, g, o, tc]:  dc' = gc + gh o (1 - tc^2);
    d gates = [dc' g i (1-i), dc' c f (1-f), dc' i (1-g^2), gh tc o (1-o)] (N, 4H);
    dc = dc' f"""
    i, f, g, o, tc = act
    n, hidden = c.shape
    t = c.dtype.type
    d4 = xp.empty((4, n, hidden), dtype=c.dtype)
    if gh is None:
        dc_new = xp.zeros_like(c) if gc is None else gc.copy()
        d4[3] = 0
    else:
        dc_new = tc * tc
        xp.subtract(t(1), dc_new, out=dc_new)
        dc_new *= o
        dc_new *= gh
        if gc is not None:
            dc_new += gc
        xp.multiply(gh, tc, out=d4[3])
        d4[3] *= o
    xp.multiply(dc_new, g, out=d4[0])
    d4[0] *= i
    xp.multiply(dc_new, c, out=d4[1])
    d4[1] *= f
    xp.multiply(dc_new, i, out=d4[2])
    d4[2] *= t(1) + g                 # (1 - g)(1 + g) = 1 - g^2, the (1 - g) below
    d = xp.empty((n, 4 * hidden), dtype=c.dtype)
    xp.multiply(d4, t(1) - act[:4], out=d.reshape(n, 4, hidden).transpose(1, 0, 2))
    dc_new *= f
    return d, dc_new


@kernel("gru_cell.cu", outputs=2)
def gru_cell(xp, gi, hh, b, h):
    """gh = hh + b (hh = h W_hh^T: (N, 3H); b: (3H,) or None), gi = x W_ih^T + b_ih;
    r = sigmoid(gi_r + gh_r), z = sigmoid(gi_z + gh_z), n = tanh(gi_n + r gh_n);
    h' = n + z (h - n).  Returns h' and act = [r, z, n, gh_n] (4, N, H)."""
    rows, hidden = h.shape
    t = h.dtype.type
    act = xp.empty((4, rows, hidden), dtype=h.dtype)
    hb, ib = gate_blocks(hh, 3), gate_blocks(gi, 3)
    rz, ghn = act[:2], act[3]
    xp.add(hb[:2], ib[:2], out=rz)
    xp.copyto(ghn, hb[2])
    if b is not None:
        b3 = b.reshape(3, 1, hidden)
        rz += b3[:2]
        ghn += b3[2]
    rz *= t(0.5)
    xp.tanh(rz, out=rz)
    rz *= t(0.5)
    rz += t(0.5)
    r, z, n = act[0], act[1], act[2]
    xp.multiply(r, ghn, out=n)
    n += ib[2]
    xp.tanh(n, out=n)
    h_new = h - n
    h_new *= z
    h_new += n
    return h_new, act


@kernel("gru_cell_bwd.cu", outputs=3)
def gru_cell_bwd(xp, act, h, gy):
    """The gradients of gru_cell from that of h' (gy), act = [r, z, n, gh_n]:
    dn = gy (1 - z)(1 - n^2),  dz = gy (h - n) z (1 - z),  dr = dn gh_n r (1 - r);
    d gi = [dr, dz, dn],  d gh = [dr, dz, dn r] (N, 3H),  dh = gy z (h's direct share)"""
    r, z, n, ghn = act
    rows, hidden = h.shape
    t = h.dtype.type
    d3 = xp.empty((3, rows, hidden), dtype=h.dtype)
    dr, dz, dn = d3
    xp.multiply(n, n, out=dn)
    xp.subtract(t(1), dn, out=dn)
    dn *= gy
    xp.subtract(t(1), z, out=dr)
    dn *= dr
    xp.subtract(h, n, out=dz)
    dz *= gy
    dz *= z
    dz *= dr                          # dr holds 1 - z here
    xp.multiply(dn, ghn, out=dr)
    dr *= r
    dr *= t(1) - r
    d_gi = xp.empty((rows, 3 * hidden), dtype=h.dtype)
    d_gh = xp.empty_like(d_gi)
    xp.copyto(d_gi.reshape(rows, 3, hidden).transpose(1, 0, 2), d3)
    gh3 = d_gh.reshape(rows, 3, hidden).transpose(1, 0, 2)
    xp.copyto(gh3[:2], d3[:2])
    xp.multiply(dn, r, out=gh3[2])
    return d_gi, d_gh, gy * z


# -- losses ------------------------------------------------------------------------------------
@kernel("mse_bwd.cu", pointwise=True)
def mse_bwd(xp, x, target, gy, scale):
    """gx = scale * 2 * (x - target) * gy   (gy broadcast; scale = 1/N for 'mean')"""
    gy = xp.asarray(gy, dtype=x.dtype)
    return (x - target) * (gy * x.dtype.type(2 * scale))


@kernel("softmax_xent_bwd.cu")
def softmax_xent_bwd(xp, logp, target, gy, scale):
    """gx[i, j] = (exp(logp[i, j]) - [j == target[i]]) * gy[i] * scale   (gy one value or one
    per row; rows with target < 0 are ignored; callers validate target < C)"""
    g = xp.exp(logp)
    rows = xp.arange(logp.shape[0])
    valid = target >= 0
    g[rows[valid], target[valid]] -= 1
    gy = xp.asarray(gy, dtype=logp.dtype)
    g *= (gy[:, None] if gy.ndim == 1 else gy) * logp.dtype.type(scale)
    g[~valid] = 0
    return g


@kernel("log_softmax.cu")
def log_softmax(xp, x):
    """y = (x - m) - log(sum(exp(x - m))) over the last axis, m its max"""
    z = x - x.max(axis=-1, keepdims=True)
    # NOTE: in place where possible: on numpy each fresh large temporary costs its page faults
    z -= xp.log(xp.exp(z).sum(axis=-1, keepdims=True))
    return z


@kernel("log_softmax_bwd.cu")
def log_softmax_bwd(xp, y, gy):
    """gx = gy - exp(y) * sum(gy) over the last axis   (y = log_softmax(x))"""
    g = xp.exp(y)
    g *= gy.sum(axis=-1, keepdims=True)
    return xp.subtract(gy, g, out=g)


@kernel("nll_fwd.cu", outputs=2)
def nll_fwd(xp, x, target, weight_col, ignore_index):
    """loss_row[i] = -w_i * x[i, target[i]],  w_row[i] = w_i: 0 where target[i] == ignore_index,
    else weight_col[target[i]] (1 without weights). x: (rows, cols). A target out of
    range (and not ignored) gives NaN in both outputs: the GPU does not stop to check. The CPU
    loss checks targets itself and skips the weights when none apply."""
    valid = target != ignore_index
    inside = (target >= 0) & (target < x.shape[1])
    cols = xp.where(valid & inside, target, 0)
    w = valid.astype(x.dtype) if weight_col is None else weight_col[cols] * valid
    w = xp.where(valid & ~inside, x.dtype.type(np.nan), w).astype(x.dtype)
    picked = x[xp.arange(x.shape[0]), cols]
    return xp.where(valid, -(w * picked), 0).astype(x.dtype), w


@kernel("sum_rows.cu")
def sum_rows(xp, x):
    """out_col[j] = sum over i of x[i, j]   (x: (rows, cols); the gradient of a broadcast bias)"""
    return x.sum(axis=0)


# -- products ------------------------------------------------------------------------------------
@kernel("gemm.cu")
def gemm(xp, a, b):
    """out = a @ b   (a: (m, k), b: (k, n), any strides: read in place, a transposed view too)"""
    return xp.matmul(a, b)


def matmul(xp, a, b):
    """``a @ b``. CuPy's matmul calls cuBLAS, which CuPy refuses while a stream captures a CUDA
    graph: then a product of two matrices runs gpugrad's own kernel, ``gemm``."""
    if xp is np or not _backend.captures.count or a.ndim != 2 or b.ndim != 2 or not (
            a.dtype == b.dtype and a.dtype in (np.float32, np.float64)):
        return xp.matmul(a, b)
    return gemm(a, b)


# -- accumulation and optimizer steps (in place) -------------------------------------------------
@kernel("accumulate_grad.cu", outputs=0, inplace=(0,))
def accumulate_grad(xp, dst, src):
    """dst += src"""
    xp.add(dst, src, out=dst, casting="unsafe")


_CHUNK = 1 << 16


def _in_slices(ref):
    """Run an elementwise in-place update over 64K-element slices of large contiguous numpy
    arrays: the same result, with temporaries bounded to one slice, so an optimizer step's
    peak memory stays at the parameters and their state (as with the fused CUDA kernel)."""
    @functools.wraps(ref)
    def run(xp, p, *args):
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        if (xp is not np or p.size <= _CHUNK or not p.flags.c_contiguous
                or not all(a.flags.c_contiguous and a.shape == p.shape for a in arrays)):
            return ref(xp, p, *args)
        flat = [a.reshape(-1) if isinstance(a, np.ndarray) else a for a in args]
        pf = p.reshape(-1)
        for i in range(0, p.size, _CHUNK):
            part = slice(i, i + _CHUNK)
            ref(xp, pf[part], *[a[part] if isinstance(a, np.ndarray) else a for a in flat])
    return run


@kernel("sgd_step.cu", outputs=0, inplace=(0, 2))
@_in_slices
def sgd_step(xp, p, g, buf, lr, momentum, dampening, weight_decay, nesterov, first):
    """SGD with momentum; updates p (and the momentum buffer) in place:
    d = g + wd p;  buf = d if first else momentum buf + (1 - dampening) d;
    p -= lr * (d + momentum buf if nesterov else buf)"""
    t = p.dtype.type
    d = g + t(weight_decay) * p if weight_decay else g
    if momentum:
        if first:
            buf[...] = d
        else:
            buf *= t(momentum)
            buf += d if dampening == 0 else t(1 - dampening) * d
        d = d + t(momentum) * buf if nesterov else buf
    p -= t(lr) * d


@kernel("adam_step.cu", outputs=0, inplace=(0, 2, 3))
@_in_slices
def adam_step(xp, p, g, m, v, lr, beta1, beta2, eps, weight_decay, step, decoupled):
    """Adam (decoupled=False: L2 into g) / AdamW (decoupled=True: p *= 1 - lr wd), in place:
    m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
    p -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)"""
    adam_moments(p, g, m, v, lr, beta1, beta2, weight_decay, decoupled)
    adam_update(xp, p, m, v, lr, beta1, beta2, eps, step)


def adam_moments(p, g, m, v, lr, beta1, beta2, weight_decay, decoupled):
    """Weight decay and the moment updates shared by Adam, AdamW and AMSGrad (in place)."""
    t = p.dtype.type
    if weight_decay:
        if decoupled:
            p *= t(1 - lr * weight_decay)
        else:
            g = g + t(weight_decay) * p
    m *= t(beta1)
    m += t(1 - beta1) * g
    v *= t(beta2)
    v += t(1 - beta2) * (g * g)


def adam_update(xp, p, m, v, lr, beta1, beta2, eps, step):
    """p -= lr * m_hat / (sqrt(v_hat) + eps), with bias corrections for step ``step``."""
    t = p.dtype.type
    p -= t(lr / (1 - beta1 ** step)) * m / (xp.sqrt(v / t(1 - beta2 ** step)) + t(eps))


def foreach(update, tensors, *scalars) -> None:
    """Apply in-place ``update`` (``sgd_step``, ``adam_step``) to each tuple of arrays in
    ``tensors`` with the same ``scalars``: on CUDA, one launch for up to eight tensors (its
    ``<name>_multi`` entry), where a loop would launch once per tensor."""
    if not tensors:
        return
    first = tensors[0][0]
    if first.__class__ is np.ndarray:
        for arrays in tensors:
            update(*arrays, *scalars)
        return
    from . import _cuda_kernels
    _cuda_kernels.launch_multi(update.kernel, tensors, scalars)


# -- special functions ---------------------------------------------------------------------------
def erf(x):
    """The error function, elementwise, to double precision: scipy.special.erf on numpy arrays,
    cupyx.scipy.special.erf on CuPy arrays (vectorised; the exact GELU and its backward)."""
    y = _backend.special_functions(_backend.xp_of(x)).erf(x)
    return y if y.dtype == x.dtype else y.astype(x.dtype)


# Phi(x) = (1 + tanh(y(x))) / 2 with y = atanh(erf(x / sqrt 2)) fitted as x P(x^2), P of degree
# 6 on [0, 6], weighted by dPhi/dy (bench/tuning/gelu_fit.py): Phi within 1.1e-7 evaluated in
# float32 (tests/test_kernels.py holds 2e-7), ~17 passes with numpy's SIMD tanh, where scipy's
# float32 erf computes in double at ~25x the cost of an exp. y(6) ~ 11.8 saturates tanh, so
# Phi is exactly 0 or 1 beyond |x| = 6.
_GELU_Y = (0.797884941506323, 0.03633308433827828, -3.2594677859788584e-05,
           -5.53063348473095e-05, 3.964773244930185e-06, -1.3226586842609916e-07,
           1.7562476514490917e-09)


def _horner(coefficients, t):
    c = t.dtype.type
    out = t * c(coefficients[-1])
    out += c(coefficients[-2])
    for a in coefficients[-3::-1]:
        out *= t
        out += c(a)
    return out


def gelu_cdf(x):
    """Phi(x) = (1 + erf(x / sqrt(2))) / 2, the exact GELU's gate: the fitted tanh form above
    on float32 / float16 numpy arrays, ``erf`` (double precision) on float64 and CuPy arrays.
    Its passes run block by block (on the CPU's threads when the array is large), each block's
    temporaries staying in cache."""
    if x.__class__ is not np.ndarray or x.dtype == np.float64 or x.ndim == 0:
        return 0.5 * (1 + erf(x * x.dtype.type(1 / math.sqrt(2))))
    if x.dtype != np.float32:   # float16: the chains need float32's range and precision
        return gelu_cdf(x.astype(np.float32)).astype(x.dtype)
    if (y := _cpu_kernels.call("gelu_cdf", x)) is not None:
        return y
    out = _parallel.elementwise(_gelu_cdf32, (x,), alone=True, into=True)
    return _gelu_cdf32(x) if out is None else out


def gelu_bwd_cdf(x, cdf, gy):
    """gx = gy (Phi(x) + x phi(x)) of the exact GELU with Phi(x) = ``cdf`` kept from the
    forward (numpy arrays)."""
    if (y := _cpu_kernels.call("gelu_bwd_cdf", x, cdf, gy)) is not None:
        return y
    g = x * x
    g *= x.dtype.type(-0.5)
    np.exp(g, out=g)
    g *= x.dtype.type(1 / math.sqrt(2 * math.pi))
    g *= x
    g += cdf
    return gy * g


def _gelu_cdf32(x, out=None):
    c = x.dtype.type
    z = np.clip(x, c(-6), c(6))
    y = _horner(_GELU_Y, z * z)
    y *= z
    out = np.tanh(y, out=y if out is None else out)
    out *= c(0.5)
    out += c(0.5)
    return out
