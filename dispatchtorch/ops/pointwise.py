"""Public function forms of the elementwise ops, made from their schema rows.

Plain unary and binary ops get `f(input[, other], *, out=None)` generated; ops with
extra arguments (alpha, rounding_mode, bounds) are written out below.
"""
from __future__ import annotations

import numbers

from .. import _dtype as D
from .._tensor import Tensor
from . import _api
from . import elementwise as E
from ._elementwise import binary, inplace, nary, result_type, unary
from .._run import decompose
from ..dispatch import OpDef, register_op


def write_out(out, r):
    """Honour an `out=` argument: copy into it (resizing it if its shape differs)."""
    if out is None:
        return r
    if out._shape == r._shape and out._dtype is r._dtype:
        return out.copy_(r)
    out.data = r.to(out.dtype) if out._dtype is not r._dtype else r
    return out


def _unary_fn(spec):
    def fn(input, *, out=None):
        return write_out(out, unary(spec, input))
    fn.__name__ = fn.__qualname__ = spec.name
    fn.__doc__ = f"Elementwise {spec.name} (see docs/ops.md)."
    return fn


def _unary_inplace(spec):
    def fn(input):
        return inplace(spec, input)
    fn.__name__ = fn.__qualname__ = spec.name + "_"
    return fn


def _binary_fn(spec):
    def fn(input, other, *, out=None):
        return write_out(out, binary(spec, input, other))
    fn.__name__ = fn.__qualname__ = spec.name
    fn.__doc__ = f"Elementwise {spec.name} with broadcasting and type promotion."
    return fn


def _binary_inplace(spec):
    def fn(input, other):
        return inplace(spec, input, other)
    fn.__name__ = fn.__qualname__ = spec.name + "_"
    return fn


UNARY = [E.exp, E.exp2, E.expm1, E.log, E.log2, E.log10, E.log1p, E.sqrt, E.sin, E.cos, E.tan,
         E.asin, E.acos, E.atan, E.sinh, E.cosh, E.tanh, E.asinh, E.acosh, E.atanh, E.erf, E.erfc,
         E.erfinv, E.neg, E.abs_, E.bitwise_not, E.sigmoid, E.relu, E.rsqrt, E.reciprocal,
         E.square, E.sign]
BINARY = [E.mul, E.maximum, E.minimum, E.atan2, E.bitwise_and, E.bitwise_or, E.bitwise_xor,
          E.bitwise_left_shift, E.bitwise_right_shift, E.eq, E.ne, E.lt, E.le, E.gt, E.ge, E.fmod]

FUNCTIONS = {}
INPLACE = {}
for _s in UNARY:
    FUNCTIONS[_s.name] = _unary_fn(_s)
    INPLACE[_s.name + "_"] = _unary_inplace(_s)
for _s in BINARY:
    FUNCTIONS[_s.name] = _binary_fn(_s)
    INPLACE[_s.name + "_"] = _binary_inplace(_s)


# -- ops with arguments of their own -------------------------------------------------------------

def _scaled(other, alpha, op):
    if alpha == 1:
        return other
    if isinstance(other, Tensor) and not other.dtype.is_floating_point \
            and isinstance(alpha, float) and alpha != int(alpha):
        raise RuntimeError(f"For integral input tensors, argument alpha must not be a floating point "
                           f"number. ({op})")
    if isinstance(other, Tensor) and other.dtype is D.bool_ and not isinstance(alpha, float):
        # alpha takes no part in type promotion: for bool it is cast to bool (PyTorch)
        return other if alpha else _api.zeros_like(other)
    return other * alpha


def add(input, other, *, alpha=1, out=None):
    return write_out(out, binary(E.add, input, _scaled(other, alpha, "add")))


def add_(input, other, *, alpha=1):
    return inplace(E.add, input, _scaled(other, alpha, "add"))


def sub(input, other, *, alpha=1, out=None):
    return write_out(out, binary(E.sub, input, _scaled(other, alpha, "sub")))


def sub_(input, other, *, alpha=1):
    return inplace(E.sub, input, _scaled(other, alpha, "sub"))


def rsub(input, other, *, alpha=1):
    return sub(other, input, alpha=alpha) if isinstance(other, Tensor) else \
        binary(E.sub, other, _scaled(input, alpha, "rsub"))


subtract, multiply = sub, FUNCTIONS["mul"]


