"""Elementwise ops: the prims of the catalogue and composites built from them.

Each `define` is one schema row: name, dtype rule, derivative rule (in public ops)
and, for composites, the decomposition. Function, method, operator and in-place
forms are made from the row (see methods.py).
"""
from __future__ import annotations

import math

from .. import _dtype as D
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from ._elementwise import binary, define
from ._composite import composite
from ..dispatch.registry import FORMS as P, NO_FORMS, Forms
from . import creation

SQRT_PI = math.sqrt(math.pi)
LN2, LN10 = math.log(2.0), math.log(10.0)


def _zeros(g):
    return creation.zeros_like(g)


# domain=(low, high): where the op and its gradient are finite; the unit tests and the
# conformance suite draw their random values from it. forms: the public forms made from
# the row (pointwise.py: torch.f, Tensor.f, f_, out=, aliases); FN: all of them, TT: a
# binary function form that takes tensors only, TS: one whose `other` may be a number.
FN, TT, TS = Forms(), Forms(scalars="none"), Forms(scalars="other")
# -- unary prims -------------------------------------------------------------------------------
F = dict(dtypes="float", promote="int_to_float")
exp = define("exp", forms=FN, domain=(-10, 10), grad=lambda g, result: g * result, **F)
exp2 = define("exp2", forms=Forms(special=("exp2",)), domain=(-10, 10),
              grad=lambda g, result: g * result * LN2, **F)
expm1 = define("expm1", forms=Forms(special=("expm1",)), domain=(-10, 10),
               grad=lambda g, result: g * (result + 1), **F)
log = define("log", forms=FN, domain=(0.05, 100), grad=lambda g, x: g / x, **F)
log2 = define("log2", forms=FN, domain=(0.05, 100), grad=lambda g, x: g / (x * LN2), **F)
log10 = define("log10", forms=FN, domain=(0.05, 100), grad=lambda g, x: g / (x * LN10), **F)
log1p = define("log1p", forms=Forms(special=("log1p",)), domain=(-0.9, 100),
               grad=lambda g, x: g / (x + 1), **F)
sqrt = define("sqrt", forms=FN, domain=(0.01, 100), grad=lambda g, result: g / (2 * result), **F)
sin = define("sin", forms=FN, domain=(-6, 6), grad=lambda g, x: g * P.cos(x), **F)
cos = define("cos", forms=FN, domain=(-6, 6), grad=lambda g, x: -g * P.sin(x), **F)
tan = define("tan", forms=FN, domain=(-1.4, 1.4), grad=lambda g,
             result: g * (1 + result * result), **F)
asin = define("asin", forms=Forms(aliases=("arcsin",)), domain=(-0.95, 0.95), grad=lambda g,
              x: g * P.rsqrt(1 - x * x), **F)
acos = define("acos", forms=Forms(aliases=("arccos",)), domain=(-0.95, 0.95), grad=lambda g,
              x: -g * P.rsqrt(1 - x * x), **F)
atan = define("atan", forms=Forms(aliases=("arctan",)), domain=(-10, 10), grad=lambda g,
              x: g / (1 + x * x), **F)
sinh = define("sinh", forms=FN, domain=(-5, 5), grad=lambda g, x: g * P.cosh(x), **F)
cosh = define("cosh", forms=FN, domain=(-5, 5), grad=lambda g, x: g * P.sinh(x), **F)
tanh = define("tanh", forms=FN, domain=(-5, 5), grad=lambda g, result: g * (1 - result * result),
              **F)
asinh = define("asinh", forms=Forms(aliases=("arcsinh",)), domain=(-10, 10), grad=lambda g,
               x: g * P.rsqrt(x * x + 1), **F)
acosh = define("acosh", forms=Forms(aliases=("arccosh",)), domain=(1.05, 10), grad=lambda g,
               x: g * P.rsqrt(x * x - 1), **F)
