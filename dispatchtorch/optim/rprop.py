"""Rprop, PyTorch's algorithm (resilient backpropagation): each entry's step size grows
by etaplus while its gradient keeps its sign and shrinks by etaminus when it flips (the
update then skipped); p -= sign(g) * step_size."""
from __future__ import annotations

from .. import ops as _ops
from .optimizer import Optimizer, step_count


class Rprop(Optimizer):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _rule(self, group, p, g, state, owned):
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        if not state:
            state["step"] = _ops.tensor(0.0)
            state["prev"] = _ops.zeros_like(g)
            state["step_size"] = _ops.full_like(g, float(group["lr"]))
        step_count(state)
        prev, step_size = state["prev"], state["step_size"]
        sign = (g * prev).sign()
        sign = _ops.where(sign > 0, etaplus, _ops.where(sign < 0, etaminus, 1.0)).to(g.dtype)
        step_size.mul_(sign).clamp_(step_size_min, step_size_max)
        g = _ops.where(sign == etaminus, 0.0, g)
        prev.copy_(g)
        return g.sign().mul_(step_size).neg_()
