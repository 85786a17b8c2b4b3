"""Adafactor, PyTorch's variant (Shazeer & Stern 2018): second moments kept as row and
column factors for matrices; relative step size min(lr, 1/sqrt(t)) scaled by the
parameter's RMS; updates clipped to RMS d; lr also sets the decoupled weight decay.
Norms are per parameter, so it updates one parameter at a time (never flat buffers)."""
from __future__ import annotations

from .. import _dtype as D
from .. import ops as _ops
from .optimizer import Optimizer


class Adafactor(Optimizer):
    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize))

    def _step_group(self, key, group, params):
        lr, d, wd = group["lr"], group["d"], group["weight_decay"]
        eps1, eps2 = group["eps"]
        for p in params:
            g = p.grad.neg() if group["maximize"] else p.grad
            state = self.state[p]
            if not state:
                state["step"] = _ops.tensor(0.0)
                if g.dim() > 1:
                    state["row_var"] = g.new_zeros(tuple(g.shape[:-1]) + (1,))
                    state["col_var"] = g.new_zeros(tuple(g.shape[:-2]) + (1, g.shape[-1]))
                else:
                    state["variance"] = _ops.zeros_like(g)
            e1 = D.finfo(p.dtype).eps if eps1 is None else eps1
            state["step"].add_(1)
            t = state["step"].item()
            one_minus_beta2_t = t ** group["beta2_decay"]
            rho_t = min(lr, 1 / (t ** 0.5))
            alpha = max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * rho_t
            if wd != 0:
                p.mul_(1 - lr * wd)
            if g.dim() > 1:
                row_var, col_var = state["row_var"], state["col_var"]
                row_var.lerp_(_ops.norm(g, dim=-1, keepdim=True).square_().div_(g.shape[-1]),
                              one_minus_beta2_t)
                col_var.lerp_(_ops.norm(g, dim=-2, keepdim=True).square_().div_(g.shape[-2]),
                              one_minus_beta2_t)
                var_estimate = row_var @ col_var
                var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=e1))
            else:
                state["variance"].lerp_(g * g, one_minus_beta2_t)
                var_estimate = state["variance"].clone()
            update = var_estimate.clamp_(min=e1 * e1).rsqrt_().mul_(g)
            denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
            p.add_(update.mul_(-alpha / denom))
