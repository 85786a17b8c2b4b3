"""Public function forms of the elementwise ops, made from their schema rows.

Plain unary and binary ops get `f(input[, other], *, out=None)` generated; ops with
extra arguments (alpha, rounding_mode, bounds) are written out below.
"""
from __future__ import annotations

import numbers

from .. import _dtype as D
from .._shape import broadcast_shapes2
from .._tensor import Tensor
from . import elementwise as E
from ._elementwise import _SPECS as _ROWS, binary, inplace, nary, result_type, unary
from .._run import decompose, record, scalar_handle, wrap
from ..autograd.grad_mode import STATE, no_grad
from ..dispatch.registry import OPS, form_of, grad_not_implemented
from ._composite import composite as _composite, run as _run_composite
from ._args import write_out
from . import creation, nonzero_coords
from ._out import takes_out
from .._sparse_forms import SparseOperand, call as sparse_call
from ._bare_support import (CLASSIFIER_RUNS, check_op as bare_check, float8_binary,
                            refusal as bare_refusal)


def _unary_fn(spec):
    def fn(input, *, out=None):
        try:
            r = unary(spec, input)
        except SparseOperand as exc:        # a sparse COO input (dispatchtorch.sparse)
            return sparse_call(spec.name, exc, (input,), {"out": out})
        return r if out is None else write_out(out, r, spec.name, (input,))
    fn.__name__ = fn.__qualname__ = spec.name
    fn.__doc__ = f"Elementwise {spec.name} (see docs/ops.md)."
    return fn


def _unary_inplace(spec):
    def fn(input):
        return inplace(spec, input)
    fn.__name__ = fn.__qualname__ = spec.name + "_"
    return fn


def _tensor_arg(fn_name, arg, x, position):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn_name}(): argument '{arg}' (position {position}) must be Tensor, "
                        f"not {type(x).__name__}")


def _binary_fn(spec, scalars="both"):
    """scalars: which operands PyTorch's function form accepts as Python numbers:
    'both', 'other' (input must be a tensor) or 'none'."""
    name = spec.name
    if scalars == "both":
        def fn(input, other, *, out=None):
            try:
                r = binary(spec, input, other)
            except SparseOperand as exc:
                return sparse_call(name, exc, (input, other), {"out": out})
            return r if out is None else write_out(out, r, name, (input, other))
    elif scalars == "other":
        def fn(input, other, *, out=None):
            _tensor_arg(name, "input", input, 1)
            try:
                r = binary(spec, input, other)
            except SparseOperand as exc:
                return sparse_call(name, exc, (input, other), {"out": out})
            return r if out is None else write_out(out, r, name, (input, other))
    else:
        def fn(input, other, *, out=None):
            _tensor_arg(name, "input", input, 1)
            _tensor_arg(name, "other", other, 2)
            try:
                r = binary(spec, input, other)
            except SparseOperand as exc:
                return sparse_call(name, exc, (input, other), {"out": out})
            return r if out is None else write_out(out, r, name, (input, other))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} with broadcasting and type promotion."
    return fn


def _binary_inplace(spec):
    def fn(input, other):
        return inplace(spec, input, other)
    fn.__name__ = fn.__qualname__ = spec.name + "_"
    return fn


# The function and in-place forms of every elementwise row that declares its forms
# (forms=Forms(...) on the row, in ops/elementwise.py or any other module defined before
# this one runs; rows with forms written by hand below have forms=None). Nothing else to
# edit for a new elementwise op: the Tensor methods bind from these dicts.
FUNCTIONS = {}
INPLACE = {}


def forms_of(rows, functions=None, inplace=None):
    """The public forms of elementwise rows (the family's one maker of forms):
    ({name: function}, {name_: in-place function}) with the rows' aliases; a row's
    function is also set on the row (torch.special reads it there). A `special_<x>`
    row's function is torch.special's only, so it is in neither dict."""
    functions = {} if functions is None else functions
    inplace = {} if inplace is None else inplace
    for s in rows:
        forms = s.op.forms
        if forms is None or forms.written or s.name in functions:
            continue
        unary1 = len(s.op.args) == 1
        fn = s.op.function = _unary_fn(s) if unary1 else _binary_fn(s, forms.scalars)
        if s.name.startswith("special_"):
            continue
        functions[s.name] = fn
        if forms.inplace:
            # (maximum_ and friends are not PyTorch's; nn_ops's pooling uses maximum_ in place)
            inplace[s.name + "_"] = _unary_inplace(s) if unary1 else _binary_inplace(s)
        for alias in forms.aliases:
            functions[alias] = fn
            if forms.inplace:
                inplace[alias + "_"] = inplace[s.name + "_"]
    return functions, inplace


