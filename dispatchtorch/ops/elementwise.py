"""Elementwise ops: the prims of the catalogue and composites built from them.

Each `define` is one schema row: name, dtype rule, derivative rule (in public ops)
and, for composites, the decomposition. Function, method, operator and in-place
forms are made from the row (see methods.py).
"""
from __future__ import annotations

import math

from .. import _dtype as D
from .._tensor import Tensor
from . import _api
from ._elementwise import binary, define, inplace, nary, unary

SQRT_PI = math.sqrt(math.pi)
LN2, LN10 = math.log(2.0), math.log(10.0)


def _zeros(g):
    return _api.zeros_like(g)


# -- unary prims -------------------------------------------------------------------------------
F = dict(dtypes="float", promote="int_to_float")
exp = define("exp", grad=lambda g, result: g * result, **F)
exp2 = define("exp2", grad=lambda g, result: g * result * LN2, **F)
expm1 = define("expm1", grad=lambda g, result: g * (result + 1), **F)
log = define("log", grad=lambda g, x: g / x, **F)
log2 = define("log2", grad=lambda g, x: g / (x * LN2), **F)
log10 = define("log10", grad=lambda g, x: g / (x * LN10), **F)
log1p = define("log1p", grad=lambda g, x: g / (x + 1), **F)
sqrt = define("sqrt", grad=lambda g, result: g / (2 * result), **F)
sin = define("sin", grad=lambda g, x: g * _api.cos(x), **F)
cos = define("cos", grad=lambda g, x: -g * _api.sin(x), **F)
tan = define("tan", grad=lambda g, result: g * (1 + result * result), **F)
asin = define("asin", grad=lambda g, x: g * _api.rsqrt(1 - x * x), **F)
acos = define("acos", grad=lambda g, x: -g * _api.rsqrt(1 - x * x), **F)
atan = define("atan", grad=lambda g, x: g / (1 + x * x), **F)
sinh = define("sinh", grad=lambda g, x: g * _api.cosh(x), **F)
cosh = define("cosh", grad=lambda g, x: g * _api.sinh(x), **F)
tanh = define("tanh", grad=lambda g, result: g * (1 - result * result), **F)
asinh = define("asinh", grad=lambda g, x: g * _api.rsqrt(x * x + 1), **F)
acosh = define("acosh", grad=lambda g, x: g * _api.rsqrt(x * x - 1), **F)
atanh = define("atanh", grad=lambda g, x: g / (1 - x * x), **F)
erf = define("erf", grad=lambda g, x: g * (2 / SQRT_PI) * _api.exp(-(x * x)), **F)
erfc = define("erfc", grad=lambda g, x: g * (-2 / SQRT_PI) * _api.exp(-(x * x)), **F)
erfinv = define("erfinv", grad=lambda g, result: g * (SQRT_PI / 2) * _api.exp(result * result), **F)

