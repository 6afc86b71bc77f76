"""``gpugrad.func``: PyTorch's function transforms (``torch.func``) on gpugrad's reverse-mode
engine: ``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``,
``vmap``, ``linearize``, ``functional_call`` and ``stack_module_state``.

Transforms compose (``grad(grad(f))``, ``vmap(grad(f))`` for per-sample gradients): inside a
transform every inner one builds the graph of its result, so the outer one can differentiate
it; at the outermost level results come back detached unless an input required grad.

Two honest differences from PyTorch's implementations: ``vmap`` runs the function once per
slice and stacks the results (the same values, without batching rules: as fast as the loop it
replaces, no faster), and ``jacfwd``/``jvp`` are computed in reverse mode (the same values).
A custom ``autograd.Function`` under ``vmap`` must say it supports it, as in PyTorch
(``setup_context`` and ``generate_vmap_rule = True``, or a ``vmap`` staticmethod); either way it
runs once per slice (its ``vmap`` staticmethod is not called).
"""
from __future__ import annotations

import contextlib

from .autograd import function as _function
from .autograd import functional as _functional
from .autograd import grad as _autograd_grad
from .autograd.grad_mode import enable_grad
from .autograd.grad_mode import state as _grad_state
from .tensor import Tensor

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "linearize", "stack_module_state", "vjp", "vmap"]

_depth = [0]   # transforms being evaluated around the current call


@contextlib.contextmanager
def _inside():
    _depth[0] += 1
    try:
        with enable_grad():
            yield
    finally:
        _depth[0] -= 1


# -- pytrees: tensors in nested tuples, lists and dicts ---------------------------------------
def _flatten(tree):
    """(leaves, rebuild): ``rebuild(new_leaves)`` puts new leaves in the same structure."""
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(t) for t in tree]
        leaves = [leaf for p in parts for leaf in p[0]]

        def rebuild(new, parts=parts, kind=type(tree)):
            out, i = [], 0
            for p in parts:
                out.append(p[1](new[i:i + len(p[0])]))
                i += len(p[0])
            return kind(out)
        return leaves, rebuild
    if isinstance(tree, dict):
        keys = list(tree)
        leaves, rebuild_values = _flatten([tree[k] for k in keys])
        return leaves, lambda new: dict(zip(keys, rebuild_values(new)))
    return [tree], lambda new: new[0]


def _tensors(tree):
    leaves, rebuild = _flatten(tree)
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(leaf)}")
    return leaves, rebuild


def _tracked(leaves):
    """The leaves as the function will see them: differentiable with respect to themselves,
    and still tied to any outer graph they belong to."""
    return [x.view_as(x) if x.requires_grad else x.detach().requires_grad_(True)
            for x in leaves]


def _keep_graph(leaves) -> bool:
    return _depth[0] > 0 or (_grad_state.enabled and any(x.requires_grad for x in leaves))


def _argnums(argnums, args):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not -len(args) <= a < len(args):
            raise RuntimeError(f"Got argnum={a}, but only {len(args)} positional inputs")
    return nums