atanh = define("atanh", forms=Forms(aliases=("arctanh",)), domain=(-0.95, 0.95), grad=lambda g,
               x: g / (1 - x * x), **F)
erf = define("erf", forms=Forms(special=("erf",)), domain=(-3, 3), grad=lambda g,
             x: g * (2 / SQRT_PI) * P.exp(-(x * x)), **F)
erfc = define("erfc", forms=Forms(special=("erfc",)), domain=(-3, 3), grad=lambda g,
              x: g * (-2 / SQRT_PI) * P.exp(-(x * x)), **F)
erfinv = define("erfinv", forms=Forms(special=("erfinv",)), domain=(-0.95, 0.95), grad=lambda g,
                result: g * (SQRT_PI / 2) * P.exp(result * result), **F)

R = dict(grad=lambda g: _zeros(g))
_floor = define("floor", domain=(-10, 10), **R)
_ceil = define("ceil", domain=(-10, 10), **R)
_round = define("round", forms=Forms(written=True, special=("round",)), domain=(-10, 10), **R)
_trunc = define("trunc", domain=(-10, 10), **R)
neg = define("neg", forms=Forms(aliases=("negative",)), dtypes="numeric", grad=lambda g: -g,
             error="neg: Negation, the `-` operator, on a bool tensor is not supported. If you are "
                   "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
abs_ = define("abs", forms=Forms(aliases=("absolute",)), dtypes="numeric", grad=lambda g,
              x: g * P.sign(x))
bitwise_not = define("bitwise_not", forms=FN, dtypes="integral")

# -- binary prims ----------------------------------------------------------------------------
B = ("a", "b")
add = define("add", args=B, grad=lambda g: (g, g))
sub = define("sub", args=B, dtypes="numeric", grad=lambda g: (g, -g),
             error="sub: Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
                   "`^` or `logical_xor()` operator instead.")
mul = define("mul", forms=FN, args=B, grad=lambda g, a, b, needs: (g * b if needs[0] else None,
                                                          g * a if needs[1] else None),
             save_for={"a": ("b",), "b": ("a",)})
div = define("div", args=B, promote="int_to_float",
             grad=lambda g, a, b, needs: (g / b if needs[0] else None,
                                          -g * a / (b * b) if needs[1] else None),
             save_for={"a": ("b",)})


def _pow_grad(g, a, b, result, needs):
    """PyTorch's pow_backward(_self, _exponent): g * (b * a^(b-1)) (0 where b == 0), and
    g * result * log(a) (0 where a == 0 and b >= 0; a negative base's log is NaN)."""
    ga = gb = None
    if needs[0]:
        if isinstance(b, Tensor):
            ga = P.where(b == 0, 0.0, g * (b * P.pow(a, b - 1)))
        else:
            ga = _zeros(g) if b == 0 else g * (b * P.pow(a, b - 1))
    if needs[1]:
        if isinstance(a, Tensor):
            safe = P.where((a == 0) & (b >= 0), 0.0, result * P.log(a))
        elif a == 0:
            safe = P.where(b >= 0, 0.0, result * -math.inf)
        else:
            safe = result * (math.log(a) if a > 0 else math.nan)
        gb = g * safe
    return ga, gb


# sample domain: a positive base (the gradient takes log(a)), the exponent either sign
pow_ = define("pow", args=B, dtypes="numeric", grad=_pow_grad, domain=((0.5, 2), (-2, 2)))
fmod = define("fmod", args=B, dtypes="numeric",
              grad=lambda g, a, b: (g, -g * P.div(a, b, rounding_mode="trunc")))


def _extreme_grad(pick):
    def grad(g, a, b):
        half = P.where(a == b, g / 2, g)
        return (P.where(pick(a, b), 0.0, half), P.where(pick(b, a), 0.0, half))
    return grad


maximum = define("maximum", forms=TT, args=B, grad=_extreme_grad(lambda x, y: x < y))
minimum = define("minimum", forms=TT, args=B, grad=_extreme_grad(lambda x, y: x > y))
def _atan2_grad(g, a, b, needs):
    """PyTorch's atan2_backward, g * b * r and g * -a * r with r = 1 / (a^2 + b^2), and
    r = 0 where a^2 + b^2 is 0 (PyTorch 2.13 gives (+-0, -+0) at the origin, not NaN)."""
    d = a * a + b * b
    r = P.where(d == 0, 0.0, 1 / d)
    return (g * b * r if needs[0] else None, g * -a * r if needs[1] else None)


atan2 = define("atan2", forms=Forms(scalars="none", aliases=("arctan2",)), args=B, **F,
               grad=_atan2_grad)
I = dict(args=B, dtypes="integral")
bitwise_and = define("bitwise_and", forms=FN, **I)
bitwise_or = define("bitwise_or", forms=FN, **I)
bitwise_xor = define("bitwise_xor", forms=FN, **I)
# shifts are not defined for bool (PyTorch: "lshift_cpu" not implemented for 'Bool')
bitwise_left_shift = define("bitwise_left_shift", args=B)
bitwise_right_shift = define("bitwise_right_shift", args=B)
gcd = define("gcd", args=B, domain=(-60, 60), forms=TT)
C = dict(args=B, out_bool=True)
eq, ne = define("eq", forms=TS, **C), define("ne", forms=TS, **C)
lt, le = define("lt", forms=TS, **C), define("le", forms=TS, **C)
gt, ge = define("gt", forms=TS, **C), define("ge", forms=TS, **C)
where_ = define("where", args=("cond", "a", "b"),
                grad=lambda g, cond: (None, P.where(cond, g, 0.0),
                                      P.where(cond, 0.0, g)))


# -- composites ----------------------------------------------------------------------------------

def _c(name, forms, decomp, grad=None, **kw):
    return define(name, forms=forms, decomp=decomp, grad=grad, **kw)


sigmoid = _c("sigmoid", Forms(special=("expit",)), lambda x: 1 / (1 + P.exp(-x)),
             domain=(-10, 10), grad=lambda g, result: g * result * (1 - result), **F)
# maximum(0, x), not where(x > 0, ...): relu(nan) is nan, as in PyTorch, and x at a tie
# (a maximum prim gives its second operand there): relu(-0.0) is -0.0, as PyTorch's clamp_min(x, 0). The gradient is
# PyTorch's threshold_backward(g, result, 0): g where result <= 0 is false (a NaN result
# passes g), 0 elsewhere whatever g is (g * mask would make inf * 0 NaN and keep -0.0)
relu = _c("relu", FN, lambda x: binary(maximum, 0, x),
          grad=lambda g, result: P.where(result <= 0, 0.0, g),
          dtypes="numeric", error="Boolean inputs not supported for relu")
rsqrt = _c("rsqrt", FN, lambda x: 1 / P.sqrt(x),
           domain=(0.05, 100),      # PyTorch's order: result^3 first (0 * inf is NaN)
           grad=lambda g, result: -0.5 * g * (result * result * result), **F)
reciprocal = _c("reciprocal", FN, lambda x: 1 / x, domain=(0.1, 10), grad=lambda g,
                result: -g * (result * result), **F)
square = _c("square", NO_FORMS, lambda x: x * x, grad=lambda g, x: 2 * g * x, dtypes="numeric")
sign = _c("sign", FN,
          lambda x: (x > 0).to(x.dtype) - (x < 0).to(x.dtype) if x.dtype is not D.bool_
          else x.clone(), grad=lambda g: _zeros(g))


# -- composites of the full op set -----------------------------------------------------------------

FL = dict(dtypes="floating")      # floating inputs only, as PyTorch (no integer kernels)


def _logit_grad(g, x):
    """PyTorch's logit_backward (no eps): NaN outside [0, 1], g * inf at 0 and 1 (g / -0.0
    would give -inf at x = -0.0), g / (x (1 - x)) inside; under create_graph its
    infinitely_differentiable_logit_backward, g / (x (1 - x)) on [0, 1]."""
    inside = g / (x * (1 - x))
    if STATE.enabled:
        return P.where((x >= 0) & (x <= 1), inside, math.nan)
    edge = P.where((x == 0) | (x == 1), g * math.inf, inside)
    return P.where((x < 0) | (x > 1), math.nan, edge)


logit = _c("logit", Forms(written=True, special=("logit",)), lambda x: P.log(x / (1 - x)),
           grad=_logit_grad, **F)
frac = _c("frac", FN, lambda x: x - P.trunc(x), grad=lambda g: g, **FL)
def _hypot(a, b):
    """max * sqrt(1 + (min / max)^2): no overflow where a * a would (IEEE hypot), and an
    infinite side gives inf even against NaN."""
    aa = a.abs() if isinstance(a, Tensor) else abs(a)
    bb = b.abs() if isinstance(b, Tensor) else abs(b)
    hi, lo = binary(maximum, aa, bb), binary(minimum, aa, bb)
    q = lo / P.where(hi == 0, 1.0, hi)
    r = hi * P.sqrt(1 + q * q)
    return P.where((aa == math.inf) | (bb == math.inf), math.inf, r)


hypot = _c("hypot", TT, _hypot, args=B, **FL,
           grad=lambda g, a, b, result, needs: (g * a / result if needs[0] else None,
                                                g * b / result if needs[1] else None))


def _isnan(x):
    return x != x


def _logaddexp(a, b):
    """log(exp(a) + exp(b)) = max + log1p(exp(-|a - b|)), exact where either is infinite."""
    m = binary(maximum, a, b)
    r = m + P.log1p(P.exp(-(a - b).abs()))
    return P.where((m.abs() == math.inf) & (a == b), m, r)


def _fextreme(pick):
    """fmax / fmin: like maximum / minimum, but a NaN loses to a number."""
    def decomp(a, b):
        # pick(b, a): a maximum prim gives its second operand at a tie (numpy's, PyTorch's
        # vectorised kernel), and PyTorch's fmax(-0.0, 0.0) is its first, -0.0
        r = binary(pick, b, a)
        if not r.dtype.is_floating_point:
            return r
        r = P.where(_isnan(a), b, r) if isinstance(a, Tensor) else r
        return P.where(_isnan(b), a, r) if isinstance(b, Tensor) else r
    return decomp


def _fextreme_grad(wins):
    # PyTorch: ties and NaN-vs-number go wholly to the winner, no split
    def grad(g, a, b, needs):
        first = wins(a, b) | _isnan(b)
        return (P.where(first, g, 0.0) if needs[0] else None,
                P.where(first, 0.0, g) if needs[1] else None)
    return grad


# derivatives.yaml's g / (1 + exp(other - self)), as g * sigmoid(self - other) (whose own
# derivative is 0, not inf / inf, at a -inf operand: create_graph through a -inf pad);
# g * exp(a - result) gave NaN where the result is infinite (logaddexp(inf, 0): inf - inf)
logaddexp = _c("logaddexp", TT, _logaddexp, args=B, **FL,
               grad=lambda g, a, b, needs: (
                   g * P.sigmoid(a - b) if needs[0] else None,
                   g * P.sigmoid(b - a) if needs[1] else None))
fmax = _c("fmax", TT, _fextreme(maximum), args=B, grad=_fextreme_grad(lambda a, b: a >= b))
fmin = _c("fmin", TT, _fextreme(minimum), args=B, grad=_fextreme_grad(lambda a, b: a <= b))


def _lerp(start, end, weight):
    # PyTorch's formula: exact at weight 0 and 1 (from the nearer end)
    diff = end - start
    if not isinstance(weight, Tensor):
        return start + weight * diff if abs(weight) < 0.5 else end - diff * (1 - weight)
    return P.where(weight.abs() < 0.5, start + weight * diff, end - diff * (1 - weight))


def _lerp_grad(g, start, end, weight, needs):
    return (g * (1 - weight) if needs[0] else None, g * weight if needs[1] else None,
            g * (end - start) if needs[2] else None)


lerp = _c("lerp", NO_FORMS, _lerp, args=("start", "end", "weight"), grad=_lerp_grad, **FL,
          save_for={"start": ("weight",), "end": ("weight",)})


def _log(x):
    if isinstance(x, Tensor):
        return P.log(x)
    return math.log(x) if x > 0 else -math.inf if x == 0 else math.nan


def _xlogy(a, b):
    zero = (a == 0) & ~_isnan(b) if isinstance(b, Tensor) else a == 0
    return P.where(zero, 0.0, a * _log(b))


def _xlogy_grad(g, a, b, needs):
    ga = gb = None
    if needs[0]:    # derivatives.yaml: xlogy(g, other), so a zero g gives 0 even at log = inf
        ga = P.where((a == 0) & (b <= 0), 0.0, _xlogy(g, b))
    if needs[1]:
        gb = g * a / b
    return ga, gb


xlogy = _c("xlogy", Forms(special=("xlogy",)), _xlogy, args=B, grad=_xlogy_grad, **F,
           domain=((-4, 4), (0.5, 2.5)))     # y > 0: log(y) and x / y are finite


def _xlog1py(a, b):
    zero = (a == 0) & ~_isnan(b) if isinstance(b, Tensor) else a == 0
    log1p_b = P.log1p(b) if isinstance(b, Tensor) else \
        math.log1p(b) if b > -1 else -math.inf if b == -1 else math.nan
    return P.where(zero, 0.0, a * log1p_b)


def _xlog1py_grad(g, a, b, needs):
    """derivatives.yaml's rule (as xlogy's, with b <= -1): `xlog1py(g, b)` masked to 0
    where a = 0 and b <= -1, and `g * a / (b + 1)`: an inf / NaN g at (0, 0) gives
    NaN there (inf * 0), as PyTorch's."""
    ga = gb = None
    if needs[0]:
        ga = P.where((a == 0) & (b <= -1), 0.0, _xlog1py(g, b))
    if needs[1]:
        gb = g * a / (b + 1)
    return ga, gb


special_xlog1py = _c("special_xlog1py", Forms(inplace=False), _xlog1py, args=B,
                     grad=_xlog1py_grad, **F, domain=((-4, 4), (-0.5, 2.5)))


def _nan_to_num(x, nan, posinf, neginf):
    if not x.dtype.is_floating_point:
        return x.clone()
    info = D.finfo(x.dtype)
    r = P.where(_isnan(x), nan, x)
    r = P.where(r == math.inf, info.max if posinf is None else posinf, r)
    return P.where(r == -math.inf, info.min if neginf is None else neginf, r)


def _lcm(a, b):
    """|a / gcd(a, b) * b|, 0 where gcd is 0 (PyTorch's lcm); types narrower than int
    compute in int32 and wrap once at the end, as C++'s promotion does there."""
    g = binary(gcd, a, b)
    dt = g.dtype
    if dt.itemsize < 4:
        a, b, g = a.to(D.int32), b.to(D.int32), g.to(D.int32)
    zero = g == 0
    q = P.div(a, P.where(zero, 1, g), rounding_mode="trunc")
    return P.where(zero, 0, (q * b).abs()).to(dt)


lcm = define("lcm", args=B, decomp=_lcm, dtypes="integer", domain=(-60, 60), differentiable=False,
             forms=TT, signature="lcm(a, b)",
             doc="least common multiple of |a| and |b| (non-negative); 0 if either is 0")


NAN_TO_NUM = composite(
    "nan_to_num", kind="elementwise", decomp=_nan_to_num,
    grad=lambda g, x: g * P.isfinite(x),
    signature="nan_to_num(x, nan=0.0, posinf=None, neginf=None)",
    doc="NaN, +inf and -inf replaced by numbers (the dtype's largest and smallest by default)")