forms_of(_ROWS, FUNCTIONS, INPLACE)
globals().update(FUNCTIONS)
globals().update(INPLACE)


# -- ops with arguments of their own -------------------------------------------------------------

def _scaled(input, other, alpha, op):
    """alpha * other, computed in the result's dtype (PyTorch's add: a bfloat16 `other`
    beside a float64 input is scaled in float64)."""
    if isinstance(alpha, bool) and result_type(input, other) is not D.bool_:
        raise RuntimeError(f"{op}: Boolean alpha only supported for Boolean results.")
    if alpha == 1:
        return other
    rt = result_type(input, other)
    if rt.bare and rt.is_floating_point:        # PyTorch refuses the add before any scaling
        raise bare_refusal("sub" if op == "rsub" else op, rt)
    if isinstance(other, Tensor) and other._dtype is D.bool_ and isinstance(alpha, int):
        alpha = bool(alpha)            # bool tensors stay bool (alpha != 0 keeps them)
    if isinstance(alpha, float) and alpha != int(alpha) \
            and not result_type(input, other).is_grad:
        raise RuntimeError(f"For integral input tensors, argument alpha must not be a floating point "
                           f"number. ({op})")
    if isinstance(other, Tensor) and (not isinstance(input, Tensor) or
                                      input._dtype is not other._dtype):
        dt = result_type(input, other)
        if other._dtype is not dt:
            other = other.to(dt)
    return other * alpha


def add(input, other, *, alpha=1, out=None):
    try:
        r = binary(E.add, input, _scaled(input, other, alpha, "add"))
    except SparseOperand as exc:
        return sparse_call("add", exc, (input, other), {"alpha": alpha, "out": out})
    return r if out is None else write_out(out, r, "add", (input, other))


def add_(input, other, *, alpha=1):
    try:
        return inplace(E.add, input, _scaled(input, other, alpha, "add"))
    except SparseOperand as exc:
        return sparse_call("add_", exc, (input, other), {"alpha": alpha})


def _no_bool_sub(a, b, op):
    for x in (a, b):
        if isinstance(x, bool) or isinstance(x, Tensor) and x._dtype is D.bool_:
            raise RuntimeError(f"{op}: Subtraction, the `-` operator, with a bool tensor is not "
                               "supported. "
                               "If you are trying to invert a mask, use the `~` or `logical_not()` "
                               "operator instead.")


def sub(input, other, *, alpha=1, out=None):
    try:
        _no_bool_sub(input, other, "sub")
        r = binary(E.sub, input, _scaled(input, other, alpha, "sub"))
    except SparseOperand as exc:
        return sparse_call("sub", exc, (input, other), {"alpha": alpha, "out": out})
    return r if out is None else write_out(out, r, "sub", (input, other))


def sub_(input, other, *, alpha=1):
    try:
        _no_bool_sub(input, other, "sub_")
        return inplace(E.sub, input, _scaled(input, other, alpha, "sub"))
    except SparseOperand as exc:
        return sparse_call("sub_", exc, (input, other), {"alpha": alpha})


def rsub(input, other, *, alpha=1):
    """other - alpha * input."""
    _tensor_arg("rsub", "input", input, 1)
    _no_bool_sub(input, other, "rsub")
    return binary(E.sub, other, _scaled(other, input, alpha, "rsub"))


subtract, multiply = sub, FUNCTIONS["mul"]


def div(input, other, *, rounding_mode=None, out=None):
    if rounding_mode is None:
        try:
            return write_out(out, binary(E.div, input, other))
        except SparseOperand as exc:
            return sparse_call("div", exc, (input, other), {"out": out})
    if rounding_mode == "trunc":
        _float8_path("div_trunc", input, other)
        return write_out(out, _div_trunc(input, other))
    if rounding_mode == "floor":
        _broadcasts(input, other, "div")
        if _float8_path("div_floor", input, other) is D.bool_:
            raise NotImplementedError("div: \"div_floor_cpu\" not implemented for 'Bool'")
        return write_out(out, _run_composite(DIV_FLOOR, (input, other), {}))
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                     f"'{rounding_mode}'")