# -- gradients ----------------------------------------------------------------------------------
def grad_and_value(func, argnums=0, has_aux=False):
    """``f -> (d f / d args[argnums], f(args))`` for a function returning a scalar tensor
    (``((grad, (value, aux))`` with ``has_aux``)."""
    def wrapper(*args, **kwargs):
        nums = _argnums(argnums, args)
        args = list(args)
        picked = [_tensors(args[a]) for a in nums]
        keep = _keep_graph([x for leaves, _ in picked for x in leaves])
        inputs = []
        for a, (leaves, rebuild) in zip(nums, picked):
            tracked = _tracked(leaves)
            inputs.append(tracked)
            args[a] = rebuild(tracked)
        with _inside():
            out = func(*args, **kwargs)
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("grad_and_value(f)(*args): output of function f should be a "
                                   "tuple: (output, aux) if has_aux is True")
            out, aux = out
        if not isinstance(out, Tensor) or out.dim() != 0:
            dims = f"tensor with {out.dim()} dims" if isinstance(out, Tensor) else type(out)
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar "
                               f"Tensor, got {dims}. Maybe you wanted to use the vjp or jacrev "
                               f"APIs instead?")
        flat = [x for xs in inputs for x in xs]
        gs = (_autograd_grad(out, flat, create_graph=keep, allow_unused=True)
              if out.requires_grad else (None,) * len(flat))
        gs = [x.new_zeros(x.shape) if g is None else g if keep else g.detach()
              for g, x in zip(gs, flat)]
        grads, i = [], 0
        for (leaves, rebuild) in picked:
            grads.append(rebuild(gs[i:i + len(leaves)]))
            i += len(leaves)
        grads = grads[0] if isinstance(argnums, int) else tuple(grads)
        value = out if keep else out.detach()
        return (grads, (value, aux)) if has_aux else (grads, value)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """``f -> d f / d args[argnums]`` (``(grad, aux)`` with ``has_aux``)."""
    both = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = both(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` is the tuple of the primals'
    gradients of ``<func(*primals), cotangents>``."""
    leaves, rebuild = _tensors(list(primals))
    keep = _keep_graph(leaves)
    tracked = _tracked(leaves)
    with _inside():
        out = func(*rebuild(tracked))
    aux = None
    if has_aux:
        out, aux = out
    outs, _ = _tensors(out)

    def vjp_fn(cotangents):
        cots, _ = _tensors(cotangents)
        pairs = [(o, c) for o, c in zip(outs, cots) if o.requires_grad]
        gs = (_autograd_grad([o for o, _ in pairs], tracked, [c for _, c in pairs],
                             retain_graph=True, create_graph=keep, allow_unused=True)
              if pairs else (None,) * len(tracked))
        gs = [x.new_zeros(x.shape) if g is None else g if keep else g.detach()
              for g, x in zip(gs, tracked)]
        return tuple(rebuild(gs))
    value = out if keep else _detach(out)
    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def _detach(tree):
    leaves, rebuild = _flatten(tree)
    return rebuild([x.detach() if isinstance(x, Tensor) else x for x in leaves])


def jvp(func, primals, tangents, *, has_aux=False):
    """``(func(*primals), J(primals) @ tangents)``."""
    if has_aux:
        raise NotImplementedError("gpugrad.func.jvp: has_aux is not supported")
    keep = _keep_graph(list(primals))
    with _inside():
        out, tangent_out = _functional.jvp(lambda *xs: func(*xs), tuple(primals),
                                           tuple(tangents), create_graph=True)
    return (out, tangent_out) if keep else (_detach(out), _detach(tangent_out))


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``; ``jvp_fn(*tangents)`` is J(primals) @ tangents. Each call
    of ``jvp_fn`` re-evaluates ``func`` at the primals (through ``jvp``) instead of replaying a
    traced graph: the same values, at the cost of one forward and two backward passes."""
    output = func(*primals)
    flat, _ = _tensors(list(primals))
    meta = [(p.shape, p.device, p.dtype) for p in flat]

    def jvp_fn(*tangents):
        flat_t, _ = _tensors(list(tangents))
        if len(flat_t) != len(meta):
            raise RuntimeError(f"Expected the tangents to have the same structure as the "
                               f"primals ({len(meta)} tensors), got {len(flat_t)} tensors")
        for idx, (t, (shape, device, dtype)) in enumerate(zip(flat_t, meta)):
            for what, mine, theirs in (("shape", t.shape, shape), ("device", t.device, device),
                                       ("dtype", t.dtype, dtype)):
                if mine != theirs:
                    raise RuntimeError(f"tangent:{idx} with {what} {mine} in flattened pytree "
                                       f"doesn't match the {what} {theirs} of the "
                                       f"corresponding primal.")
        return jvp(func, primals, tangents)[1]
    return output, jvp_fn


def jacrev(func, argnums=0, has_aux=False):
    """``f -> d f / d args[argnums]`` as a full Jacobian (output shape + input shape)."""
    if has_aux:
        raise NotImplementedError("gpugrad.func.jacrev: has_aux is not supported")

    def wrapper(*args):
        nums = _argnums(argnums, args)
        keep = _keep_graph([args[a] for a in nums])

        def of_picked(*picked):
            full = list(args)
            for a, x in zip(nums, picked):
                full[a] = x
            return func(*full)
        with _inside():
            jac = _functional.jacobian(of_picked, tuple(args[a] for a in nums),
                                       create_graph=True)
        jac = jac if isinstance(argnums, int) else tuple(jac)
        if isinstance(argnums, int) and isinstance(jac, tuple) and len(jac) == 1:
            jac = jac[0]
        return jac if keep else _detach(jac)
    return wrapper


jacfwd = jacrev   # the same Jacobian; computed in reverse mode (see the module docstring)


def hessian(func, argnums=0):
    """The Jacobian of the Jacobian of ``func`` with respect to ``args[argnums]``."""
    return jacfwd(jacrev(func, argnums), argnums)


# -- vmap ---------------------------------------------------------------------------------------
def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` over a batch dimension: ``in_dims`` per argument (an int, or None for an
    argument shared by every slice), ``out_dims`` per output. Runs ``func`` once per slice."""
    name = getattr(func, "__name__", repr(func))

    def wrapper(*args, **kwargs):
        dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                             f"compatible with the structure of `inputs`. in_dims has "
                             f"{len(dims)} entries but inputs has {len(args)}.")
        mapped, sizes = [], []
        for arg, d in zip(args, dims):
            leaves, rebuild = _flatten(arg)
            if d is not None:
                for x in leaves:
                    if not isinstance(x, Tensor):
                        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got "
                                         f"in_dim={d} for an input but the input is of type "
                                         f"{type(x)}. We cannot vmap over non-Tensor arguments")
                    if not -x.dim() <= d < max(x.dim(), 0) or x.dim() == 0:
                        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got "
                                         f"in_dim={d} for some input, but that input is a Tensor "
                                         f"of dimensionality {x.dim()} so expected in_dim to "
                                         f"satisfy -{x.dim()} <= in_dim < {x.dim()}.")
                    sizes.append(x.shape[d])
            mapped.append((leaves, rebuild, d))
        if not sizes:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): at least one "
                             f"input must be a Tensor mapped over a dimension (in_dim not None)")
        if len(set(sizes)) != 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                             f"dimension, got sizes {sizes} for the mapped dimension")
        results = []
        tr = _function.transforms   # a custom Function applied inside checks its vmap support
        tr.vmap_depth += 1
        try:
            for i in range(sizes[0]):
                call = [rebuild([_select(x, d, i) for x in leaves]) if d is not None
                        else rebuild(leaves) for leaves, rebuild, d in mapped]
                results.append(func(*call, **kwargs))
        finally:
            tr.vmap_depth -= 1
        return _stack(results, out_dims)
    return wrapper


def _select(x, d, i):
    d = d % x.dim()
    return x[(slice(None),) * d + (i,)]


def _stack(results, out_dims):
    from .ops.shape.joining import stack
    first, rebuild = _flatten(results[0])
    per = [_flatten(r)[0] for r in results]
    dims = out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * len(first)
    return rebuild([stack([p[k] for p in per], dim=dims[k]) for k in range(len(first))])


# -- functional_call ----------------------------------------------------------------------------
def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the named parameters and buffers replaced by the given
    tensors for the duration of the call (the module is left as it was)."""
    dicts = (parameter_and_buffer_dicts if isinstance(parameter_and_buffer_dicts, (tuple, list))
             else (parameter_and_buffer_dicts,))
    values = {}
    for d in dicts:
        for k, v in d.items():
            if k in values:
                raise ValueError(f"{k} appeared in multiple dictionaries; behavior of "
                                 f"functional call is ambiguous")
            values[k] = v
    if strict:
        names = {n for n, _ in module.named_parameters()} | {n for n, _ in module.named_buffers()}
        missing, unexpected = sorted(names - set(values)), sorted(set(values) - names)
        if missing or unexpected:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}: "
                               f"missing keys {missing}, unexpected keys {unexpected}")
    swapped = []
    try:
        for name, value in values.items():
            owner_path, _, attr = name.rpartition(".")
            owner = module.get_submodule(owner_path)
            store = owner._parameters if attr in owner._parameters else owner._buffers \
                if attr in owner._buffers else None
            if store is None:
                raise AttributeError(f"{type(owner).__name__} has no parameter or buffer "
                                     f"`{attr}`")
            swapped.append((store, attr, store[attr]))
            store[attr] = value
        args = args if isinstance(args, tuple) else () if args is None else (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for store, attr, old in reversed(swapped):
            store[attr] = old


def stack_module_state(models):
    """``(params, buffers)``: for each name, the tensors of every model stacked along a new
    dim 0 (stacked parameters are new leaves requiring grad), for ``vmap`` over an ensemble
    with ``functional_call``."""
    from .ops.shape.joining import stack
    models = list(models)
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(tensors, name):
        flags = {t.requires_grad for t in tensors}
        if len(flags) > 1:
            raise RuntimeError(f"Expected {name} from each model to have the same "
                               f".requires_grad")
        out = stack(tensors)
        return out.detach().requires_grad_() if flags == {True} else out

    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {k: stacked([p[k] for p in all_params], k) for k in all_params[0]}
    buffers = {k: stacked([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers
