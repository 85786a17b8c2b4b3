"""Which ops PyTorch 2.13 computes in the bare dtypes (uint16-64, float8), and the name of
the CPU kernel its refusal names: `"add_stub" not implemented for 'UInt16'`.

Probed op by op against torch 2.13 (docs/dtypes.md lists the results). The unsigned
types run every elementwise op PyTorch's integer kernels run through a float (sin,
sqrt, div) or a bit operation, but none of its arithmetic or ordering kernels; float8
runs almost nothing (mul only tensor by tensor). The elementwise tables (_elementwise.Elementwise.build) read this
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

# float8 with a CPU scalar as the second operand (TensorIterator's is_scalar(2): a Python
# number, a 0-d tensor, or any tensor broadcast from one element): PyTorch's CPU kernels
# take a separate reduced-float path there, which has no float8 kernel.
# op -> (the scalar path's kernel name, the tensor path's: None where it runs float8)
FLOAT8_SCALAR_PATH = {
    "mul": ("mul_cpu_reduced_float", None), "div": ("div_cpu_reduced_float", "div_cpu"),
    "div_floor": ("div_floor_cpu_reduced_float", "div_floor_cpu"),
    "div_trunc": ("div_trunc_cpu_reduced_float", "div_trunc_cpu"),
    "remainder": ("remainder_cpu", "remainder_cpu")}
FLOAT8_SCALAR_PATH["floor_divide"] = FLOAT8_SCALAR_PATH["div_floor"]

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


def is_cpu_scalar(b) -> bool:
    """TensorIterator's is_scalar for operand b: every dim it spans has size 1 or stride 0."""
    shape = getattr(b, "_shape", None)
    return shape is None or all(n == 1 or s == 0 for n, s in zip(shape, b.stride()))


def float8_binary(op_name: str, dt, b) -> bool:
    """For float8 dt and an op of FLOAT8_SCALAR_PATH with second operand b: True where
    PyTorch runs it, else raise its NotImplementedError (naming the path b takes)."""
    kernel = FLOAT8_SCALAR_PATH[op_name][0 if is_cpu_scalar(b) else 1]
    if kernel is None:
        return True
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt.pt_name}'")


def check_reflected(op_name: str, dt, number) -> None:
    """`number * x` / `number / x` for a float8 x, as PyTorch's operators run them:
    __rmul__ is x.mul(number) (the scalar path), __rtruediv__ x.reciprocal() * number."""
    if op_name == "div":
        raise refusal("reciprocal", dt)
    if op_name in FLOAT8_SCALAR_PATH:
        float8_binary(op_name, dt, number)


def refusal(op_name: str, dt) -> NotImplementedError:
    """PyTorch's error for an op it has no kernel for in dtype dt."""
    return NotImplementedError(f"\"{kernel_name(op_name, dt)}\" not implemented for "
                               f"'{dt.pt_name}'")


# the other ops PyTorch refuses for some bare dtypes: op -> (kernel its message names,
# the refused kinds: "u" uint16-64, "f" float8, "e" float8_e8m0fnu only)
_OPS = {
    "sum": ("sum_cpu", "f"), "nansum": ("nansum_cpu", "f"), "mean": ("sum_cpu", "f"),
    "prod": ("prod_out_cpu", "f"), "cumsum": ("cumsum_out_cpu", "f"),
    "cumprod": ("cumprod_out_cpu", "f"), "amax": ("max_values_cpu", "uf"),
    "amin": ("min_values_cpu", "uf"), "max": ("max_all", "uf"), "min": ("min_all", "uf"),
    "max_dim": ("max_cpu", "uf"), "min_dim": ("min_cpu", "uf"), "aminmax": ("aminmax_cpu", "uf"),
    "argmax": ("argmax_cpu", "uf"), "argmin": ("argmin_cpu", "uf"),
    "count_nonzero": ("nonzero_count_cpu", "uf"), "nonzero": ("nonzero_count_cpu", "uf"),
    "sort": ("sorting_kernel_method_name", "f"), "argsort": ("sorting_kernel_method_name", "f"),
    "topk": ("topk_cpu", "uf"), "unique": ("unique", "f"), "equal": ("equal_notnan_cpu", "f"),
    "masked_fill": ("masked_fill", "uf"), "index_fill": ("index_fill_cpu", "uf"),
    "masked_select": ("masked_select", "u"), "index_put": ("index_put", "ue"),
    "gather": ("scatter_gather_tensor_cpu", "uf"), "scatter": ("scatter_gather_tensor_cpu", "uf"),
    "index_add": ("scatter_gather_tensor_cpu", "uf"), "take": ("take_cpu", "uf"),
    "index_copy": ("index_copy_cpu", "uf"), "trace": ("trace", "uf"),
    "arange": ("arange_cpu", "uf"), "linspace": ("linspace_cpu", "uf"),
    "logspace": ("logspace_cpu", "uf"), "eye": ("eye", "u"), "randperm": ("randperm", "uf"),
    "uniform": ("check_uniform_bounds", "uf"), "normal": ("normal_kernel_cpu", "uf"),
    "random": ("random_update_from_to", "f"), "bernoulli": ("bernoulli_tensor_cpu_self_", "uf"),
    "clamp": ("clamp_scalar_cpu", "uf"), "clamp_min": ("clamp_min_scalar_cpu", "uf"),
    "clamp_max": ("clamp_max_scalar_cpu", "uf"), "logical_not": ("logical_not_cpu", "uf"),
    "logical_and": ("logical_and_cpu", "uf"), "logical_or": ("logical_or_cpu", "uf"),
    "logical_xor": ("logical_xor_cpu", "uf"), "isinf": ("isinf", "f"),
    "isfinite": ("isfinite", "f"), "isposinf": ("isposinf_cpu", "f"), "isneginf": ("isneginf_cpu", "f"),
    "nan_to_num": ("nan_to_num", "f"), "kthvalue": ("kthvalue_cpu", "uf"),
    "bincount": ("bincount_cpu", "uf"), "histc": ("aminmax_cpu", "uf"),
    "matmul": ("addmm_impl_cpu_", "ue"), "dot": ("dot", "uf"),
    "isclose": ("mul_cpu_reduced_float", "f"), "median": ("median_cpu", "uf"),
    "index_select": ("index_select", "u"), "gather_expanded_index": ("gather_expanded_index", "f"),
}


# the float8 types isinf / isfinite run for (those "f" above refuses for the others)
CLASSIFIER_RUNS = {"isinf": frozenset({"float8_e5m2"}),
                   "isfinite": frozenset({"float8_e5m2", "float8_e8m0fnu"})}


def check_op(op: str, dt) -> None:
    """Raise PyTorch's NotImplementedError if op `op` (a key of _OPS) has no kernel for dt.
    Callers test `dt.bare` first, so the common dtypes pay one attribute read."""
    kernel, kinds = _OPS.get(op) or (f"{op}_cpu", "uf")
    kind = "e" if dt.name == "float8_e8m0fnu" and "e" in kinds else \
        "f" if dt.is_floating_point else "u"
    if kind in kinds:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt.pt_name}'")