def div_(input, other, *, rounding_mode=None):
    if rounding_mode is None:
        return inplace(E.div, input, other)
    return _inplace_of(div, "div_")(input, other, rounding_mode=rounding_mode)


true_divide = divide = div


def _float8_path(op, input, other):
    """The result dtype; float8 refuses these composites as PyTorch's kernels do, naming
    the path (CPU scalar or tensor) `other` takes (_bare_support.FLOAT8_SCALAR_PATH)."""
    dt = result_type(input, other)
    if dt.bare and dt.is_floating_point:
        float8_binary(op, dt, other)
    return dt


def _promoted(a, b):
    """(a, b, dtype): both operands as tensors of their result dtype. A Python number
    becomes a 0-d tensor around a cached constant, so this costs no transfer."""
    dt = result_type(a, b)
    ref = a if isinstance(a, Tensor) else b
    if not isinstance(ref, Tensor):
        raise TypeError(f"expected a Tensor, got {type(a).__name__} and {type(b).__name__}")
    return _as(a, dt, ref), _as(b, dt, ref), dt


def _as(x, dt, ref):
    if isinstance(x, Tensor):
        return x if x._dtype is dt else x.to(dt)
    if isinstance(x, bool) or not isinstance(x, numbers.Number):
        x = int(x) if isinstance(x, bool) else x
    place = ref._place
    return wrap(scalar_handle(x, dt, place), (), dt, place)


def _div_trunc(a, b):
    a, b, dt = _promoted(a, b)
    if dt.is_floating_point:
        tracked = [t for t in (a, b) if isinstance(t, Tensor) and t.requires_grad]
        if not tracked or not STATE.enabled:
            return trunc(binary(E.div, a, b))
        # PyTorch's gradient is zero (derivatives.yaml, div.Tensor_mode); through trunc
        # and div it was 0 / b: NaN at b = 0. where(False, t, r) gives each t +0.0
        with no_grad():
            r = trunc(binary(E.div, a, b))
        off = creation.zeros(r._shape, dtype=D.bool_, device=r.device)
        for t in tracked:
            r = where(off, t, r)
        return r
    _check_int_divisor(b, "div", a)
    return binary(_INT_DIV, a, b)


def _check_int_divisor(b, op, a=None):
    """Integer division by zero raises, as on PyTorch's CPU (this syncs on a device);
    an empty result divides nothing."""
    if isinstance(a, Tensor) and isinstance(b, Tensor) and \
            0 in broadcast_shapes2(a._shape, b._shape, op):
        return
    if isinstance(a, Tensor) and not isinstance(b, Tensor) and not a.numel():
        return
    if isinstance(b, Tensor):
        if b.numel() and not b.dtype.is_floating_point and bool((b == 0).any()):
            raise RuntimeError(f"{op}: ZeroDivisionError (an integer divisor is zero)")
    elif b == 0 and not isinstance(b, float):
        raise RuntimeError(f"{op}: ZeroDivisionError (an integer divisor is zero)")


from ._elementwise import Elementwise  # noqa: E402

# the same prim, computing in the promoted dtype: integer division truncates
_INT_DIV = Elementwise(E.div.op, promote="default", dtypes="numeric")


def _floor_divide(a, b):
    a, b, dt = _promoted(a, b)
    if dt.is_floating_point:
        return _floor_div_float(a, b)
    _check_int_divisor(b, "floor_divide", a)
    q = binary(_INT_DIV, a, b)
    rem = binary(E.fmod, a, b)
    return where((rem != 0) & ((rem < 0) != (b < 0)), q - 1, q)


FLOOR_DIVIDE = _composite("floor_divide", _floor_divide, kind="elementwise", args=("a", "b"),
                          dtypes="numeric", differentiable=False,
                          grad=grad_not_implemented("floor_divide"),
                          signature="floor_divide(a, b)",
                          doc="floor(a / b); floats exact via fmod as PyTorch's div_floor, "
                              "integers raise on division by zero")


