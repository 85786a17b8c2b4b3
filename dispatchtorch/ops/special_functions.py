"""Special functions: the gamma family, Bessel functions, the normal distribution's
functions and friends. Prims where a backend needs its own kernel (scipy.special on the
CPU reference, cupyx.scipy.special on CUDA), composites for the rest (polygamma through
zeta, mvlgamma, entr, xlog1py, ndtr, spherical_bessel_j0). Derivatives as PyTorch's
derivatives.yaml writes them; where PyTorch has none the op is not differentiable."""
from __future__ import annotations

import math

from .. import _dtype as D
from .._tensor import Tensor
from ._composite import composite, run
from ..dispatch.registry import Forms, form_of
from ._elementwise import _SPECS as _ROWS, define
from .pointwise import forms_of, write_out
from ._out import takes_out

F = dict(dtypes="float", promote="int_to_float")
# domain: where each function and its derivative are finite and smooth (the unit tests and
# the conformance suite draw their values there)
SQRT_2PI = math.sqrt(2 * math.pi)
NO_GRAD = dict(differentiable=False)
# forms of the special_* rows (torch.special.<x> only, see Forms)
SP = Forms(inplace=False)
_FIRST = len(_ROWS)        # the elementwise rows from here on are this module's


def _i1_grad(g, x, result):
    safe = pointwise.where(x == 0, 1.0, x)
    return g * pointwise.where(x == 0, 0.5, i0(x) - result / safe)


def _i1e_grad(g, x, result):
    safe = pointwise.where(x == 0, 1.0, x)
    return g * pointwise.where(x == 0, 0.5, special_i0e(x) - result * (x.sign() + 1 / safe))


LGAMMA = define("lgamma", domain=(0.1, 6), forms=Forms(special=("gammaln",)),
                grad=lambda g, x: g * digamma(x), **F)
DIGAMMA = define("digamma", domain=(0.1, 6), forms=Forms(special=("digamma", "psi")),
                 grad=lambda g, x: g * polygamma(1, x), **F)
I0 = define("i0", domain=(-4, 4), forms=Forms(special=("i0", "modified_bessel_i0")),
            grad=lambda g, x: g * special_i1(x), **F)
I0E = define("special_i0e", domain=(-4, 4), forms=SP,
             grad=lambda g, x, result: g * (special_i1e(x) - x.sign() * result), **F)
I1 = define("special_i1", domain=(-4, 4),
            forms=Forms(inplace=False, special=("modified_bessel_i1",)), grad=_i1_grad, **F)
I1E = define("special_i1e", domain=(-4, 4), forms=SP, grad=_i1e_grad, **F)
ERFCX = define("special_erfcx", domain=(-2, 4), forms=SP,
               grad=lambda g, x, result: g * (2 * x * result - 2 / math.sqrt(math.pi)), **F)
NDTRI = define("special_ndtri", domain=(0.05, 0.95), forms=SP,
               grad=lambda g, result: g * SQRT_2PI * pointwise.exp(result * result / 2), **F)
LOG_NDTR = define("special_log_ndtr", domain=(-6, 4), forms=SP,
                  grad=lambda g, x, result: g * pointwise.exp(-(x * x) / 2 - result) / SQRT_2PI, **F)
_BESSEL = {n: define(n, domain=d, forms=SP, **F, **NO_GRAD) for n, d in (
    ("special_bessel_j0", (-8, 8)), ("special_bessel_j1", (-8, 8)),
    ("special_bessel_y0", (0.2, 8)), ("special_bessel_y1", (0.2, 8)),      # y, k: x > 0
    ("special_modified_bessel_k0", (0.2, 5)), ("special_modified_bessel_k1", (0.2, 5)),
    ("special_scaled_modified_bessel_k0", (0.2, 5)),
    ("special_scaled_modified_bessel_k1", (0.2, 5)), ("special_airy_ai", (-6, 4)))}

B = ("a", "b")
ZETA = define("special_zeta", args=B, forms=SP, **F, domain=((1.5, 4), (0.5, 3)),
              grad=lambda g, a, b, needs: (None, g * -a * special_zeta(a + 1.0, b)
                                           if needs[1] else None))


def _igamma_grad(sign):
    def grad(g, a, b, needs):
        if needs[0]:
            raise NotImplementedError("the derivative for 'igamma' with respect to 'self' (a) "
                                      "is not implemented.")
        return None, sign * g * pointwise.exp(-b + (a - 1) * pointwise.log(b) - lgamma(a))
    return grad


