"""Adadelta, PyTorch's algorithm (Zeiler 2012):

    v = rho v + (1 - rho) g^2;  d = sqrt(u + eps) / sqrt(v + eps) * g
    u = rho u + (1 - rho) d^2;  p -= lr d
"""
from __future__ import annotations

from .. import ops as _ops
from ._checks import check_nonnegative
from .optimizer import Optimizer, step_count


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        check_nonnegative(lr=lr, eps=eps, weight_decay=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, capturable=capturable, foreach=foreach,
                                      differentiable=differentiable))

    def _rule(self, group, p, g, state, owned):
        rho, eps = group["rho"], group["eps"]
        if not state:
            state["step"] = _ops.tensor(0.0)
            state["square_avg"] = _ops.zeros_like(g)
            state["acc_delta"] = _ops.zeros_like(g)
        step_count(state)
        if group["weight_decay"]:
            g = g + p * group["weight_decay"]
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg.mul_(rho).add_((g * g).mul_(1 - rho))
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_().div_(std).mul_(g)
        acc_delta.mul_(rho).add_((delta * delta).mul_(1 - rho))
        return delta.mul_(-group["lr"])