# div(rounding_mode='floor'): floor_divide's values with PyTorch's zero derivative
# (derivatives.yaml: div.Tensor_mode's grad is zero; floor_divide itself has none)
DIV_FLOOR = _composite("div_floor", _floor_divide, kind="elementwise", args=("a", "b"),
                       dtypes="numeric", grad=lambda g, a, b, needs: (
                           creation.zeros_like(g) if needs[0] else None,
                           creation.zeros_like(g) if needs[1] else None),
                       signature="div(a, b, *, rounding_mode='floor')",
                       doc="floor_divide's values; the gradient is zero, as PyTorch's")


def floor_divide(input, other, *, out=None):
    _broadcasts(input, other, "floor_divide")
    if _float8_path("floor_divide", input, other) is D.bool_:
        raise NotImplementedError("floor_divide: \"div_floor_cpu\" not implemented for 'Bool'")
    return write_out(out, _run_composite(FLOOR_DIVIDE, (input, other), {}))


def _floor_div_float(a, b):
    """PyTorch's div_floor for floats: computed from fmod so that it is exact."""
    with no_grad():
        mod = binary(E.fmod, a, b)
        q = binary(E.div, a - mod, b)
        q = where((mod != 0) & ((b < 0) != (mod < 0)), q - 1, q)
        fq = floor(q)
        r = where(q - fq > 0.5, fq + 1, fq)
        # q == 0: the sign of the true quotient; b == 0: IEEE a / b
        r = where(q == 0, binary(E.mul, creation.zeros_like(q), binary(E.div, a, b)), r)
        return where(b == 0, binary(E.div, a, b), r)


def _remainder(a, b):
    a, b, dt = _promoted(a, b)
    if not dt.is_floating_point:
        _check_int_divisor(b, "remainder", a)
    r = binary(E.fmod, a, b)
    return where((r != 0) & ((r < 0) != (b < 0)), r + b, r)


def _detached_floor_divide(a, b):
    """floor(a / b) as a constant: PyTorch's remainder derivative uses div_floor, whose
    own derivative is zero."""
    with no_grad():
        return floor_divide(a, b)


REMAINDER = _composite("remainder", _remainder, kind="elementwise", args=("a", "b"),
                       dtypes="numeric", grad=lambda g, a, b, needs: (
                           g if needs[0] else None,
                           -g * _detached_floor_divide(a, b) if needs[1] else None),
                       signature="remainder(a, b)",
                       doc="Python's modulo: the result takes the divisor's sign")


def _broadcasts(input, other, op):
    """A composite's operands broadcast, checked under the op's own name."""
    if isinstance(input, Tensor) and isinstance(other, Tensor):
        broadcast_shapes2(input._shape, other._shape, op)


def remainder(input, other, *, out=None):
    """Python's modulo: the result has the divisor's sign."""
    _broadcasts(input, other, "remainder")
    if _float8_path("remainder", input, other) is D.bool_:
        raise NotImplementedError("\"remainder_cpu\" not implemented for 'Bool'")
    return write_out(out, _run_composite(REMAINDER, (input, other), {}))


def fmod(input, other, *, out=None):
    _tensor_arg("fmod", "input", input, 1)
    dt = result_type(input, other)
    if dt is D.bool_:
        raise NotImplementedError("\"fmod\" not implemented for 'Bool'")
    if not dt.is_floating_point:
        _check_int_divisor(other, "fmod", input)
    return write_out(out, binary(E.fmod, input, other))


def _rounding(spec, name):
    def fn(input, *, out=None):
        _tensor_arg(name, "input", input, 1)
        try:
            if input._dtype is D.bool_:
                raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")
        except SparseOperand as exc:        # a sparse COO input (dispatchtorch.sparse)
            return sparse_call(name, exc, (input,), {"out": out})
        if not input._dtype.is_floating_point:
            if input._dtype.is_complex:
                raise NotImplementedError(f"{name} is not supported for complex inputs")
            return write_out(out, input.clone())
        return write_out(out, unary(spec, input))
    fn.__name__ = fn.__qualname__ = name
    return fn


floor = _rounding(E._floor, "floor")
ceil = _rounding(E._ceil, "ceil")
trunc = fix = _rounding(E._trunc, "trunc")
_round0 = _rounding(E._round, "round")