def div(input, other, *, rounding_mode=None, out=None):
    if rounding_mode is None:
        return write_out(out, binary(E.div, input, other))
    if rounding_mode == "trunc":
        return write_out(out, _div_trunc(input, other))
    if rounding_mode == "floor":
        return write_out(out, floor_divide(input, other))
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                     f"'{rounding_mode}'")


def div_(input, other, *, rounding_mode=None):
    if rounding_mode is None:
        return inplace(E.div, input, other)
    return input.copy_(div(input, other, rounding_mode=rounding_mode))


true_divide = divide = div


def _div_trunc(a, b):
    dt = result_type(a, b)
    if dt.is_floating_point:
        return trunc(binary(E.div, a, b))
    _check_int_divisor(b, "div")
    return binary(_INT_DIV, a, b)


def _check_int_divisor(b, op):
    if isinstance(b, Tensor):
        if not b.dtype.is_floating_point and bool((b == 0).any()):
            raise RuntimeError(f"ZeroDivisionError ({op}: integer division by zero)")
    elif b == 0 and not isinstance(b, float):
        raise RuntimeError(f"ZeroDivisionError ({op}: integer division by zero)")


from ._elementwise import Elementwise  # noqa: E402

# the same prim, computing in the promoted dtype: integer division truncates
_INT_DIV = Elementwise(E.div.op, promote="default", dtypes="numeric")


def floor_divide(input, other, *, out=None):
    dt = result_type(input, other)
    if dt.is_floating_point:
        # Python's float floor division: exact via fmod, as PyTorch's div_floor
        a = input if isinstance(input, Tensor) else _api.full_like(other, input, dtype=dt)
        mod = binary(E.fmod, a, other)
        q = binary(E.div, a - mod, other)
        adjust = (mod != 0) & ((other < 0) != (mod < 0))
        q = _api.where(adjust, q - 1, q)
        fq = floor(q)
        r = _api.where(q - fq > 0.5, fq + 1, fq)
        zero = other == 0
        if not isinstance(zero, Tensor):          # a Python scalar divisor
            zero = _api.full_like(r, bool(zero), dtype=D.bool_)
        r = _api.where(zero, binary(E.div, a, other), r)
        return write_out(out, r.detach() if r.requires_grad else r)
    _check_int_divisor(other, "floor_divide")
    q = binary(_INT_DIV, input, other)
    rem = binary(E.fmod, input, other)
    adjust = (rem != 0) & ((rem < 0) != (other < 0))
    return write_out(out, _api.where(adjust, q - 1, q))


def fmod(input, other, *, out=None):
    """C's fmod: the result has the dividend's sign; integer division by zero raises
    here, before any kernel runs, so that every backend raises it."""
    if not result_type(input, other).is_floating_point:
        _check_int_divisor(other, "fmod")
    return write_out(out, binary(E.fmod, input, other))


def fmod_(input, other):
    if not result_type(input, other).is_floating_point:
        _check_int_divisor(other, "fmod_")
    return inplace(E.fmod, input, other)


FUNCTIONS["fmod"], INPLACE["fmod_"] = fmod, fmod_


def remainder(input, other, *, out=None):
    """Python's modulo: the result has the divisor's sign."""
    if not isinstance(input, Tensor):
        input = _api.full_like(other, input, dtype=result_type(input, other))
    if not result_type(input, other).is_floating_point:
        _check_int_divisor(other, "remainder")
    r = binary(E.fmod, input, other)
    fix = (r != 0) & ((r < 0) != (other < 0))
    return write_out(out, _api.where(fix, r + other, r))


def floor(input, *, out=None):
    return write_out(out, input.clone() if not input.dtype.is_floating_point else unary(E._floor, input))


def ceil(input, *, out=None):
    return write_out(out, input.clone() if not input.dtype.is_floating_point else unary(E._ceil, input))


def trunc(input, *, out=None):
    return write_out(out, input.clone() if not input.dtype.is_floating_point else unary(E._trunc, input))


fix = trunc


def round(input, *, decimals=0, out=None):
    if not input.dtype.is_floating_point:
        if decimals != 0:
            raise NotImplementedError(f'"round" with decimals is not implemented for '
                                      f"'{input.dtype.pt_name}'")
        return write_out(out, input.clone())
    if decimals == 0:
        return write_out(out, unary(E._round, input))
    if input.dtype in (D.float16, D.bfloat16):
        # scale in float32 (PyTorch's opmath): x * 10**decimals overflows float16
        return write_out(out, round(input.float(), decimals=decimals).to(input.dtype))
    scale = 10.0 ** decimals
    return write_out(out, unary(E._round, input * scale) / scale)


