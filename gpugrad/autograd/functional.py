"""``gpugrad.autograd.functional``: Jacobians, Hessians and their products with vectors, built on
``autograd.grad`` as ``torch.autograd.functional`` is (reverse mode; a JVP is the VJP of a VJP).

Inputs and outputs follow PyTorch: a Tensor or a tuple of Tensors each; results mirror that
nesting. Without ``create_graph`` the results are detached; with it they can be differentiated.
"""
from __future__ import annotations

from .grad_mode import enable_grad


def _as_tuple(x, what, fn):
    from ..tensor import Tensor
    single = isinstance(x, Tensor)
    if not single and not isinstance(x, (tuple, list)):
        raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of Tensors "
                        f"but the given {what} has type {type(x)}.")
    xs = (x,) if single else tuple(x)
    for i, t in enumerate(xs):
        if not isinstance(t, Tensor):
            raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of "
                            f"Tensors but the value at index {i} has type {type(t)}.")
    return single, xs


_NO_GRAD = ("Output {} of the user-provided function does not require gradients. The outputs "
            "must be computed in a differentiable manner from the input when running in strict "
            "mode.")
_HESSIAN = ("While computing the hessian, found that the jacobian of the user-provided function "
            "with respect to input {} is independent of the input. This is not allowed in strict "
            "mode. You should ensure that your function is twice differentiable and that the "
            "jacobian depends on the inputs (this would be violated by a linear function for "
            "example).")


def _require_grad(outputs, strict, message=_NO_GRAD):
    """Strict mode: every output must depend on the inputs through the graph."""
    if strict:
        for i, o in enumerate(outputs):
            if not o.requires_grad:
                raise RuntimeError(message.format(i))


def _prepare(inputs, create_graph):
    """Inputs the function is evaluated at: leaves that require grad (views of the caller's
    tensors under ``create_graph``, so the result stays differentiable with respect to them)."""
    return tuple(x.view_as(x) if create_graph and x.requires_grad
                 else x.detach().requires_grad_(True) for x in inputs)


def _grad(outputs, inputs, grad_outputs, create_graph, strict, output=None):
    """d outputs / d inputs contracted with grad_outputs; zeros for inputs the outputs do not
    depend on (an error in strict mode), detached unless ``create_graph``. ``output``: the
    index of the one output differentiated (a Jacobian's row), for strict mode's message."""
    from . import grad
    outs = [o for o in outputs if o.requires_grad]
    gos = [g for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    grads = (grad(outs, inputs, gos, retain_graph=True, create_graph=create_graph,
                  allow_unused=True) if outs else (None,) * len(inputs))
    out = []
    for i, (g, x) in enumerate(zip(grads, inputs)):
        if g is None:
            if strict:
                which = "The output" if output is None else f"Output {output}"
                raise RuntimeError(f"{which} of the user-provided function is independent of "
                                   f"input {i}. This is not allowed in strict mode.")
            g = x.new_zeros(x.shape)
        out.append(g if create_graph else g.detach())
    return tuple(out)


_OUT_SCALAR = "user-provided function returns a single Tensor with a single element."
_IN_SCALAR = "input to the user-provided function is a single Tensor with a single element."


def _vectors(v, like, fn, scalar):
    """``v`` as a tuple; when None, ones, allowed only where ``like`` is one single value."""
    if v is not None:
        return _as_tuple(v, "v", fn)[1]
    if any(x.numel() != 1 for x in like):
        raise RuntimeError(f"The vector v can only be None if the {scalar}")
    return tuple(x.new_ones(x.shape) for x in like)


def _scalar(out, fn):
    _as_tuple(out, "outputs of the user-provided function", fn)
    if not hasattr(out, "numel") or out.numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn} should contain "
                           "a single element")
    return out.reshape(())


