"""Adagrad, PyTorch's algorithm:

    clr = lr / (1 + (t - 1) lr_decay);  s += g^2;  p -= clr g / (sqrt(s) + eps)
"""
from __future__ import annotations

from .. import ops as _ops
from .optimizer import Optimizer, step_count


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        for name, v in (("learning rate", lr), ("lr_decay value", lr_decay),
                        ("weight_decay value", weight_decay),
                        ("initial_accumulator_value value", initial_accumulator_value),
                        ("epsilon value", eps)):
            if v < 0.0:
                raise ValueError(f"Invalid {name}: {v}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, fused=fused))
        for group in self.param_groups:      # PyTorch creates Adagrad's state eagerly
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _ops.tensor(0.0)
                state["sum"] = _ops.full_like(p, float(group["initial_accumulator_value"]))

    def _rule(self, group, p, g, state, owned):
        step = step_count(state)
        if group["weight_decay"]:
            g = g + p * group["weight_decay"]
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        state["sum"].add_(g * g)
        return (g / state["sum"].sqrt().add_(group["eps"])).mul_(-clr)
