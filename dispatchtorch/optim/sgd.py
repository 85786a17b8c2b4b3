"""SGD with momentum, dampening, Nesterov, weight decay and maximize (PyTorch's rule)."""
from __future__ import annotations

from .optimizer import Optimizer


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def _rule(self, group, p, g, state, owned):
        momentum, wd = group["momentum"], group["weight_decay"]
        if wd:
            g, owned = g + p * wd, True
        if momentum:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = g.clone()
                state["momentum_buffer"] = buf
            else:
                buf.mul_(momentum).add_(g, alpha=1 - group["dampening"])
            if group["nesterov"]:
                g, owned = g + buf * momentum, True
            else:
                g, owned = buf, False
        return g.mul_(-group["lr"]) if owned else g * -group["lr"]
