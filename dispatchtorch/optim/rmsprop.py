"""RMSprop (centered, momentum, weight decay, maximize), PyTorch's algorithm:

    v = alpha v + (1 - alpha) g^2;  centered: avg = sqrt(v - mean(g)^2) + eps, else sqrt(v) + eps
    momentum: b = momentum b + g / avg, p -= lr b;  else p -= lr g / avg
"""
from __future__ import annotations

from .. import ops as _ops
from .optimizer import Optimizer, step_count


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        for name, v in (("learning rate", lr), ("epsilon value", eps), ("momentum value", momentum),
                        ("weight_decay value", weight_decay), ("alpha value", alpha)):
            if v < 0.0:
                raise ValueError(f"Invalid {name}: {v}")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered, capturable=capturable,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable))

    def _rule(self, group, p, g, state, owned):
        alpha, momentum, wd = group["alpha"], group["momentum"], group["weight_decay"]
        if not state:
            state["step"] = _ops.tensor(0.0)
            state["square_avg"] = _ops.zeros_like(g)
            if momentum > 0:
                state["momentum_buffer"] = _ops.zeros_like(g)
            if group["centered"]:
                state["grad_avg"] = _ops.zeros_like(g)
        step_count(state)
        if wd:
            g = g + p * wd
        square_avg = state["square_avg"]
        square_avg.mul_(alpha).add_((g * g).mul_(1 - alpha))
        if group["centered"]:
            grad_avg = state["grad_avg"]
            grad_avg.mul_(alpha).add_(g, alpha=1 - alpha)
            avg = (square_avg - grad_avg * grad_avg).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg.add_(group["eps"])
        if momentum > 0:
            buf = state["momentum_buffer"]
            buf.mul_(momentum).add_(g / avg)
            return buf * -group["lr"]
        return (g / avg).mul_(-group["lr"])
