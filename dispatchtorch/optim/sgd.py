"""SGD with momentum, dampening, Nesterov, weight decay and maximize (PyTorch's rule)."""
from __future__ import annotations

from .optimizer import Optimizer, grads_of


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

    def _update(self, group, params):
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        wd, nesterov = group["weight_decay"], group["nesterov"]
        for p, g in zip(params, grads_of(params, group["maximize"])):
            if wd:
                g = g + p * wd
            if momentum:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = g.detach().clone()
                else:
                    buf.mul_(momentum).add_(g, alpha=1 - dampening)
                g = g + buf * momentum if nesterov else buf
            p.add_(g, alpha=-lr)