R = dict(dtypes="numeric", grad=lambda g: _zeros(g))
_floor = define("floor", **R)
_ceil = define("ceil", **R)
_round = define("round", **R)
_trunc = define("trunc", **R)
neg = define("neg", dtypes="numeric", grad=lambda g: -g,
             error="Negation, the `-` operator, on a bool tensor is not supported. If you are "
                   "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
abs_ = define("abs", dtypes="numeric", grad=lambda g, x: g * _api.sign(x))
bitwise_not = define("bitwise_not", dtypes="integral")

# -- binary prims ----------------------------------------------------------------------------
B = ("a", "b")
add = define("add", args=B, grad=lambda g: (g, g))
sub = define("sub", args=B, dtypes="numeric", grad=lambda g: (g, -g),
             error="Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
                   "`^` or `logical_xor()` operator instead.")
mul = define("mul", args=B, grad=lambda g, a, b, needs: (g * b if needs[0] else None,
                                                          g * a if needs[1] else None),
             save_for={"a": ("b",), "b": ("a",)})
div = define("div", args=B, promote="int_to_float", dtypes="float",
             grad=lambda g, a, b, needs: (g / b if needs[0] else None,
                                          -g * a / (b * b) if needs[1] else None),
             save_for={"a": ("b",)})


def _pow_grad(g, a, b, result, needs):
    ga = gb = None
    if needs[0]:
        if isinstance(b, Tensor):
            ga = _api.where(b == 0, 0.0, g * b * _api.pow(a, b - 1))
        else:
            ga = _zeros(g) if b == 0 else g * b * _api.pow(a, b - 1)
    if needs[1]:
        safe = _api.where((a == 0) & (b >= 0), 0.0, result * _api.log(a)) \
            if isinstance(a, Tensor) else result * math.log(a) if a > 0 else result * 0
        gb = g * safe
    return ga, gb


pow_ = define("pow", args=B, dtypes="numeric", grad=_pow_grad)
fmod = define("fmod", args=B, dtypes="numeric",
              grad=lambda g, a, b: (g, -g * _api.div(a, b, rounding_mode="trunc")))


def _extreme_grad(pick):
    def grad(g, a, b):
        half = _api.where(a == b, g / 2, g)
        return (_api.where(pick(a, b), 0.0, half), _api.where(pick(b, a), 0.0, half))
    return grad


maximum = define("maximum", args=B, grad=_extreme_grad(lambda x, y: x < y))
minimum = define("minimum", args=B, grad=_extreme_grad(lambda x, y: x > y))
atan2 = define("atan2", args=B, **F,
               grad=lambda g, a, b, needs: (g * b / (a * a + b * b) if needs[0] else None,
                                            -g * a / (a * a + b * b) if needs[1] else None))
I = dict(args=B, dtypes="integral")
bitwise_and = define("bitwise_and", **I)
bitwise_or = define("bitwise_or", **I)
bitwise_xor = define("bitwise_xor", **I)
# shifts are not defined for bool (PyTorch: "lshift_cpu" not implemented for 'Bool')
bitwise_left_shift = define("bitwise_left_shift", args=B, dtypes="integer")
bitwise_right_shift = define("bitwise_right_shift", args=B, dtypes="integer")
C = dict(args=B, out_bool=True)
eq, ne = define("eq", **C), define("ne", **C)
lt, le = define("lt", **C), define("le", **C)
gt, ge = define("gt", **C), define("ge", **C)
where_ = define("where", args=("cond", "a", "b"),
                grad=lambda g, cond: (None, _api.where(cond, g, 0.0), _api.where(cond, 0.0, g)))


# -- composites ----------------------------------------------------------------------------------

def _c(name, decomp, grad=None, **kw):
    return define(name, decomp=decomp, grad=grad, **kw)


sigmoid = _c("sigmoid", lambda x: 1 / (1 + _api.exp(-x)),
             grad=lambda g, result: g * result * (1 - result), **F)
# `x <= 0` is False for NaN, so NaN passes through as in PyTorch
relu = _c("relu", lambda x: _api.where(x <= 0, _api.zeros_like(x), x) if x.dtype.is_floating_point
          else _api.maximum(x, 0), grad=lambda g, result: g * (result > 0), dtypes="numeric")
rsqrt = _c("rsqrt", lambda x: 1 / _api.sqrt(x),
           grad=lambda g, result: -0.5 * g * result * result * result, **F)
reciprocal = _c("reciprocal", lambda x: 1 / x, grad=lambda g, result: -g * result * result, **F)
# square is pow(x, 2): a bool tensor squares to int64, as in PyTorch
square = _c("square", lambda x: x * x if x.dtype is not D.bool_ else x.long() * x.long(),
            grad=lambda g, x: 2 * g * x, dtypes="all")
sign = _c("sign", lambda x: (x > 0).to(x.dtype) - (x < 0).to(x.dtype) if x.dtype is not D.bool_
          else x.clone(), grad=lambda g: _zeros(g))
sgn = sign
