"""A compiled region as one generated C loop (c_compiler.py builds and caches it).

The region's operands are seen as (rows, columns): each one either walks the columns
contiguously or holds one value a row (a broadcast along the columns), and steps by a
stride of its own from row to row. That covers contiguous tensors, scalars, a bias
row (a (N,) vector broadcast over a batch) and a per-row statistic ((B, 1) over
(B, N)); any other layout (a transposed view, a step) runs the region's tiles. Every
layout signature compiles once; the shape and strides are arguments.

The numbers are eager's: each op's expression is what its numpy kernel computes
(maximum's NaN and tie rules, relu(-0.0) = -0.0, rint for round, C casts as
np.copyto's), in the op's dtype, rounded after every op (no contraction), except the
transcendentals, which come from libmvec (within 4 ulp, as numpy's own loops).
"""
from __future__ import annotations

import ctypes
import math
from math import prod

import numpy as np

from . import c_compiler
from .parallel import POOL

# below this many elements the region's straight-line numpy calls cost about what the
# C call's argument marshalling does (and a region not worth a compile is not compiled)
MIN_ELEMENTS = 1 << 15
CHUNK = 1 << 16          # elements per task on the thread pool

_CTYPE = {"float32": "float", "float64": "double", "bool": "unsigned char"}
_FLOATS = ("float32", "float64")
_TRANSCENDENTAL = frozenset(c_compiler._UNARY) | {"pow", "atan2"}
_BINARY_OP = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_BOOL_BITWISE = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}
_ROUNDING = {"floor": "floor", "ceil": "ceil", "round": "rint", "trunc": "trunc",
             "sqrt": "sqrt", "abs": "fabs"}     # exact (correctly rounded) libm calls


def _fn(name, dtype):
    """The libm name for dtype: expf for float32, exp for float64."""
    return name + "f" if dtype == "float32" else name


def _expr(o, a):
    """The C expression of FusedOp o over operand expressions a, or None (not here)."""
    op, dt = o.op, o.in_dtype
    if op == "cast":
        if o.dtype == "bool":
            return f"(unsigned char)({a[0]} != 0)"
        return f"({_CTYPE[o.dtype]})({a[0]})"
    if op == "where":
        return f"({a[0]} ? {a[1]} : {a[2]})"
    if op in _COMPARE:
        return f"(unsigned char)({a[0]} {_COMPARE[op]} {a[1]})"
    if dt == "bool":
        if op in _BOOL_BITWISE:
            return f"(unsigned char)({a[0]} {_BOOL_BITWISE[op]} {a[1]})"
        return "(unsigned char)(!" + a[0] + ")" if op == "bitwise_not" else None
    if dt not in _FLOATS:
        return None
    if op in _BINARY_OP:
        return f"({a[0]} {_BINARY_OP[op]} {a[1]})"
    if op == "neg":
        return f"(-{a[0]})"
    if op in _ROUNDING:
        return f"{_fn(_ROUNDING[op], dt)}({a[0]})"
    if op == "maximum":        # numpy: a NaN operand wins (the first one), a tie gives b
        return f"({a[0]} != {a[0]} ? {a[0]} : {a[1]} != {a[1]} ? {a[1]} : " \
               f"{a[0]} > {a[1]} ? {a[0]} : {a[1]})"
    if op == "minimum":
        return f"({a[0]} != {a[0]} ? {a[0]} : {a[1]} != {a[1]} ? {a[1]} : " \
               f"{a[0]} < {a[1]} ? {a[0]} : {a[1]})"
    if op == "relu":           # maximum(0, x): NaN stays, and a tie (x = -0.0) gives x
        return f"({a[0]} != {a[0]} ? {a[0]} : 0 > {a[0]} ? ({_CTYPE[dt]})0 : {a[0]})"
    if op in _TRANSCENDENTAL and _fn(op, dt) in c_compiler.simd_functions():
        return f"{_fn(op, dt)}({', '.join(a)})"
    return None


