"""The nn rows of the activations with rows of their own: gelu and silu."""
from __future__ import annotations

import math

from ...autograd.grad_mode import STATE
from ._row import Composite, _same


# -- activations -----------------------------------------------------------------------------------

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _gelu(x, approximate):
    if approximate == "tanh":
        inner = (x + 0.044715 * x * x * x) * _SQRT_2_OVER_PI
        return 0.5 * x * (1.0 + inner.tanh_())
    return 0.5 * x * (1.0 + (x * _SQRT_HALF).erf_())


def _gelu_grad(g, x, approximate):
    if not STATE.enabled and g._dtype is x._dtype and g._shape == x._shape:
        # no graph records the backward: one row, which a backend may fuse
        return GELU_BACKWARD(g, x, approximate=approximate)
    return _gelu_backward(g, x, approximate)


def _gelu_backward(g, x, approximate):
    """gelu's derivative at x times g (the decomposition of the gelu_backward row, and
    the rule's formulas under create_graph=True)."""
    if approximate == "tanh":
        x2 = x * x
        t = ((x + 0.044715 * x2 * x) * _SQRT_2_OVER_PI).tanh()
        dinner = (1.0 + 3 * 0.044715 * x2) * _SQRT_2_OVER_PI
        return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * dinner)
    if STATE.enabled:
        cdf = 0.5 * (1.0 + (x * _SQRT_HALF).erf())
        pdf = (x * x * -0.5).exp() * _INV_SQRT_2PI
        return g * (cdf + x * pdf)
    # g (cdf + x pdf) in two buffers instead of ten
    cdf = (x * _SQRT_HALF).erf_().add_(1.0).mul_(0.5)
    xpdf = (x * x).mul_(-0.5).exp_().mul_(_INV_SQRT_2PI).mul_(x)
    return xpdf.add_(cdf).mul_(g)


def _silu_grad(g, x):
    s = x.sigmoid()
    return g * s * (1.0 + x * (1.0 - s))


def _gelu_check(name, x, **params):
    if not x._dtype.is_floating_point:
        raise NotImplementedError(f"\"GeluKernelImpl\" not implemented for '{x._dtype.pt_name}'")
    return params


GELU = Composite("gelu", ("x",), _gelu, _gelu_grad, _same, "gelu(x, *, approximate)",
                 "x * Phi(x); approximate='tanh' uses the tanh formula", check=_gelu_check)
GELU_BACKWARD = Composite("gelu_backward", ("grad_output", "x"), _gelu_backward, None,
                          lambda g, x, **_: ((x._shape, x._dtype),),
                          "gelu_backward(grad_output, x, *, approximate)",
                          "gelu's derivative at x times grad_output (its backward without "
                          "a graph)")
SILU = Composite("silu", ("x",), lambda x: x * x.sigmoid(), _silu_grad, _same, "silu(x)",
                 "x * sigmoid(x)")