def _fill(single_in, result):
    return result[0] if single_in else result


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at ``inputs``."""
    single_in, xs = _as_tuple(inputs, "inputs", "vjp")
    with enable_grad():
        xs = _prepare(xs, create_graph)
        single_out, outs = _as_tuple(func(*xs), "outputs of the user-provided function", "vjp")
        _require_grad(outs, strict)
        vs = _vectors(v, outs, "vjp", _OUT_SCALAR)
        for o, t in zip(outs, vs):
            if o.shape != t.shape:
                raise RuntimeError(f"v has invalid size: should be {o.shape} but got "
                                   f"{t.shape}.")
        g = _grad(outs, xs, vs, create_graph, strict)
    detached = tuple(o if create_graph else o.detach() for o in outs)
    return (detached[0] if single_out else detached), _fill(single_in, g)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, as the VJP of a VJP (the double-
    backward trick: u -> J^T u is linear in u, so its VJP with v is J v)."""
    single_in, xs = _as_tuple(inputs, "inputs", "jvp")
    with enable_grad():
        xs = _prepare(xs, create_graph)
        single_out, outs = _as_tuple(func(*xs), "outputs of the user-provided function", "jvp")
        _require_grad(outs, strict)
        vs = _vectors(v, xs, "jvp", _IN_SCALAR)
        us = tuple(o.new_zeros(o.shape).requires_grad_(True) for o in outs)
        gx = _grad(outs, xs, us, True, strict)
        jv = _grad(gx, us, vs, create_graph, strict)
    detached = tuple(o if create_graph else o.detach() for o in outs)
    return (detached[0] if single_out else detached), (jv[0] if single_out else jv)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """d func(inputs) / d inputs: for one input and one output a Tensor of shape
    ``output.shape + input.shape``; tuples give tuples (outputs outer, inputs inner)."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                         f'Hint: If your strategy is "{strategy}", please use the full name.')
    if strict and vectorize:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                           "`vectorized=True` are not supported together. Please either set "
                           "`strict=False` or `vectorize=False`.")
    from ..ops.shape.joining import stack
    single_in, xs = _as_tuple(inputs, "inputs", "jacobian")
    with enable_grad():
        xs = _prepare(xs, create_graph)
        single_out, outs = _as_tuple(func(*xs), "outputs of the user-provided function",
                                     "jacobian")
        _require_grad(outs, strict, getattr(func, "_strict_message", _NO_GRAD))
        result = []
        for n, o in enumerate(outs):
            flat = o.reshape(-1)
            rows = []
            for k in range(flat.numel()):
                rows.append(_grad((flat[k],), xs, (None,), create_graph, strict, n))
            per_input = []
            for j, x in enumerate(xs):
                if rows:
                    jac = stack([r[j] for r in rows]).reshape(tuple(o.shape) + tuple(x.shape))
                else:
                    jac = x.new_zeros(tuple(o.shape) + tuple(x.shape))
                per_input.append(jac)
            result.append(_fill(single_in, tuple(per_input)))
    return result[0] if single_out else tuple(result)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar ``func`` at ``inputs``: ``input.shape * 2`` for one input; for
    several, a tuple of tuples (block i, j = d2 f / dx_i dx_j)."""
    single_in, xs = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*args):
        out = func(*args)
        _require_grad((out,) if hasattr(out, "requires_grad") else (), strict)
        return _grad((_scalar(out, "hessian"),), args, (None,), True, False)

    gradient._strict_message = _HESSIAN   # its outputs are the gradient's components
    h = jacobian(gradient, xs, create_graph=create_graph, strict=strict)
    return h[0][0] if single_in else h


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar ``func``."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar ``func`` (H is symmetric: the same as ``vhp``)."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(func, inputs, v, create_graph, strict, fn):
    single_in, xs = _as_tuple(inputs, "inputs", fn)
    with enable_grad():
        xs = _prepare(xs, create_graph)
        out = func(*xs)
        _require_grad((out,) if hasattr(out, "requires_grad") else (), strict)
        vs = _vectors(v, xs, fn, _IN_SCALAR)
        from . import grad
        o = _scalar(out, fn)
        jac = (grad((o,), xs, create_graph=True, allow_unused=True) if o.requires_grad
               else (None,) * len(xs))
        _require_grad([j for j in jac if j is not None], strict, _HESSIAN)
        used = [(j, u) for j, u in zip(jac, vs) if j is not None and j.requires_grad]
        hv = _grad(tuple(j for j, _ in used), xs, tuple(u for _, u in used), create_graph,
                   strict)
    return (out if create_graph else out.detach()), _fill(single_in, hv)