def _literal(value, dtype):
    v = np.asarray(value).astype(dtype).item()
    if dtype == "bool":
        return str(int(bool(v)))
    if math.isnan(v):
        return f"(({_CTYPE[dtype]})__builtin_nan(\"\"))"
    if math.isinf(v):
        return f"(({_CTYPE[dtype]}){'-' if v < 0 else ''}__builtin_inf())"
    return f"(({_CTYPE[dtype]}){float(v).hex()})"       # hex: the exact bits


def _operand_dtype(region, o, k):
    kind, v = o.args[k]
    if kind == "in":
        return region.inputs[v]
    if kind == "tmp":
        return region.ops[v].dtype
    return "bool" if o.op == "where" and k == 0 else o.in_dtype


def _body(region):
    """[C statements] computing every op from loaded locals, or None where an op, a
    dtype or an operand's dtype is not one this code generator renders exactly."""
    if any(d not in _CTYPE for d in region.inputs):
        return None
    lines = []
    for j, o in enumerate(region.ops):
        if o.dtype not in _CTYPE or o.in_dtype not in _CTYPE:
            return None
        want = ["bool" if o.op == "where" and k == 0 else o.in_dtype
                for k in range(len(o.args))]
        if any(_operand_dtype(region, o, k) != w for k, w in enumerate(want)):
            return None                     # an implicit conversion numpy would make
        names = []
        for k, (kind, v) in enumerate(o.args):
            names.append(f"a{v}" if kind == "in" else f"t{v}" if kind == "tmp"
                         else _literal(v, want[k]))
        e = _expr(o, names)
        if e is None:
            return None
        lines.append(f"{_CTYPE[o.dtype]} t{j} = {e};")
    return lines


def source(region, kinds):
    """The C source of the region for operand layouts `kinds` (per output then input:
    "c" contiguous columns, "z" one value a row), or None when it has no C form."""
    if any(o.op in ("sum", "amax", "amin") for o in region.ops):
        return None
    body = _body(region)
    if body is None:
        return None
    n_out = len(region.outputs)
    used = sorted({v for o in region.ops for kind, v in o.args if kind == "in"})
    decl = sorted({(o.op, o.in_dtype) for o in region.ops if o.op in _TRANSCENDENTAL})
    lines = ["#include <math.h>", "#include <stdint.h>"]
    for op, dt in decl:             # math.h's own declarations carry no simd attribute
        t = _CTYPE[dt]
        args = ", ".join([t] * (2 if op in ("pow", "atan2") else 1))
        lines += ["#pragma omp declare simd notinbranch", f"{t} {_fn(op, dt)}({args});"]
    lines += ["void kernel(int64_t r0, int64_t r1, int64_t c0, int64_t c1, char **p, "
              "const int64_t *rs) {",
              "  for (int64_t r = r0; r < r1; r++) {"]
    ptr = {}
    for m in range(n_out):
        t = _CTYPE[region.ops[region.outputs[m]].dtype]
        lines.append(f"    {t} *o{m} = ({t} *)p[{m}] + r * rs[{m}];")
    for v in used:
        t, slot = _CTYPE[region.inputs[v]], n_out + v
        if kinds[slot] == "z":
            lines.append(f"    const {t} z{v} = *((const {t} *)p[{slot}] + r * rs[{slot}]);")
        else:
            lines.append(f"    const {t} *i{v} = (const {t} *)p[{slot}] + r * rs[{slot}];")
        ptr[v] = kinds[slot]
    lines += ["    #pragma omp simd", "    for (int64_t c = c0; c < c1; c++) {"]
    # every load before any store: an output that is also an input (an in-place op) is
    # read and written at the same element only
    for v in used:
        t = _CTYPE[region.inputs[v]]
        lines.append(f"      {t} a{v} = " + (f"z{v};" if ptr[v] == "z" else f"i{v}[c];"))
    lines += [f"      {s}" for s in body]
    lines += [f"      o{m}[c] = t{j};" for m, j in enumerate(region.outputs)]
    lines += ["    }", "  }", "}", ""]
    return "\n".join(lines)


