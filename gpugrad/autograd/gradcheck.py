"""Finite-difference checks of analytic gradients (use float64 inputs)."""
from __future__ import annotations

import numpy as np


class GradcheckError(RuntimeError):
    """A Jacobian computed by backward differs from the finite-difference one."""


def _inputs(inputs):
    from ..tensor import Tensor
    return (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)


def _outputs(out):
    from ..tensor import Tensor
    return (out,) if isinstance(out, Tensor) else tuple(o for o in out if isinstance(o, Tensor))


def _host(a):
    return a if isinstance(a, np.ndarray) else a.get()


def _numerical(fn, inputs, eps):
    """Jacobians d out_k / d in_i by central differences: J[i][k] has shape (n_in, n_out).

    ``fn`` runs in the caller's grad mode: gradgradcheck's ``fn`` itself calls autograd.grad.
    The perturbations are written straight into the input arrays (no autograd involved)."""
    outs = [_host(o._data).astype(np.float64).ravel() for o in _outputs(fn(*inputs))]
    jac = []
    for t in inputs:
        per_out = [np.zeros((t.numel(), o.size)) for o in outs]
        if getattr(t, "_rg", False):
            a = t._data
            for j in range(a.size):
                # index the array itself: reshape(-1) of a non-contiguous array is a copy,
                # and a perturbation written there would never reach fn
                at = np.unravel_index(j, a.shape)
                orig = a[at].item()
                a[at] = orig + eps
                plus = [_host(o._data).astype(np.float64).ravel() for o in _outputs(fn(*inputs))]
                a[at] = orig - eps
                minus = [_host(o._data).astype(np.float64).ravel()
                         for o in _outputs(fn(*inputs))]
                a[at] = orig
                for k in range(len(outs)):
                    per_out[k][j] = (plus[k] - minus[k]) / (2 * eps)
        jac.append(per_out)
    return jac


def _analytical(fn, inputs):
    from ..tensor import Tensor
    from . import grad
    outs = _outputs(fn(*inputs))
    diff = [i for i, t in enumerate(inputs) if getattr(t, "_rg", False)]
    jac = [[np.zeros((t.numel(), o.numel())) for o in outs] for t in inputs]
    for k, o in enumerate(outs):
        if not o._rg:
            continue
        xp_ones = o._data.reshape(-1)
        for j in range(o.numel()):
            seed = (xp_ones * 0).reshape(o._data.shape)
            seed.reshape(-1)[j] = 1
            gs = grad([o], [inputs[i] for i in diff], [Tensor._make(seed)], retain_graph=True,
                      allow_unused=True)
            for i, g in zip(diff, gs):
                if g is not None:
                    jac[i][k][:, j] = _host(g._data).astype(np.float64).ravel()
    return jac


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, fast_mode=False, **_ignored) -> bool:
    """Compare backward's Jacobian with central finite differences; raise ``GradcheckError``
    (or return False) on a mismatch."""
    inputs = _inputs(inputs)
    if not any(getattr(t, "_rg", False) for t in inputs):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")
    for i, t in enumerate(inputs):
        if getattr(t, "_rg", False) and t._data.dtype != np.float64:
            import warnings
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating "
                          "point. This check will likely fail if all the inputs are not of "
                          "double precision floating point. ", UserWarning, stacklevel=2)
    num = _numerical(func, inputs, eps)
    ana = _analytical(func, inputs)
    for i, t in enumerate(inputs):
        if not getattr(t, "_rg", False):
            continue
        for k in range(len(num[i])):
            n, a = num[i][k], ana[i][k]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                from ..tensor import Tensor  # printed as tensors, as PyTorch prints them
                raise GradcheckError(f"Jacobian mismatch for output {k} with respect to input "
                                     f"{i},\nnumerical:{Tensor._make(n)}\n"
                                     f"analytical:{Tensor._make(a)}\n")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, **_ignored) -> bool:
    """gradcheck of the function inputs -> d(sum(out * v))/d inputs (second derivatives)."""
    from . import grad
    inputs = _inputs(inputs)
    if not any(getattr(t, "_rg", False) for t in inputs):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")
    outs = _outputs(func(*inputs))
    if grad_outputs is None:
        gen = np.random.default_rng(0)
        grad_outputs = tuple(
            _fixed(gen, o) for o in outs)

    def first_grads(*args):
        from .grad_mode import enable_grad
        ins, gos = args[:len(inputs)], args[len(inputs):]
        with enable_grad():  # the finite differences run this under no_grad
            outs = [o for o in _outputs(func(*ins)) if o._rg]
            rg = [t for t in ins if getattr(t, "_rg", False)]
            gs = grad(outs, rg, [g for g, o in zip(gos, _outputs(func(*ins))) if o._rg],
                      create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_grads, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception)


def _fixed(gen, o):
    from ..tensor import Tensor
    a = np.asarray(gen.standard_normal(o._data.shape), dtype=o._data.dtype)  # 0-d stays an array
    if not isinstance(o._data, np.ndarray):
        from .._backend import to_device
        a = to_device(a, o.device)
    t = Tensor._make(a)
    t.requires_grad = True
    return t
