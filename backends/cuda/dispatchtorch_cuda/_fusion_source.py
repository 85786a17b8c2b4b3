"""The CUDA source of a fused elementwise region (dispatchtorch.compile's hook), as
plain strings: the `operation` of one cupy.ElementwiseKernel computing every op of the
region in registers. No cupy here, so the CPU tests compile it with nvcc and run its
arithmetic on the host with g++.

float32 and float64 (and bool results of comparisons, casts between them) only: the
16-bit floats round after every prim, integer ops have the CPU reference's checks.
"""
from __future__ import annotations

import math

CTYPE = {"float32": "float", "float64": "double", "bool": "bool"}

# per op: the C++ expression over {a}, {b}, {c} (where's condition) and {T} (the compute
# type); the math functions are CUDA's float/double overloads
_EXPR = {
    "add": "({a} + {b})", "sub": "({a} - {b})", "mul": "({a} * {b})", "div": "({a} / {b})",
    "neg": "(-{a})", "abs": "fabs({a})", "pow": "pow({a}, {b})", "atan2": "atan2({a}, {b})",
    "fmod": "fmod({a}, {b})", "round": "rint({a})",
    "maximum": "(({a} > {b} || {a} != {a}) ? {a} : {b})",
    "minimum": "(({a} < {b} || {a} != {a}) ? {a} : {b})",
    "relu": "({a} <= ({T})0 ? ({T})0 : {a})",            # NaN passes, as the relu kernel
    "eq": "({a} == {b})", "ne": "({a} != {b})", "lt": "({a} < {b})", "le": "({a} <= {b})",
    "gt": "({a} > {b})", "ge": "({a} >= {b})",
    "where": "({c} ? {a} : {b})",
    **{f: f + "({a})" for f in ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
                                "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
                                "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc",
                                "floor", "ceil", "trunc")},
}


def can_fuse(op, dtype):
    if op == "cast":
        return dtype in CTYPE
    return op in _EXPR and dtype in ("float32", "float64")


def literal(value, dtype):
    t = CTYPE[dtype]
    if dtype == "bool":
        return "true" if value else "false"
    value = float(value)
    if math.isnan(value):
        return f"(({t})(0.0 / 0.0))"
    if math.isinf(value):
        return f"(({t})({'-' if value < 0 else ''}1.0 / 0.0))"
    return f"(({t}){value!r})"


def operation(region):
    """(in_params, out_params, operation) for cupy.ElementwiseKernel."""
    ops = region.ops
    lines = []
    for j, o in enumerate(ops):
        names = o.operand_names(lambda v, _k, dt=o.in_dtype: literal(v, dt))
        if o.op == "cast":
            x = names[0]
            expr = f"({x} != 0)" if o.dtype == "bool" else f"(({CTYPE[o.dtype]}){x})"
        elif o.op == "where":
            expr = _EXPR["where"].format(c=names[0], a=names[1], b=names[2])
        else:
            expr = _EXPR[o.op].format(a=names[0], b=names[1] if len(names) > 1 else "",
                                      T=CTYPE[o.in_dtype])
        lines.append(f"const {CTYPE[o.dtype]} t{j} = {expr};")
    for k, j in enumerate(region.outputs):
        lines.append(f"o{k} = t{j};")
    in_params = ", ".join(f"{d} i{i}" for i, d in enumerate(region.inputs))
    out_params = ", ".join(f"{ops[j].dtype} o{k}" for k, j in enumerate(region.outputs))
    return in_params, out_params, " ".join(lines)