@form_of(E._round)
def round(input, *, decimals=0, out=None):
    if decimals == 0:
        return _round0(input, out=out)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"round\" not implemented for '{input.dtype.pt_name}'")
    # as PyTorch: scale by 10**decimals, round half to even, scale back (half precision
    # computes in float32)
    x = input if input.dtype.itemsize >= 4 else input.float()
    if decimals > 0:
        scale = 10.0 ** decimals
        r = unary(E._round, x * scale) / scale
    else:
        scale = 10.0 ** -decimals
        r = unary(E._round, x / scale) * scale
    return write_out(out, r if r._dtype is input._dtype else r.to(input._dtype))


def pow(input, exponent, *, out=None):
    try:
        if isinstance(exponent, Tensor) and not isinstance(input, Tensor):
            dt = result_type(input, exponent)
            if dt is D.bool_:
                raise NotImplementedError("\"pow\" not implemented for 'Bool'")
            return write_out(out, _int_pow(input, exponent, dt) if dt.category < D.FLOAT
                             else binary(E.pow_, input, exponent))
        _tensor_arg("pow", "input", input, 1)
        dt = result_type(input, exponent)
        if dt is D.bool_:
            if isinstance(exponent, Tensor):
                raise NotImplementedError("\"pow\" not implemented for 'Bool'")
            return write_out(out, input.clone() if exponent else creation.ones_like(input))
        if dt.category < D.FLOAT:
            if isinstance(exponent, Tensor):
                return write_out(out, _int_pow(input, exponent, dt))
            if exponent < 0:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
        elif isinstance(exponent, numbers.Real) and (exponent == 0.5 or exponent == -0.5) \
                and dt.is_floating_point and dt is not D.float16:   # PyTorch's half: C's pow
            return write_out(out, _root_pow(input, exponent, dt))
        return write_out(out, binary(E.pow_, input, exponent))
    except SparseOperand as exc:          # a sparse COO base (dispatchtorch.sparse)
        return sparse_call("pow", exc, (input, exponent), {"out": out})


def _root_pow(input, exponent, dt):
    """PyTorch's pow(Tensor, Scalar) computes a real exponent 0.5 as sqrt and -0.5 as
    rsqrt (pow_tensor_scalar_kernel), so sqrt(-inf) = NaN and rsqrt(-0.0) = -inf where
    C's pow gives +inf and +inf; recorded as pow, whose rule's x ** -0.5 comes here too."""
    x = input if input._dtype is dt else input.to(dt)
    with no_grad():
        r = unary(E.sqrt, x) if exponent > 0 else 1 / unary(E.sqrt, x)
    if STATE.enabled and input._rg:
        record(OPS["pow"], (input, exponent), {}, (r,))
    return r


def _int_pow(a, b, dt):
    """Integer powers with tensor exponents: PyTorch gives 1 ** -n = 1,
    (-1) ** -n = +-1 and 0 otherwise where the prim requires b >= 0."""
    a, b, _ = _promoted(a, b)
    negative = b < 0
    r = binary(E.pow_, a, where(negative, 0, b))
    if not dt.is_signed:
        return r
    odd = binary(E.fmod, b, 2) != 0
    special = where(a == 1, 1, where(a == -1, where(odd, -1, 1), 0)).to(dt)
    return where(negative, special, r)


def complex_float_power(input, exponent, *, out=None):
    """float_power with a complex operand: both in complex128."""
    a = input.to(D.complex128) if isinstance(input, Tensor) else complex(input)
    b = exponent.to(D.complex128) if isinstance(exponent, Tensor) else complex(exponent)
    r = pow(a, b)
    if out is not None:
        return write_out(out, r)
    return r


def float_power(input, exponent, *, out=None):
    if any(isinstance(x, complex) or isinstance(x, Tensor) and x.dtype.is_complex
           for x in (input, exponent)):        # complex128, as PyTorch
        return complex_float_power(input, exponent, out=out)
    a = input.double() if isinstance(input, Tensor) else float(input)
    b = exponent.double() if isinstance(exponent, Tensor) else float(exponent)
    if isinstance(a, Tensor) and not isinstance(b, Tensor) and (b == 0.5 or b == -0.5):
        return write_out(out, _root_pow(a, b, D.float64))     # pow's, as PyTorch's
    return write_out(out, binary(E.pow_, a, b))


def square(input, *, out=None):
    _tensor_arg("square", "input", input, 1)
    try:
        if input._dtype is D.bool_:          # as pow(x, 2): bool ** 2 is int64
            input = input.to(D.int64)
    except SparseOperand as exc:
        return sparse_call("square", exc, (input,), {"out": out})
    return write_out(out, unary(E.square, input))