def pow(input, exponent, *, out=None):
    if isinstance(exponent, numbers.Number) and not isinstance(exponent, bool) and \
            isinstance(input, Tensor) and not input.dtype.is_floating_point and exponent < 0 and \
            not isinstance(exponent, float):
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return write_out(out, binary(E.pow_, input, exponent))


def float_power(input, exponent):
    a = input.double() if isinstance(input, Tensor) else float(input)
    b = exponent.double() if isinstance(exponent, Tensor) else float(exponent)
    return pow(a, b)


def where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        return _api.nonzero(condition, as_tuple=True)
    if not isinstance(condition, Tensor) or condition.dtype is not D.bool_:
        if isinstance(condition, Tensor) and condition.dtype is D.uint8:
            condition = condition.bool()
        else:
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                               f"with dtype {getattr(condition, 'dtype', type(condition).__name__)}")
    dt = result_type(input, other)
    return write_out(out, nary(E.where_, (condition, input, other),
                               compute=(D.bool_, dt, dt), out_dtype=dt))


def _clamp_decomp(x, min, max):
    r = x
    if min is not None:
        r = binary(E.maximum, r, min)
    if max is not None:
        r = binary(E.minimum, r, max)
    return r.clone() if r is x else r


def _clamp_grad(g, x, min, max, needs):
    keep = None
    if min is not None:
        keep = x >= min
    if max is not None:
        keep = (x <= max) if keep is None else keep & (x <= max)
    gx = g * keep if needs[0] else None
    gmin = g * (x < min) if needs[1] else None
    gmax = g * (x > max) if needs[2] else None
    return gx, gmin, gmax


CLAMP = register_op(OpDef("clamp", kind="elementwise", args=("x", "min", "max"), dtypes="numeric",
                          decomp=_clamp_decomp, grad=_clamp_grad,
                          signature="clamp(x, min=None, max=None)",
                          doc="min/max may be numbers or tensors; the gradient passes where "
                              "min <= x <= max"))


def clamp(input, min=None, max=None, *, out=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if not isinstance(input, Tensor):
        raise TypeError(f"clamp(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if input.dtype is D.bool_:
        raise RuntimeError("clamp is not supported for boolean tensors")
    return write_out(out, decompose(CLAMP, (input, min, max), {}))


def clamp_(input, min=None, max=None):
    return input.copy_(clamp(input, min, max))


clip, clip_ = clamp, clamp_


def clamp_min(input, min):
    return clamp(input, min=min)


def clamp_max(input, max):
    return clamp(input, max=max)


def logical_not(input, *, out=None):
    return write_out(out, input == 0 if input.dtype is not D.bool_ else unary(E.bitwise_not, input))


def _logical(spec):
    def fn(input, other, *, out=None):
        a = input if getattr(input, "dtype", None) is D.bool_ else input != 0
        b = other if getattr(other, "dtype", None) is D.bool_ else other != 0
        return write_out(out, binary(spec, a, b))
    fn.__name__ = "logical_" + spec.name.split("_")[1]
    return fn


logical_and = _logical(E.bitwise_and)
logical_or = _logical(E.bitwise_or)
logical_xor = _logical(E.bitwise_xor)


def isnan(input):
    return input != input if input.dtype.is_floating_point else _api.zeros_like(input, dtype=D.bool_)


def isinf(input):
    if not input.dtype.is_floating_point:
        return _api.zeros_like(input, dtype=D.bool_)
    return input.abs() == float("inf")


def isfinite(input):
    if not input.dtype.is_floating_point:
        return _api.ones_like(input, dtype=D.bool_)
    return (input == input) & (input.abs() != float("inf"))


def isposinf(input):
    return input == float("inf") if input.dtype.is_floating_point else _api.zeros_like(input, dtype=D.bool_)


def isneginf(input):
    return input == float("-inf") if input.dtype.is_floating_point else _api.zeros_like(input, dtype=D.bool_)


def positive(input):
    if input.dtype is D.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


mul = FUNCTIONS["mul"]
eq, ne, lt, le, gt, ge = (FUNCTIONS[n] for n in ("eq", "ne", "lt", "le", "gt", "ge"))
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
maximum, minimum, atan2 = (FUNCTIONS[n] for n in ("maximum", "minimum", "atan2"))
arctan2 = atan2
