"""Adam and AdamW (amsgrad, maximize), PyTorch's documented algorithm:

    m = b1 m + (1 - b1) g,  v = b2 v + (1 - b2) g^2
    p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)

Adam adds weight_decay * p to g; AdamW multiplies p by (1 - lr * weight_decay) first.
"""
from __future__ import annotations

import math

from .. import ops as _ops
from ..ops.optim_ops import fused_adam_
from .optimizer import Optimizer, by_device_and_dtype, step_count


def _check(lr, betas, eps, weight_decay):
    if lr < 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")
    if eps < 0.0:
        raise ValueError(f"Invalid epsilon value: {eps}")
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
    if weight_decay < 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class Adam(Optimizer):
    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        _check(lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay
                                      or self._decoupled))

    def _rule(self, group, p, g, state, owned):
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        wd = group["weight_decay"]
        decoupled = group.get("decoupled_weight_decay", self._decoupled)
        if not state:
            state["step"] = _ops.tensor(0.0)
            state["exp_avg"] = _ops.zeros_like(g)
            state["exp_avg_sq"] = _ops.zeros_like(g)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = _ops.zeros_like(g)
        step = step_count(state)
        if wd and not decoupled:
            g, owned = g + p * wd, True
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        sq = g * g
        exp_avg.mul_(beta1).add_(g.mul_(1 - beta1) if owned else g * (1 - beta1))
        exp_avg_sq.mul_(beta2).add_(sq.mul_(1 - beta2))
        step_size = lr / (1 - beta1 ** step)
        bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
        second = exp_avg_sq
        if group["amsgrad"]:
            second = state["max_exp_avg_sq"]
            second.copy_(_ops.maximum(second, exp_avg_sq))
        denom = second.sqrt().div_(bias_correction2_sqrt).add_(eps)
        delta = exp_avg.div(denom).mul_(-step_size)
        if wd and decoupled:
            delta.sub_(p * (lr * wd))
        return delta

    def _fused_step(self, group, params):
        """The group as `_fused_adam_` calls, one per device and dtype."""
        amsgrad = group["amsgrad"]
        names = ("step", "exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if amsgrad else ())
        for p in params:
            state = self.state[p]
            if not state:
                state["step"] = _ops.tensor(0.0)
                for name in names[1:]:
                    state[name] = _ops.zeros_like(p)
            elif any(n not in state for n in names) or p.grad.dtype is not p.dtype:
                return False
        steps = [self.state[p]["step"] for p in params]
        if len({id(s) for s in steps}) != len(steps):   # a step count shared (flat state)
            return False
        lr, (beta1, beta2) = group["lr"], group["betas"]
        for ps in by_device_and_dtype(params):
            st = [self.state[p] for p in ps]
            fused_adam_(ps, [p.grad for p in ps], [s["exp_avg"] for s in st],
                        [s["exp_avg_sq"] for s in st],
                        [s["max_exp_avg_sq"] for s in st] if amsgrad else None,
                        [s["step"] for s in st], lr=float(lr), beta1=beta1, beta2=beta2,
                        eps=group["eps"], weight_decay=group["weight_decay"],
                        decoupled=group.get("decoupled_weight_decay", self._decoupled),
                        amsgrad=amsgrad, maximize=group["maximize"])
        return True


class AdamW(Adam):
    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)