def _shift(spec, left):
    """Shifts by a negative amount or by at least the width give 0 (left) or the sign
    fill (right), as PyTorch; the prim is only asked for in-range amounts."""
    name = spec.name

    def fn(input, other, *, out=None):
        dt = result_type(input, other)
        a = input
        if dt is D.bool_ or dt.is_floating_point or dt.bare:    # PyTorch's kernel names
            raise NotImplementedError(f"\"{'l' if left else 'r'}shift_cpu\" not implemented for "
                                      f"'{dt.pt_name}'")
        bits = dt.itemsize * 8
        if not isinstance(other, Tensor):
            if 0 <= other < bits:
                r = binary(spec, input, other)
                return r if out is None else write_out(out, r, name, (input, other))
            if left:
                return write_out(out, creation.zeros_like(_promoted(input, other)[0]))
            a, _, _ = _promoted(input, other)
            return write_out(out, binary(spec, a, bits - 1) if dt.is_signed else creation.zeros_like(a))
        a, b, _ = _promoted(input, other)
        bad = (b < 0) | (b >= bits)
        r = binary(spec, a, where(bad, 0, b))
        fill = 0 if left or not dt.is_signed else binary(spec, a, bits - 1)
        return write_out(out, where(bad, fill, r))
    fn.__name__ = fn.__qualname__ = name
    return fn


bitwise_left_shift = _shift(E.bitwise_left_shift, True)
bitwise_right_shift = _shift(E.bitwise_right_shift, False)


def where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        return nonzero_coords.nonzero(condition, as_tuple=True)
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
    dt = result_type(x, *(b for b in (min, max) if b is not None))
    r = x = x if x._dtype is dt else x.to(dt)       # bounds apply in the result dtype
    # a number bound goes first: a maximum prim gives its second operand at a tie, and
    # PyTorch's clamp(-0.0, min=0) is x, -0.0, on either of its kernels' paths (a tensor
    # bound: its vectorised kernel gives the bound, as ours)
    if min is not None:
        r = binary(E.maximum, r, min) if isinstance(min, Tensor) else binary(E.maximum, min, r)
    if max is not None:
        r = binary(E.minimum, r, max) if isinstance(max, Tensor) else binary(E.minimum, max, r)
    return r.clone() if r is x else r


def _clamp_grad(g, x, min, max, needs):
    keep = None
    if min is not None:
        keep = x >= min
    if max is not None:
        keep = (x <= max) if keep is None else keep & (x <= max)
    # where, not g * mask (as PyTorch's clamp_backward): an inf or NaN g where the mask is
    # off gives 0, not NaN, and a negative g gives 0.0, not -0.0
    gx = where(keep, g, 0.0) if needs[0] else None
    both = min is not None and max is not None     # min > max: the result is max
    gmin = where((x < min) & (min < max) if both else x < min, g, 0.0) if needs[1] else None
    gmax = where((x > max) | (max < min) if both else x > max, g, 0.0) if needs[2] else None
    return gx, gmin, gmax


CLAMP = _composite("clamp", kind="elementwise", args=("x", "min", "max"), dtypes="numeric",
                  decomp=_clamp_decomp, grad=_clamp_grad,
                  signature="clamp(x, min=None, max=None)",
                  doc="min/max may be numbers or tensors; the gradient passes where "
                      "min <= x <= max")


def clamp(input, min=None, max=None, *, out=None, _op="clamp"):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    _tensor_arg(_op, "input", input, 1)
    if input._dtype.bare:
        bare_check("clamp" if min is not None and max is not None else
                   "clamp_min" if min is not None else "clamp_max", input._dtype)
    if result_type(input, *(b for b in (min, max) if b is not None)) is D.bool_:
        raise NotImplementedError(f"\"{_op}\" not implemented for 'Bool'")
    return write_out(out, decompose(CLAMP, (input, min, max), {}))


clip = clamp


@takes_out("clamp_min", dtype="safe")
def clamp_min(input, min):
    return clamp(input, min=min, _op="clamp_min")


@takes_out("clamp_max", dtype="safe")
def clamp_max(input, max):
    return clamp(input, max=max, _op="clamp_max")


def _truth(x):
    return x if x._dtype is D.bool_ else x != 0


