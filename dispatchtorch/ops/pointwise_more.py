"""More elementwise ops of PyTorch's set, each a composite row over existing prims:
addcmul, addcdiv, copysign, heaviside, signbit, sinc, ldexp, deg2rad, rad2deg,
logaddexp2, angle, isclose / allclose / equal (real / imag / conj and the conjugate bit
live in complex_ops.py)."""
from __future__ import annotations

import math

from .._layout import require_strided as _require_strided
from .. import _dtype as D
from .._tensor import Tensor
from . import elementwise as E
from ._composite import composite, inplace_variant, run
from ..dispatch.registry import Forms, form_of
from ._elementwise import _SPECS as _ROWS, binary, define, result_type
from ._out import takes_out
from .pointwise import forms_of, write_out
from ._bare_support import check_op as bare_check

F = dict(dtypes="float", promote="int_to_float")
FN = Forms()
_FIRST = len(_ROWS)        # the elementwise rows from here on are this module's


def _signbit(x):
    if x.dtype is D.bool_:
        return creation.zeros_like(x, dtype=D.bool_)
    if not x.dtype.is_floating_point:
        return x < 0
    # -0.0 and negative NaNs have the bit set: 1 / -0.0 is -inf; copysign of NaN reads it
    return (x < 0) | ((x == 0) & ((1 / x) < 0))


SIGNBIT = define("signbit", forms=Forms(inplace=False), decomp=_signbit, out_bool=True,
                 differentiable=False,
                 signature="signbit(x) -> bool", doc="the sign bit is set (-0.0 included)")


def _copysign(a, b):
    neg = _signbit(b) if isinstance(b, Tensor) else math.copysign(1.0, b) < 0
    m = a.abs() if isinstance(a, Tensor) else abs(a)
    return pointwise.where(neg, -m, m) if isinstance(neg, Tensor) else (-m if neg else m)


def _copysign_grad(g, a, b, result, needs):
    # derivatives.yaml: copysign_tensor_self_backward, g * (result / self masked to 0 where
    # self == 0) (an inf g there gives NaN, as PyTorch's); the sign source: zeros_like
    ratio = pointwise.where(a == 0, 0.0, result / pointwise.where(a == 0, 1.0, a))
    ga = g * ratio if needs[0] else None
    gb = creation.zeros_like(b) if needs[1] and isinstance(b, Tensor) else None
    return ga, gb


COPYSIGN = define("copysign", args=("a", "b"), forms=Forms(scalars="other"), decomp=_copysign,
                  grad=_copysign_grad, **F,
                  signature="copysign(a, b)", doc="|a| with the sign of b (-0.0 counts negative)")


def _heaviside(x, values):
    return pointwise.where(x == 0, values, (x > 0).to(result_type(x, values)))


HEAVISIDE = define("heaviside", args=("x", "values"), forms=Forms(scalars="none"),
                   decomp=_heaviside, differentiable=False,
                   dtypes="all", signature="heaviside(x, values)",
                   doc="0 where x < 0, values where x == 0, 1 where x > 0")


def _sinc(x):
    px = x * math.pi
    return pointwise.where(x == 0, 1.0, pointwise.sin(px) / pointwise.where(x == 0, 1.0, px))


def _sinc_grad(g, x, result):
    safe = pointwise.where(x == 0, 1.0, x)
    return pointwise.where(x == 0, 0.0, g * (pointwise.cos(x * math.pi) - result) / safe)


SINC = define("sinc", forms=Forms(special=("sinc",)), decomp=_sinc, grad=_sinc_grad, **F,
              signature="sinc(x)",
              doc="sin(pi x) / (pi x), 1 at 0")
DEG2RAD = define("deg2rad", forms=FN, decomp=lambda x: x * (math.pi / 180),
                 grad=lambda g: g * (math.pi / 180),
                 **F, signature="deg2rad(x)", doc="degrees to radians")
RAD2DEG = define("rad2deg", forms=FN, decomp=lambda x: x * (180 / math.pi),
                 grad=lambda g: g * (180 / math.pi),
                 **F, signature="rad2deg(x)", doc="radians to degrees")


