"""Which ops PyTorch 2.13 computes in the bare dtypes (uint16-64, float8), and the name of
the CPU kernel its refusal names: `"add_stub" not implemented for 'UInt16'`.

Probed op by op against torch 2.13 (docs/dtypes.md lists the results). The unsigned
types run every elementwise op PyTorch's integer kernels run through a float (sin,
sqrt, div) or a bit operation, but none of its arithmetic or ordering kernels; float8
runs almost nothing. The elementwise tables (_elementwise.Elementwise.build) read this
once, so the common dtypes' per-call path is unchanged."""
from __future__ import annotations

# unsigned 16-64 bit: the elementwise ops PyTorch refuses (everything else runs)
UNSIGNED_REFUSED = frozenset({
    "add", "sub", "abs", "neg", "bitwise_left_shift", "bitwise_right_shift", "bitwise_not",
    "fmax", "fmin", "fmod", "remainder", "frac", "gcd", "lcm", "ge", "gt", "le", "lt",
    "heaviside", "hypot", "igamma", "igammac", "lerp", "logaddexp", "logaddexp2", "maximum",
    "minimum", "nextafter", "pow", "square", "relu", "sign", "sgn", "clamp", "clamp_min",
    "clamp_max", "copysign_", "float_power_", "floor_divide"})
# float8: the elementwise ops PyTorch runs (tensor operands; all others refuse)
FLOAT8_RUN = frozenset({"eq", "ne", "mul", "abs", "isnan"})
FLOAT8_NOT = {"abs": frozenset({"float8_e8m0fnu"})}     # abs_cpu has no e8m0 (no sign bit)

# the kernel names PyTorch's messages use, where not "<op>_cpu"
_VML = frozenset("acos asin atan ceil cos erf erfc erfinv exp expm1 floor i0 lgamma log log10 "
                 "log1p log2 round sin sqrt tan tanh trunc".split())
_NAMED = {"add": "add_stub", "sub": "add_stub", "digamma": "digamma", "exp2": "exp2",
          "deg2rad": "mul_cpu_reduced_float", "rad2deg": "mul_cpu_reduced_float",
          "lerp": "lerp_kernel_tensor", "pow": "pow", "square": "pow", "float_power": "pow",
          "relu": "clamp_min_scalar_cpu", "clamp_min": "clamp_min_scalar_cpu",
          "clamp_max": "clamp_max_scalar_cpu", "clamp": "clamp_scalar_cpu",
          "sigmoid": "sigmoid_cpu_reduced_float", "bitwise_left_shift": "lshift_cpu",
          "bitwise_right_shift": "rshift_cpu", "isinf": "isinf", "isfinite": "isfinite",
          "nan_to_num": "nan_to_num", "floor_divide": "div_floor_cpu"}
_UNSIGNED_NAMED = {"fmax": "maximum_cpu", "fmin": "minimum_cpu"}


def runs(op_name: str, dt) -> bool:
    """Whether PyTorch computes elementwise op `op_name` for bare dtype `dt`."""
    if dt.is_floating_point:
        return op_name in FLOAT8_RUN and dt.name not in FLOAT8_NOT.get(op_name, ())
    return op_name not in UNSIGNED_REFUSED


def kernel_name(op_name: str, dt) -> str:
    """The kernel PyTorch's NotImplementedError names for op `op_name` in bare dtype dt."""
    if not dt.is_floating_point and op_name in _UNSIGNED_NAMED:
        return _UNSIGNED_NAMED[op_name]
    name = op_name.removeprefix("special_")
    return _NAMED.get(name) or (f"{name}_vml_cpu" if name in _VML else f"{name}_cpu")


def refusal(op_name: str, dt) -> NotImplementedError:
    """PyTorch's error for an op it has no kernel for in dtype dt."""
    return NotImplementedError(f"\"{kernel_name(op_name, dt)}\" not implemented for "
                               f"'{dt.pt_name}'")


def check(op_name: str, dt, kernel: str | None = None) -> None:
    """Raise PyTorch's refusal if dt is bare: for the ops PyTorch has no bare kernel for
    at all (arange, sort of float8 ...); `kernel`: the name its message uses."""
    if dt.bare:
        raise NotImplementedError(f"\"{kernel or kernel_name(op_name, dt)}\" not implemented "
                                  f"for '{dt.pt_name}'")
