"""ExponentialFamily: the base of distributions p(x; theta) = exp(<t(x), theta> - F(theta)
+ k(x)), whose entropy and same-family KL follow from the log normalizer F by autograd."""
from __future__ import annotations

import gpugrad

from .distribution import Distribution
from .utils import sum_rightmost

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Subclasses give ``_natural_params`` (theta, a tuple of tensors),
    ``_log_normalizer(*theta)`` (F) and ``_mean_carrier_measure`` (E[k(x)]).
    H = F(theta) - <theta, grad F(theta)> - E[k(x)] (the Bregman divergence of F)."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        result = -self._mean_carrier_measure
        with gpugrad.enable_grad():
            nparams = [p.detach().requires_grad_() for p in self._natural_params]
            lg_normal = self._log_normalizer(*nparams)
            grads = gpugrad.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for theta, g in zip(nparams, grads):
            result = result - (theta * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result


def kl_expfamily_expfamily(p, q):
    """KL(p || q) = F(theta_q) - F(theta_p) - <theta_q - theta_p, grad F(theta_p)>, for p and q
    of one family"""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    with gpugrad.enable_grad():
        p_nparams = [theta.detach().requires_grad_() for theta in p._natural_params]
        lg_normal = p._log_normalizer(*p_nparams)
        grads = gpugrad.autograd.grad(lg_normal.sum(), p_nparams, create_graph=True)
    q_nparams = q._natural_params
    result = q._log_normalizer(*q_nparams) - lg_normal
    for pnp, qnp, g in zip(p_nparams, q_nparams, grads):
        result = result - sum_rightmost((qnp - pnp) * g, len(q.event_shape))
    return result