def _logaddexp2(a, b):
    m = binary(E.maximum, a, b)
    r = m + pointwise.log1p(pointwise.exp2(-(a - b).abs())) / math.log(2)
    return pointwise.where((m.abs() == math.inf) & (a == b), m, r)


LOGADDEXP2 = define("logaddexp2", args=("a", "b"), forms=Forms(inplace=False, scalars="none"),
                    decomp=_logaddexp2, dtypes="floating",
                    grad=lambda g, a, b, needs: (   # as logaddexp's: no inf - inf
                        g * pointwise.sigmoid((a - b) * math.log(2)) if needs[0] else None,
                        g * pointwise.sigmoid((b - a) * math.log(2)) if needs[1] else None),
                    signature="logaddexp2(a, b)", doc="log2(2**a + 2**b) without overflow")


def _angle(x):
    if not x.dtype.is_floating_point:
        x = x.to(D.get_default_dtype())
    return pointwise.where(x < 0, math.pi, pointwise.where(x != x, x, 0.0))


ANGLE = define("angle", forms=Forms(inplace=False), decomp=_angle,
               grad=lambda g: creation.zeros_like(g), **F,
               signature="angle(x)", doc="the argument: pi for negative reals, 0 otherwise, NaN kept")


def _ldexp(x, other):
    return x * pointwise.pow(2.0, other)


LDEXP = composite("ldexp", _ldexp, kind="elementwise", args=("x", "other"),
                  signature="ldexp(x, other)", doc="x * 2**other (floating result)")


def ldexp(input, other, *, out=None):
    if not isinstance(input, Tensor):
        raise TypeError(f"ldexp(): argument 'input' must be Tensor, not {type(input).__name__}")
    if not input.dtype.is_grad and not (isinstance(other, Tensor) and
                                                  other.dtype.is_floating_point):
        input = input.to(D.get_default_dtype())
    return write_out(out, run(LDEXP, (input, other), {}))


# -- addcmul / addcdiv ----------------------------------------------------------------------

ADDCMUL = composite("addcmul", lambda x, a, b, value: x + value * a * b if value != 1 else
                    x + a * b, kind="elementwise", args=("x", "a", "b"), dtypes="numeric",
                    signature="addcmul(x, a, b, *, value=1)", doc="x + value * a * b")
ADDCDIV = composite("addcdiv", lambda x, a, b, value: x + value * (a / b) if value != 1 else
                    x + a / b, kind="elementwise", args=("x", "a", "b"),
                    signature="addcdiv(x, a, b, *, value=1)", doc="x + value * a / b (floats)")


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    dt = result_type(input, tensor1, tensor2)
    if dt is D.bool_:
        value = bool(value)
    elif not dt.is_grad:    # PyTorch truncates a float value for integers
        value = int(value)
    return write_out(out, run(ADDCMUL, (input, tensor1, tensor2), {"value": value}))


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    if not result_type(tensor1, tensor2).is_grad:
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future "
                           "release addcdiv will perform a true division of tensor1 and tensor2. "
                           "The historic addcdiv behavior can be implemented as (input + value * "
                           "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and "
                           "as (input + value * tensor1 / tensor2) for float inputs. The future "
                           "addcdiv behavior is just the latter implementation: (input + value * "
                           "tensor1 / tensor2), for all dtypes.")
    return write_out(out, run(ADDCDIV, (input, tensor1, tensor2), {"value": value}))


addcmul_ = inplace_variant(addcmul, "addcmul_")
addcdiv_ = inplace_variant(addcdiv, "addcdiv_")


# -- comparisons of whole tensors -------------------------------------------------------------

def _isclose(a, b, rtol, atol, equal_nan):
    close = a == b
    inexact = a.dtype.is_floating_point or a.dtype.is_complex   # complex: |a - b| is real
    if equal_nan and inexact:
        close = close | ((a != a) & (b != b))
    if rtol == 0 and atol == 0:
        return close
    if not inexact:
        a, b = a.to(D.get_default_dtype()), b.to(D.get_default_dtype())
    err = (a - b).abs()
    return close | (pointwise.isfinite(err) & (err <= atol + (rtol * b).abs()))


