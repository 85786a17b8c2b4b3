"""SGD with momentum, dampening, Nesterov, weight decay and maximize (PyTorch's rule)."""
from __future__ import annotations

from ..ops.optim_ops import fused_sgd_
from .optimizer import Optimizer, by_device_and_dtype


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

    def _fused_step(self, group, params):
        """The group as `_fused_sgd_` calls, one per device and dtype; a first step
        with momentum (whose buffer starts as the gradient) goes per parameter."""
        momentum = group["momentum"]
        if momentum and any(self.state[p].get("momentum_buffer") is None for p in params):
            return False
        if any(p.grad.dtype is not p.dtype for p in params):
            return False
        for ps in by_device_and_dtype(params):
            fused_sgd_(ps, [p.grad for p in ps],
                       [self.state[p]["momentum_buffer"] for p in ps] if momentum else None,
                       lr=float(group["lr"]), momentum=momentum, dampening=group["dampening"],
                       weight_decay=group["weight_decay"], nesterov=group["nesterov"],
                       maximize=group["maximize"])
        return True
