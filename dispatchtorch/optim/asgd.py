"""ASGD, PyTorch's algorithm (averaged SGD, Polyak & Juditsky 1992):

    p = p (1 - lambd eta) - eta g;  ax += mu (p - ax)   (ax = p while mu == 1)
    eta = lr / (1 + lambd lr t)^alpha;  mu = 1 / max(1, t - t0)
"""
from __future__ import annotations

from .. import ops as _ops
from ._checks import check_nonnegative
from .optimizer import Optimizer, step_count


class ASGD(Optimizer):
    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        check_nonnegative(lr=lr, weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _needs_params(self, group):
        return True

    def _rule(self, group, p, g, state, owned):
        lr, lambd = group["lr"], group["lambd"]
        if not state:
            state["step"] = _ops.tensor(0.0)
            state["eta"] = _ops.tensor(float(lr))
            state["mu"] = _ops.tensor(1.0)
            state["ax"] = _ops.zeros_like(g)
        step = step_count(state)
        if group["weight_decay"]:
            g = g + p * group["weight_decay"]
        eta, mu = state["eta"].item(), state["mu"].item()
        new_p = (p * (1 - lambd * eta)).sub_(g * eta)
        ax = state["ax"]
        if mu != 1:
            ax.add_((new_p - ax).mul_(mu))
        else:
            ax.copy_(new_p)
        state["eta"].fill_(lr / ((1 + lambd * lr * step) ** group["alpha"]))
        state["mu"].fill_(1 / max(1, step - group["t0"]))
        return new_p.sub_(p)
