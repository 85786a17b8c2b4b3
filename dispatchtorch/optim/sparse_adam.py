"""SparseAdam, PyTorch's algorithm: Adam that updates only the entries a sparse
gradient holds (its moments and the parameter stay as they were elsewhere).

dispatchtorch has no sparse tensors, so gradients arrive dense: the entries a sparse
gradient would hold are taken to be the nonzero ones (for an Embedding's gradient,
the looked-up rows). PyTorch, given a dense gradient, raises instead.
"""
from __future__ import annotations

from .. import ops as _ops
from ._checks import check_nonnegative
from .optimizer import Optimizer


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        check_nonnegative(lr=lr, eps=eps)
        for i in (0, 1):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))

    def _step_group(self, key, group, params):
        for p in params:             # a mask per parameter: never on flat buffers
            g = p.grad.neg() if group["maximize"] else p.grad
            p.add_(self._rule(group, p, g, self.state[p], False))

    def _rule(self, group, p, g, state, owned):
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = _ops.zeros_like(p)
            state["exp_avg_sq"] = _ops.zeros_like(p)
        state["step"] += 1
        step = state["step"]
        held = (g != 0).to(g.dtype)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.add_(((g - exp_avg) * held).mul_(1 - beta1))
        exp_avg_sq.add_(((g * g - exp_avg_sq) * held).mul_(1 - beta2))
        denom = (exp_avg_sq * held).sqrt_().add_(group["eps"])
        step_size = group["lr"] * (1 - beta2 ** step) ** 0.5 / (1 - beta1 ** step)
        return (exp_avg * held).div_(denom).mul_(-step_size)
