"""Standard Gamma(alpha) samples with the implicit reparameterization gradient, the role
of PyTorch's torch._standard_gamma: dx/dalpha = -(dF/dalpha) / f(x) for the CDF
F(alpha, x) = igamma(alpha, x) and density f. dF/dalpha has no closed form; it is taken
here by a central difference of igamma in float64 (PyTorch's _standard_gamma_grad uses
series and rational approximations). The samples are Marsaglia and Tsang's method in
tensor ops on the default generator (so not PyTorch's numbers, which come from ATen's
own per-element loop)."""
from __future__ import annotations

from .. import _dtype as D
from .. import autograd as _autograd
from .. import ops as _ops
from ..autograd.function import Function

__all__ = ["standard_gamma"]


def _marsaglia_tsang(alpha):
    """Gamma(alpha) draws, float64, for alpha > 0 (boosted by U^(1/alpha) below 1)."""
    boost = alpha < 1
    a = _ops.where(boost, alpha + 1, alpha)
    d = a - 1.0 / 3
    c = 1 / (9 * d).sqrt()
    out = _ops.zeros_like(a)
    todo = _ops.ones_like(a, dtype=D.bool_)
    while bool(todo.any()):
        x = _ops.randn(a.shape, dtype=a.dtype, device=a.device)
        u = _ops.rand(a.shape, dtype=a.dtype, device=a.device)
        v = (1 + c * x) ** 3
        safe_v = _ops.where(v > 0, v, _ops.ones_like(v))
        ok = (v > 0) & (u.log() < 0.5 * x * x + d - d * safe_v + d * safe_v.log())
        take = todo & ok
        out = _ops.where(take, d * safe_v, out)
        todo = todo & ~ok
    u = _ops.rand(a.shape, dtype=a.dtype, device=a.device)
    out = _ops.where(boost, out * u.pow(1 / alpha), out)
    return out


def _dsample_dalpha(alpha, x):
    """-(dF/dalpha) / f(x), float64."""
    h = 1e-5 * alpha.clamp(min=1e-3)
    dF = (_ops.igamma(alpha + h, x) - _ops.igamma(alpha - h, x)) / (2 * h)
    log_pdf = (alpha - 1) * x.log() - x - _ops.lgamma(alpha)
    return -dF / log_pdf.exp()


class _StandardGamma(Function):
    @staticmethod
    def forward(ctx, alpha):
        a64 = alpha.detach().to(D.float64)
        x = _marsaglia_tsang(a64).to(alpha.dtype)
        x = x.clamp(min=D.finfo(alpha.dtype).tiny)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        alpha, x = ctx.saved_tensors
        with _autograd.no_grad():
            g = _dsample_dalpha(alpha.to(D.float64), x.to(D.float64)).to(alpha.dtype)
        return grad * g


def standard_gamma(alpha):
    """Gamma(alpha, 1) samples of alpha's shape, differentiable in alpha."""
    return _StandardGamma.apply(alpha)


def standard_gamma_grad(alpha, x):
    """d sample / d alpha at the sample x (PyTorch's torch._standard_gamma_grad)."""
    return _dsample_dalpha(alpha.to(D.float64), x.to(D.float64)).to(alpha.dtype)
