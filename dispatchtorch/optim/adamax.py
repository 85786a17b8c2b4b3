"""Adamax, PyTorch's algorithm (Adam with the infinity norm):

    m = lerp(m, g, 1 - b1);  u = max(b2 u, |g| + eps);  p -= lr / (1 - b1^t) * m / u
"""
from __future__ import annotations

from .. import ops as _ops
from ._checks import check_betas, check_nonnegative
from .optimizer import Optimizer, step_count


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        check_nonnegative(lr=lr, eps=eps)
        check_betas(betas)
        check_nonnegative(weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _rule(self, group, p, g, state, owned):
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = _ops.tensor(0.0)
            state["exp_avg"] = _ops.zeros_like(g)
            state["exp_inf"] = _ops.zeros_like(g)
        step = step_count(state)
        if group["weight_decay"]:
            g = g + p * group["weight_decay"]
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        exp_avg.lerp_(g, 1 - beta1)
        exp_inf.copy_(_ops.maximum(exp_inf.mul_(beta2), g.abs().add_(group["eps"])))
        clr = group["lr"] / (1 - beta1 ** step)
        return exp_avg.div(exp_inf).mul_(-clr)
