"""L-BFGS (PyTorch's port of minFunc): quasi-Newton steps from the last ``history_size``
curvature pairs, with a fixed step or a strong-Wolfe line search; it calls the closure many
times per ``step``.

The work is on one flat vector of all parameters (numpy or CuPy); scalars (dot products,
losses, step lengths) are Python floats, so float64 runs follow PyTorch to rounding.
"""
from __future__ import annotations

import math

from .. import _backend
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .optimizer import Optimizer


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to ``bounds``
    (default: between x1 and x2); their midpoint when the cubic has no minimum."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square < 0:
        return (lo + hi) / 2.0
    d2 = math.sqrt(d2_square)
    if x1 <= x2:
        min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(min_pos, lo), hi)


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """A step ``t`` along ``d`` meeting the strong Wolfe conditions: bracket, then zoom by cubic
    interpolation. Returns (f_new, g_new, t, evaluations)."""
    d_norm = float(abs(d).max())
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = float(g_new.dot(d))
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = float(g_new.dot(d))
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom: shrink the bracket until a point meets the conditions
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        # NOTE: a trial point too close to an end of the bracket twice in a row (or outside
        # it) moves to 0.1 of the bracket's width from that end.
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = float(g_new.dot(d))
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


class LBFGS(Optimizer):
    """L-BFGS: d = -H g, with H the inverse Hessian estimate from the stored pairs
    (s = t d, y = g_new - g) by the two-loop recursion; x += t d. ``step(closure)`` runs up to
    ``max_iter`` iterations (``max_eval`` closure calls). One parameter group only."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size, line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # -- the parameters as one flat vector ---------------------------------------------------
    def _gather_flat_grad(self):
        xp = _backend.xp_of(self._params[0]._data)
        return xp.concatenate([p._grad._data.reshape(-1) if p._grad is not None
                               else xp.zeros(p._data.size, p._data.dtype) for p in self._params])

    def _add_grad(self, step_size, update):
        offset = 0
        for p in self._params:
            n = p._data.size
            p._data += step_size * update[offset:offset + n].reshape(p._data.shape)
            p._version_box().v += 1
            offset += n

    def _set_param(self, params_data):
        for p, x in zip(self._params, params_data):
            p._data[...] = x
            p._version_box().v += 1

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = float(self._closure(closure))
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure):
        """Minimise along L-BFGS directions; ``closure`` re-evaluates the model, calls
        ``backward`` and returns the loss. Returns the loss of the first evaluation."""
        group = self.param_groups[0]
        lr, max_iter, max_eval = float(group["lr"]), group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]
        # NOTE: the state is global; it lives under the first parameter (PyTorch's layout)
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = self._closure(closure)
        with no_grad():
            self._iterate(state, closure, float(orig_loss), lr, max_iter, max_eval,
                          tolerance_grad, tolerance_change, line_search_fn, history_size)
        return orig_loss

    def _iterate(self, state, closure, loss, lr, max_iter, max_eval, tolerance_grad,
                 tolerance_change, line_search_fn, history_size):
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if float(abs(flat_grad).max()) <= tolerance_grad:
            return
        d, prev_flat_grad = _array(state.get("d")), _array(state.get("prev_flat_grad"))
        old_dirs = [a._data for a in state.get("old_dirs", [])]
        old_stps = [a._data for a in state.get("old_stps", [])]
        t, ro, H_diag = state.get("t"), list(state.get("ro", [])), state.get("H_diag")
        prev_loss = state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro, H_diag = [], [], [], 1
            else:   # update the memory, then d = -H g by the two-loop recursion
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = float(y.dot(s))
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / float(y.dot(y))
                al = state["al"] = list(state.get("al", [None] * history_size))
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = float(old_stps[i].dot(q)) * ro[i]
                    q += -al[i] * old_dirs[i]
                d = r = q * H_diag
                for i in range(len(old_dirs)):
                    be_i = float(old_dirs[i].dot(r)) * ro[i]
                    r += (al[i] - be_i) * old_stps[i]
            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                prev_flat_grad[...] = flat_grad
            prev_loss = loss
            # first iteration: a step no longer than 1 in the l1 norm of the gradient
            t = min(1.0, 1.0 / float(abs(flat_grad).sum())) * lr if state["n_iter"] == 1 else lr
            gtd = float(flat_grad.dot(d))
            if gtd > -tolerance_change:   # not a descent direction (any more)
                break
            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p._data.copy() for p in self._params]
                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    lambda x, t, d: self._directional_evaluate(closure, x, t, d), x_init, t, d,
                    loss, flat_grad, gtd, max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = float(abs(flat_grad).max()) <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:   # the last iteration's loss would go unused
                    loss = float(self._closure(closure))
                    flat_grad = self._gather_flat_grad()
                    opt_cond = float(abs(flat_grad).max()) <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if (n_iter == max_iter or current_evals >= max_eval or opt_cond
                    or float(abs(d * t).max()) <= tolerance_change
                    or abs(loss - prev_loss) < tolerance_change):
                break
        state.update(d=Tensor._make(d), t=t, old_dirs=[Tensor._make(a) for a in old_dirs],
                     old_stps=[Tensor._make(a) for a in old_stps], ro=ro, H_diag=H_diag,
                     prev_flat_grad=Tensor._make(prev_flat_grad), prev_loss=prev_loss)


def _array(t):
    return None if t is None else t._data