LOGICAL_NOT = _composite("logical_not", lambda x: unary(E.bitwise_not, _truth(x)),
                         kind="elementwise", differentiable=False, signature="logical_not(x)",
                         doc="bool: x == 0")


def logical_not(input, *, out=None):
    _tensor_arg("logical_not", "input", input, 1)
    if input._dtype.bare:
        bare_check("logical_not", input._dtype)
    return write_out(out, _run_composite(LOGICAL_NOT, (input,), {}))


def _logical(spec):
    name = "logical_" + spec.name.split("_")[1]
    row = _composite(name, lambda a, b: binary(spec, _truth(a), _truth(b)), kind="elementwise",
                     args=("a", "b"), differentiable=False, signature=f"{name}(a, b)",
                     doc=f"bool: {spec.name} of (a != 0) and (b != 0)")

    def fn(input, other, *, out=None):
        _tensor_arg(name, "input", input, 1)
        _tensor_arg(name, "other", other, 2)
        _broadcasts(input, other, name)
        for x in (input, other):
            if x._dtype.bare:
                bare_check(name, x._dtype)
        return write_out(out, _run_composite(row, (input, other), {}))
    fn.__name__ = fn.__qualname__ = name
    return fn


logical_and = _logical(E.bitwise_and)
logical_or = _logical(E.bitwise_or)
logical_xor = _logical(E.bitwise_xor)


def _classifier(name, floating, doc):
    """isnan and friends: bool results; integers are always finite numbers."""
    integral = name == "isfinite"
    row = _composite(name, lambda x: floating(x) if x.dtype.is_floating_point else
                     creation.full(x.shape, integral, dtype=D.bool_, device=x.device),
                     kind="elementwise", differentiable=False, signature=f"{name}(x)", doc=doc)

    def fn(input):
        _tensor_arg(name, "input", input, 1)
        dt = input._dtype
        if dt.bare and dt.is_floating_point and name != "isnan":
            if dt.name not in CLASSIFIER_RUNS.get(name, ()):
                bare_check(name, dt)
            if dt.name == "float8_e8m0fnu":     # isfinite: NaN but no infinities
                return input == input
        return _run_composite(row, (input,), {})
    fn.__name__ = fn.__qualname__ = name
    return fn


isnan = _classifier("isnan", lambda x: x != x, "x != x")
isinf = _classifier("isinf", lambda x: x.abs() == float("inf"), "|x| == inf")
isfinite = _classifier("isfinite", lambda x: (x == x) & (x.abs() != float("inf")),
                       "neither NaN nor infinite")
isposinf = takes_out("isposinf", dtype="cast")(
    _classifier("isposinf", lambda x: x == float("inf"), "x == +inf"))
isneginf = takes_out("isneginf", dtype="cast")(
    _classifier("isneginf", lambda x: x == float("-inf"), "x == -inf"))


def isreal(input):
    return creation.ones_like(input, dtype=D.bool_)


def positive(input):
    if input.dtype is D.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@form_of(E.logit)
def logit(input, eps=None, *, out=None):
    _tensor_arg("logit", "input", input, 1)
    if eps is not None:
        input = clamp(input if input.dtype.is_floating_point else input.to(D.get_default_dtype()),
                      eps, 1 - eps)
    return write_out(out, unary(E.logit, input))


def lerp(input, end, weight, *, out=None):
    _tensor_arg("lerp", "input", input, 1)
    _tensor_arg("lerp", "end", end, 2)
    if not input._dtype.is_grad or input._dtype.bare:      # PyTorch's kernel names
        kernel = "lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype.pt_name}'")
    if end._dtype is not input._dtype:
        raise RuntimeError(f"lerp: expected dtype {input.dtype.name.replace('float32', 'float')} for `end` "
                           f"but got dtype {end.dtype.name.replace('float32', 'float')}")
    if isinstance(weight, Tensor) and weight._shape and weight._dtype is not input._dtype:
        raise RuntimeError(f"lerp: expected dtype {input.dtype.name} for `weight` but got dtype "
                           f"{weight.dtype.name}")
    shape = broadcast_shapes2(input._shape, end._shape, "lerp")
    if isinstance(weight, Tensor):
        broadcast_shapes2(shape, weight._shape, "lerp")
    return write_out(out, nary(E.lerp, (input, end, weight)))


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    _tensor_arg("nan_to_num", "input", input, 1)
    if input._dtype.bare:
        bare_check("nan_to_num", input._dtype)
    return write_out(out, decompose(E.NAN_TO_NUM, (input,),
                                    {"nan": nan, "posinf": posinf, "neginf": neginf}))


