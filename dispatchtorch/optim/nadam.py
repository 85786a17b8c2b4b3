"""NAdam, PyTorch's algorithm (Dozat 2016, with momentum decay):

    mu_t = b1 (1 - 0.5 * 0.96^(t psi));  m = lerp(m, g, 1 - b1);  v = b2 v + (1 - b2) g^2
    p -= lr (1 - mu_t) / (1 - prod mu) g / d + lr mu_{t+1} / (1 - prod mu * mu_{t+1}) m / d,
    d = sqrt(v / (1 - b2^t)) + eps
"""
from __future__ import annotations

from .. import ops as _ops
from ._checks import check_betas, check_nonnegative
from .optimizer import Optimizer, step_count, weight_decay_terms


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        check_nonnegative(lr=lr, eps=eps)
        check_betas(betas)
        check_nonnegative(weight_decay=weight_decay, momentum_decay=momentum_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    def _needs_params(self, group):
        return bool(group["weight_decay"])

    def _rule(self, group, p, g, state, owned):
        lr, (beta1, beta2) = group["lr"], group["betas"]
        if not state:
            state["step"] = _ops.tensor(0.0)
            state["mu_product"] = _ops.tensor(1.0)
            state["exp_avg"] = _ops.zeros_like(g)
            state["exp_avg_sq"] = _ops.zeros_like(g)
        step = step_count(state)
        g, decay = weight_decay_terms(group, p, g)
        psi = group["momentum_decay"]
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * psi)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * psi)))
        mu_product = state["mu_product"]
        mu_product.mul_(mu)
        prod = mu_product.item()
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.lerp_(g, 1 - beta1)
        exp_avg_sq.mul_(beta2).add_((g * g).mul_(1 - beta2))
        denom = exp_avg_sq.div(1 - beta2 ** step).sqrt_().add_(group["eps"])
        delta = (g / denom).mul_(-lr * (1.0 - mu) / (1.0 - prod))
        delta.add_((exp_avg / denom).mul_(-lr * mu_next / (1.0 - prod * mu_next)))
        return delta if decay is None else delta.add_(decay)
