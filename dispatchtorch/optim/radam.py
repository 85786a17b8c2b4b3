"""RAdam, PyTorch's algorithm (Liu et al. 2019): Adam whose adaptive term is used only
once the variance of its estimate is tractable (rho_t > 5), scaled by the rectifier."""
from __future__ import annotations

from .. import ops as _ops
from ._checks import check_betas, check_nonnegative
from .optimizer import Optimizer, step_count, weight_decay_terms


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_nonnegative(lr=lr, eps=eps)
        check_betas(betas)
        check_nonnegative(weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      differentiable=differentiable))

    def _rule(self, group, p, g, state, owned):
        lr, (beta1, beta2) = group["lr"], group["betas"]
        if not state:
            state["step"] = _ops.tensor(0.0)
            state["exp_avg"] = _ops.zeros_like(g)
            state["exp_avg_sq"] = _ops.zeros_like(g)
        step = step_count(state)
        g, decay = weight_decay_terms(group, p, g)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.lerp_(g, 1 - beta1)
        exp_avg_sq.mul_(beta2).add_((g * g).mul_(1 - beta2))
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        corrected = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf /
                    ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive = exp_avg_sq.sqrt().add_(group["eps"]).reciprocal_().mul_(
                bias_correction2 ** 0.5)
            delta = corrected.mul_(lr).mul_(adaptive).mul_(-rect)
        else:
            delta = corrected.mul_(-lr)
        return delta if decay is None else delta.add_(decay)