# -- in-place forms of the ops above --------------------------------------------------------------

from ._composite import inplace_variant as _inplace_of  # noqa: E402

true_divide_ = divide_ = div_
floor_divide_ = _inplace_of(floor_divide, "floor_divide_")
remainder_ = _inplace_of(remainder, "remainder_")
def fmod_(input, other):
    """In place without a copy (the divisor is checked first, as by fmod)."""
    dt = result_type(input, other)
    if dt is D.bool_:
        raise NotImplementedError("\"fmod\" not implemented for 'Bool'")
    if not dt.is_floating_point:
        _check_int_divisor(other, "fmod_", input)
    return inplace(E.fmod, input, other)
floor_ = _inplace_of(floor, "floor_")
ceil_ = _inplace_of(ceil, "ceil_")
trunc_ = fix_ = _inplace_of(trunc, "trunc_")
round_ = _inplace_of(round, "round_")
pow_ = _inplace_of(pow, "pow_")
float_power_ = _inplace_of(float_power, "float_power_")
square_ = _inplace_of(square, "square_")
bitwise_left_shift_ = _inplace_of(bitwise_left_shift, "bitwise_left_shift_")
bitwise_right_shift_ = _inplace_of(bitwise_right_shift, "bitwise_right_shift_")
clamp_ = clip_ = _inplace_of(clamp, "clamp_")
clamp_min_ = _inplace_of(clamp_min, "clamp_min_")
clamp_max_ = _inplace_of(clamp_max, "clamp_max_")
logical_not_ = _inplace_of(logical_not, "logical_not_")
logical_and_ = _inplace_of(logical_and, "logical_and_")
logical_or_ = _inplace_of(logical_or, "logical_or_")
logical_xor_ = _inplace_of(logical_xor, "logical_xor_")
logit_ = _inplace_of(logit, "logit_")
lerp_ = _inplace_of(lerp, "lerp_")
nan_to_num_ = _inplace_of(nan_to_num, "nan_to_num_")

mul = FUNCTIONS["mul"]
eq, ne, lt, le, gt, ge = (FUNCTIONS[n] for n in ("eq", "ne", "lt", "le", "gt", "ge"))
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
maximum, minimum, atan2 = (FUNCTIONS[n] for n in ("maximum", "minimum", "atan2"))
fmax, fmin, hypot = FUNCTIONS["fmax"], FUNCTIONS["fmin"], FUNCTIONS["hypot"]
xlogy, logaddexp = FUNCTIONS["xlogy"], FUNCTIONS["logaddexp"]
arctan2 = atan2


# hand-written forms the rows' derivative rules call by name (registry.FORMS)
for _name in ("div", "pow", "where", "trunc", "isfinite"):
    form_of(OPS[_name])(globals()[_name])

# what `from .pointwise import *` exports: the op functions, not this module's helpers
__all__ = sorted(set(FUNCTIONS) | set(INPLACE) | {
    "add", "add_", "sub", "sub_", "rsub", "subtract", "multiply", "div", "div_", "divide",
    "divide_", "true_divide", "true_divide_", "floor_divide", "floor_divide_", "remainder",
    "remainder_", "fmod", "fmod_", "floor", "floor_", "ceil", "ceil_", "trunc", "trunc_", "fix",
    "fix_", "round", "round_", "pow", "pow_", "float_power", "float_power_", "square", "square_",
    "bitwise_left_shift", "bitwise_left_shift_", "bitwise_right_shift", "bitwise_right_shift_",
    "where", "clamp", "clamp_", "clip", "clip_", "clamp_min", "clamp_min_", "clamp_max",
    "clamp_max_", "logical_not", "logical_not_", "logical_and", "logical_and_", "logical_or",
    "logical_or_", "logical_xor", "logical_xor_", "isnan", "isinf", "isfinite", "isposinf",
    "isneginf", "isreal", "positive", "logit", "logit_", "lerp", "lerp_", "nan_to_num",
    "nan_to_num_", "greater", "greater_equal", "less", "less_equal", "not_equal", "arctan2"})