def layout(shape, arrays):
    """(rows, columns, kinds, row strides) viewing every array (of `shape`) as rows of
    columns, each "c" (contiguous columns) or "z" (one value a row), or None."""
    dims = [d for d in shape if d != 1]
    if not dims:
        return 1, 1, ("z",) * len(arrays), (0,) * len(arrays)
    steps = []
    for a in arrays:
        if a.strides and any(s % a.itemsize for s in a.strides):
            return None
        steps.append([s // a.itemsize for s, d in zip(a.strides, shape) if d != 1])
    for k in range(len(dims)):          # columns: dims[k:], the most that fit
        lead, cols = dims[:k], prod(dims[k:])
        kinds, rows = [], []
        for st in steps:
            inner = st[k:]
            if all(s == 0 for s in inner):
                kinds.append("z")
            elif inner == [prod(dims[i + 1:]) for i in range(k, len(dims))]:
                kinds.append("c")
            else:
                break
            outer = st[:k]                  # the leading dims must collapse to one stride
            if any(outer[i] != outer[i + 1] * lead[i + 1] for i in range(len(outer) - 1)):
                break
            rows.append(outer[-1] if outer else 0)
        else:
            return prod(lead), cols, tuple(kinds), tuple(rows)
    return None


def _pointer(a):
    return a.__array_interface__["data"][0]


def kernel_for(region, fallback):
    """kernel(*outs, *ins) running region as generated C where its layout allows (else
    `fallback`, the tile kernel), or None when the region has no C form or no compiler."""
    if prod(region.shape) < MIN_ELEMENTS or c_compiler.compiler() is None \
            or source(region, ("c",) * (len(region.outputs) + len(region.inputs))) is None:
        return None
    n_out = len(region.outputs)
    by_kinds = {}
    shape = tuple(region.shape)

    def function(kinds):
        fn = by_kinds.get(kinds)
        if fn is None:
            fn = c_compiler.load(source(region, kinds)).kernel
            fn.argtypes = [ctypes.c_int64] * 4 + [ctypes.c_void_p, ctypes.c_void_p]
            fn.restype = None
            by_kinds[kinds] = fn
        return fn

    def kernel(*handles):
        outs, ins = handles[:n_out], handles[n_out:]
        geometry = layout(shape, handles)
        if geometry is None or any(_overlaps_apart(o, i) for o in outs for i in ins):
            return fallback(*handles)
        rows, cols, kinds, rs = geometry
        if cols > 1 and "z" in kinds[:n_out]:
            return fallback(*handles)        # (a write through a broadcast: never given)
        fn = function(kinds)
        n = len(handles)
        p = (ctypes.c_void_p * n)(*[_pointer(a) for a in handles])
        strides = (ctypes.c_int64 * n)(*rs)
        tasks = _tasks(rows, cols)
        if len(tasks) == 1 or POOL.threads == 1:
            for r0, r1, c0, c1 in tasks:
                fn(r0, r1, c0, c1, p, strides)
            return
        POOL.run(len(tasks), lambda i: fn(*tasks[i], p, strides))
    kernel.source = source(region, ("c",) * (n_out + len(region.inputs)))
    return kernel


def _overlaps_apart(out, x):
    """Whether an output and an input share memory other than element for element
    (the one aliasing the region contract allows): then the tiles, which check it."""
    if not np.may_share_memory(out, x):
        return False
    return not (_pointer(out) == _pointer(x) and out.strides == x.strides)


def _tasks(rows, cols):
    """(r0, r1, c0, c1) blocks of about CHUNK elements: whole rows where they are many."""
    per = max(1, CHUNK // max(cols, 1))
    if rows > 1 and per <= rows:
        return [(r, min(r + per, rows), 0, cols) for r in range(0, rows, per)]
    if rows == 1:
        return [(0, 1, c, min(c + CHUNK, cols)) for c in range(0, cols, CHUNK)]
    return [(0, rows, 0, cols)]