ISCLOSE = composite("isclose", _isclose, kind="elementwise", args=("a", "b"),
                    differentiable=False,
                    signature="isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool",
                    doc="|a - b| <= atol + rtol * |b|, or equal (NaN equal with equal_nan)")


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    for n, x in (("input", input), ("other", other)):
        if not isinstance(x, Tensor):
            raise TypeError(f"isclose(): argument '{n}' must be Tensor, not {type(x).__name__}")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{input.dtype.pt_name} did not match {other.dtype.pt_name}")
    if input._dtype.bare and input._dtype.is_floating_point:
        bare_check("isclose", input._dtype)
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    return run(ISCLOSE, (input, other), {"rtol": rtol, "atol": atol, "equal_nan": equal_nan})


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def _same_memory(a, b):
    """a and b read the same elements of one storage."""
    sa = a._h if a._storage is None else a._storage
    sb = b._h if b._storage is None else b._storage
    return sa is sb and a._offset == b._offset and a._stride == b._stride and \
        a._shape == b._shape


def equal(input, other):
    for n, x in (("input", input), ("other", other)):
        if not isinstance(x, Tensor):
            raise TypeError(f"equal(): argument '{n}' must be Tensor, not {type(x).__name__}")
    if input._dtype.bare and _same_memory(input, other):
        bare_check("equal", input._dtype)   # PyTorch's aliased-tensor NaN check has no float8
    if input.shape != other.shape:
        return False
    return bool((input == other).all())


# -- frexp, scalar_tensor ----------------------------------------------------------------------

@takes_out("frexp", "exact")
def frexp(input, *, out=None):
    """(mantissa, exponent) with x = mantissa * 2**exponent, 0.5 <= |mantissa| < 1; 0, inf
    and NaN give (x, 0). The exponent from log2, corrected by one where rounding missed."""
    from .. import return_types as RT
    if not isinstance(input, Tensor):
        raise TypeError(f"frexp(): argument 'input' must be Tensor, not {type(input).__name__}")
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    x = input
    a = x.abs()
    special = (a == 0) | (a == math.inf) | (x != x)
    safe = pointwise.where(special, 1.0, a)
    e = pointwise.floor(pointwise.log2(safe)) + 1
    m = x / pointwise.exp2(e)
    big = m.abs() >= 1
    e, m = pointwise.where(big, e + 1, e), pointwise.where(big, m / 2, m)
    small = m.abs() < 0.5
    e, m = pointwise.where(small, e - 1, e), pointwise.where(small, m * 2, m)
    mantissa = pointwise.where(special, x, m)
    exponent = pointwise.where(special, 0.0, e).to(D.int32)
    return RT.frexp(mantissa, exponent)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None,
                  requires_grad=False):
    _require_strided(layout, "scalar_tensor")
    return creation.full((), s, dtype=dtype or D.get_default_dtype(), device=device,
                     requires_grad=requires_grad)


# -- what complex-free dtypes make of the complex ops -------------------------------------------

FUNCTIONS, INPLACE = forms_of(_ROWS[_FIRST:])    # made from the rows above


def _heaviside_checked(fn):
    def heaviside(input, values, *, out=None):
        if isinstance(input, Tensor) and isinstance(values, Tensor) and \
                input.dtype is not values.dtype:
            raise RuntimeError("heaviside is not yet implemented for tensors with different "
                               "dtypes")
        return fn(input, values, out=out) if out is not None else fn(input, values)
    return heaviside


FUNCTIONS["heaviside"] = form_of(HEAVISIDE)(_heaviside_checked(FUNCTIONS["heaviside"]))

PUBLIC = {**FUNCTIONS, **INPLACE, "ldexp": ldexp, "addcmul": addcmul, "addcdiv": addcdiv,
          "isclose": isclose, "allclose": allclose, "equal": equal, "frexp": frexp,
          "scalar_tensor": scalar_tensor}
METHODS = {**PUBLIC, "addcmul_": addcmul_, "addcdiv_": addcdiv_,
           "ldexp_": inplace_variant(ldexp, "ldexp_"),
           "is_neg": lambda self: False}
METHODS.pop("scalar_tensor")


# The op modules this one's derivative rules and decompositions call (at run time
# only). Imported last: they import this module in turn (see docs/architecture.md).
from . import creation, pointwise  # noqa: E402