IGAMMA = define("igamma", args=B, domain=(0.5, 3),
                forms=Forms(scalars="none", special=("gammainc",)), grad=_igamma_grad(1), **F)
IGAMMAC = define("igammac", args=B, domain=(0.5, 3),
                 forms=Forms(scalars="none", special=("gammaincc",)), grad=_igamma_grad(-1), **F)
# PyTorch passes the gradient through to a (the result moves by one ulp at most)
NEXTAFTER = define("nextafter", args=B, forms=Forms(scalars="none"), grad=lambda g: (g, None))

# the function and in-place forms, made from the rows; each row's function by its name
FUNCTIONS, INPLACE = forms_of(_ROWS[_FIRST:])
globals().update({s.name: s.op.function for s in _ROWS[_FIRST:]})


# -- composites ----------------------------------------------------------------------------

def _polygamma(x, n):
    if n == 0:
        return digamma(x)
    return ((-1) ** (n + 1) * math.factorial(n)) * special_zeta(float(n + 1), x)


POLYGAMMA = composite("polygamma", _polygamma, kind="elementwise", args=("x",),
                      grad=lambda g, x, n: g * polygamma(n + 1, x), dtypes="float", promote="int_to_float",
                      forms=Forms(written=True, special=("polygamma",)), domain=(0.5, 4),
                      signature="polygamma(n, x)",
                      doc="n-th derivative of digamma: (-1)^(n+1) n! zeta(n + 1, x) (n >= 1)")


@form_of(POLYGAMMA)
def polygamma(n, input, *, out=None):
    if not isinstance(input, Tensor):
        raise TypeError(f"polygamma(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    x = input if input.dtype.is_floating_point else input.to(D.get_default_dtype())
    return write_out(out, run(POLYGAMMA, (x,), {"n": int(n)}))


@takes_out("mvlgamma", dtype="safe")
def mvlgamma(input, p):
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if not input.dtype.is_floating_point:
        raise RuntimeError("mvlgamma: input must be a floating point tensor")
    # no domain check: PyTorch 2.13 gives lgamma's values (inf at its poles) below (p-1)/2
    # 0, -1/2, ..., as PyTorch's arange(-p/2 + 1/2, 1/2, 1/2): +0.0 first (x + -0.0 would
    # keep x = -0.0, whose digamma in the gradient is +inf where PyTorch's is -inf)
    offsets = creation.arange(p, dtype=input.dtype, device=input.device) / -2 + 0.0
    return lgamma(input.unsqueeze(-1) + offsets).sum(-1) + p * (p - 1) / 4 * math.log(math.pi)


def _entr(x):
    return pointwise.where(x > 0, -x * pointwise.log(pointwise.where(x > 0, x, 1.0)),
                      pointwise.where(x == 0, 0.0, pointwise.where(x != x, x, -math.inf)))


ENTR = composite("special_entr", _entr, kind="elementwise", dtypes="float", promote="int_to_float",
                 grad=lambda g, x: g * -(pointwise.log(x) + 1), forms=Forms(written=True),
                 domain=(0.05, 3),
                 signature="special_entr(x)", doc="-x log x for x > 0, 0 at 0, -inf below")


@form_of(ENTR)
def special_entr(input, *, out=None):
    x = input if input.dtype.is_floating_point else input.to(D.get_default_dtype())
    return write_out(out, run(ENTR, (x,), {}))


def special_ndtr(input, *, out=None):
    x = input if input.dtype.is_floating_point else input.to(D.get_default_dtype())
    return write_out(out, 0.5 * pointwise.erfc(x * -math.sqrt(0.5)))


def special_spherical_bessel_j0(input, *, out=None):
    x = input if input.dtype.is_floating_point else input.to(D.get_default_dtype())
    safe = pointwise.where(x == 0, 1.0, x)
    return write_out(out, pointwise.where(x == 0, 1.0, pointwise.sin(x) / safe))


PUBLIC = {**FUNCTIONS, "polygamma": polygamma, "mvlgamma": mvlgamma}
# torch.special's functions that have no row of their own (composites of public ops, each
# recorded step by step); the rows' torch.special names come from their forms
SPECIAL_WITHOUT_ROWS = {"multigammaln": mvlgamma, "ndtr": special_ndtr,
                        "spherical_bessel_j0": special_spherical_bessel_j0}
METHODS = {**PUBLIC, **INPLACE, "polygamma": lambda self, n: polygamma(n, self),
           "mvlgamma": mvlgamma}

# The op modules this one's derivative rules and decompositions call (at run time
# only). Imported last: they import this module in turn (see docs/architecture.md).
from . import creation, pointwise  # noqa: E402
