"""Standard Gamma(alpha) samples with the implicit reparameterization gradient, the role
of PyTorch's torch._standard_gamma: the samples are ATen's (ops/random_gamma.py, draw for
draw), the gradient dx/dalpha = -(dF/dalpha) / f(x) for the CDF F(alpha, x) =
igamma(alpha, x) and density f. dF/dalpha has no closed form; it is taken here by a
central difference of igamma in float64 (PyTorch's _standard_gamma_grad uses series and
rational approximations, within about 5e-4 of it)."""
from __future__ import annotations

from .. import _dtype as D
from .. import autograd as _autograd
from .. import ops as _ops
from ..autograd.function import Function
from ..ops.random_gamma import standard_gamma_sample

__all__ = ["standard_gamma"]


def _dsample_dalpha(alpha, x):
    """-(dF/dalpha) / f(x), float64; the step follows F's scale in alpha (alpha below 1,
    sqrt(alpha) above), so alpha - h stays positive and the difference accurate."""
    h = 1e-5 * _ops.where(alpha < 1, alpha, alpha.sqrt())
    dF = (_ops.igamma(alpha + h, x) - _ops.igamma(alpha - h, x)) / (2 * h)
    log_pdf = (alpha - 1) * x.log() - x - _ops.lgamma(alpha)
    return -dF / log_pdf.exp()


class _StandardGamma(Function):
    @staticmethod
    def forward(ctx, alpha):
        x = standard_gamma_sample(alpha.detach().contiguous())
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        alpha, x = ctx.saved_tensors
        with _autograd.no_grad():
            g = _dsample_dalpha(alpha.to(D.float64), x.to(D.float64)).to(alpha.dtype)
        return grad * g


def standard_gamma(alpha):
    """Gamma(alpha, 1) samples of alpha's shape and dtype (PyTorch's numbers for a
    seed), differentiable in alpha."""
    return _StandardGamma.apply(alpha)


def standard_gamma_grad(alpha, x):
    """d sample / d alpha at the sample x (PyTorch's torch._standard_gamma_grad)."""
    return _dsample_dalpha(alpha.to(D.float64), x.to(D.float64)).to(alpha.dtype)
