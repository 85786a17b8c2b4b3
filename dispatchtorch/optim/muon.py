"""Muon, PyTorch's algorithm (Jordan et al. 2024): SGD momentum (Nesterov by default)
whose update is orthogonalised by a few Newton-Schulz iterations in bfloat16, for 2-D
parameters only; decoupled weight decay; lr scaled by the matrix shape."""
from __future__ import annotations

import math

from .. import _dtype as D
from .. import ops as _ops
from .optimizer import Optimizer

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.dim() != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = grad.to(D.bfloat16)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.t()
    x = x.div(x.norm().clamp(min=eps))
    for _ in range(ns_steps):
        gram = x @ x.t()
        gram_update = _ops.addmm(gram, gram, gram, beta=b, alpha=c)
        x = _ops.addmm(x, gram_update, x, beta=a)
    return x.t() if tall else x


def _adjust_lr(lr, adjust_lr_fn, shape):
    A, B = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, A / B))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(A, B))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS,
                 ns_steps=DEFAULT_NS_STEPS, adjust_lr_fn=None):
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                                      nesterov=nesterov, ns_coefficients=ns_coefficients,
                                      eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn))
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def _step_group(self, key, group, params):
        lr, momentum = group["lr"], group["momentum"]
        for p in params:
            g = p.grad
            if g.dim() != 2:
                raise ValueError("Param gradient must be a 2D matrix")
            state = self.state[p]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = _ops.zeros_like(g)
            buf = state["momentum_buffer"]
            buf.lerp_(g, 1 - momentum)
            update = g.lerp(buf, momentum) if group["nesterov"] else buf
            update = _zeropower_via_newtonschulz(update, group["ns_coefficients"],
                                                 group["ns_steps"], group["eps"])
            adjusted = _adjust_lr(lr, group["adjust_lr_fn"], p.shape)
            p.mul_(1 - lr * group["weight_decay"])
            p.add_(update.to(p.dtype) * -adjusted)
