"""Kernel source generation shared by the kernel families.

`loop_kernel` is the one template behind every elementwise-shaped kernel (the
elementwise prims, copies, fills, gather, searchsorted, nonzero): operands are
strided views over one iteration shape, coalesced first, and each work-item walks
a contiguous range of C-order positions, a row at a time so the innermost loop is
a plain (vectorisable) loop over the last dim.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from math import prod

import numpy as np

from . import cltypes as T
from .handle import coalesce

I64 = np.int64
_PLAN_LIMIT = 20000


@dataclass(frozen=True)
class KernelSpec:
    name: str             # the kernel function's name
    source: str
    arg_types: tuple      # per argument: None (buffer) or the numpy scalar type
    what: str             # "op (dtypes)" for error messages


@dataclass(frozen=True)
class Operand:
    var: str              # C name stem: pointer p_<var>, offset o_<var>, position q_<var>
    dtype: str
    const: bool = True


def kernel_name(*parts):
    return "_".join(str(p).replace(".", "") for p in parts if p != "")


def signature(params):
    """C parameter list and argument types from (ctype, name, numpy type or None)."""
    return ", ".join(f"{c} {n}" for c, n, _ in params), tuple(t for _, _, t in params)


def loop_kernel(name, operands, kinds, ndim, body, *, params=(), setup="", finish="",
                helpers="", dtypes=(), what="", vector=None):
    """A KernelSpec walking `ndim` coalesced dims.

    kinds: per operand the last dim's stride class: 'c' (1), 'z' (0) or 'g' (other).
    body(ix): C statements for one element; ix maps operand var to the element's
    index expression. `lin` is the element's C-order linear index and `wi` the
    work-item's number. Arguments: per operand (pointer, offset, outer strides,
    last stride if 'g'), then n, chunk, the ndim sizes, then `params`.

    vector: optional (width, vbody); vbody(lane) gives C statements for `width`
    consecutive elements, lane(var, k) the index of element j + k. The row is then
    walked `width` at a time (so math builtins run on vector types: one call per
    `width` elements) with `body` finishing the tail."""
    D = ndim
    args = []
    for op, kind in zip(operands, kinds):
        args.append((T.pointer(op.dtype, op.const), f"p_{op.var}", None))
        args.append(("long", f"o_{op.var}", I64))
        args += [("long", f"st_{op.var}_{d}", I64) for d in range(D - 1)]
        if kind == "g":
            args.append(("long", f"st_{op.var}_{D - 1}", I64))
    args += [("long", "n", I64), ("long", "chunk", I64)]
    args += [("long", f"sh{d}", I64) for d in range(D)]
    args += list(params)
    sig, types = signature(args)

    lines = ["long wi = get_global_id(0);", "long s = wi * chunk;", "if (s >= n) return;",
             "long e = s + chunk; if (e > n) e = n;"]
    if D == 1:
        lines.append("long cl_ = s;")
        for op in operands:
            lines.append(f"long q_{op.var} = o_{op.var};")
    else:
        lines.append("long r_ = s;")
        for d in range(D - 1, 0, -1):
            lines.append(f"long c{d} = r_ % sh{d}; r_ /= sh{d};")
        lines.append("long c0 = r_;")
        for op in operands:
            terms = " + ".join(f"c{d} * st_{op.var}_{d}" for d in range(D - 1))
            lines.append(f"long q_{op.var} = o_{op.var} + {terms};")
        lines.append(f"long cl_ = c{D - 1};")
    lines.append("long i = s;")
    lines.append(setup)
    ix = {}
    for op, kind in zip(operands, kinds):
        v = op.var
        ix[v] = {"c": f"q_{v} + j", "z": f"q_{v}", "g": f"q_{v} + j * st_{v}_{D - 1}"}[kind]
    lines.append("for (;;) {")
    lines.append(f"  long len = sh{D - 1} - cl_; if (len > e - i) len = e - i;")
    lines.append("  long j = cl_;")
    if vector is not None:
        width, vbody = vector

        def lane(var, k):
            return re.sub(r"\bj\b", f"(j + {k})", ix[var])
        lines.append(f"  for (; j + {width} <= cl_ + len; j += {width}) {{ {vbody(lane)} }}")
    lines.append("  for (; j < cl_ + len; j++) {")
    lines.append("    long lin = i + (j - cl_);")
    lines.append("    " + body(ix))
    lines.append("  }")
    lines.append("  i += len;")
    lines.append("  if (i >= e) break;")
    if D > 1:
        lines.append("  cl_ = 0;")
        lines.append(_carry(operands, D - 2, D))
    lines.append("}")
    lines.append(finish)
    src = (T.preamble(dtypes) + helpers + f"\n__kernel void {name}({sig}) {{\n  "
           + "\n  ".join(x for x in lines if x) + "\n}\n")
    return KernelSpec(name, src, types, what)


def _carry(operands, d, D):
    """Advance coordinate d by one (and carry into d-1 ...) after a row ends."""
    step = " ".join(f"q_{op.var} += st_{op.var}_{d};" for op in operands)
    code = f"c{d}++; {step}"
    if d > 0:
        back = " ".join(f"q_{op.var} -= sh{d} * st_{op.var}_{d};" for op in operands)
        code += f" if (c{d} == sh{d}) {{ c{d} = 0; {back} {_carry(operands, d - 1, D)} }}"
    return code


def kinds_of(strides):
    return tuple("c" if st[-1] == 1 else "z" if st[-1] == 0 else "g" for st in strides)


# coalesced dims 2.._PAD run one kernel padded to _PAD dims (leading dims of size 1)
_PAD = 4


def layout_class(cshape, cstrides):
    """(ndim, kinds, shape, strides): the coalesced layout put into one of few classes,
    so an op compiles a handful of kernels rather than one per exact layout.

    Fast classes: the first operand (the output) contiguous, the others contiguous or
    broadcast ('c'/'z' innermost), over 1 dim or _PAD dims; anything else is the
    general class, every operand 'g' (the stride is an argument, 0 and 1 included)."""
    if cshape == (1,):                       # one element: any stride reads it
        cstrides = [(1,)] * len(cstrides)
    kinds = kinds_of(cstrides)
    if kinds[0] != "c" or "g" in kinds:
        kinds = ("g",) * len(kinds)
    D = len(cshape)
    if 1 < D < _PAD:
        pad = _PAD - D
        cshape = (1,) * pad + tuple(cshape)
        cstrides = [(0,) * pad + tuple(st) for st in cstrides]
        D = _PAD
    return D, kinds, cshape, cstrides


def loop_launch(dev, fkey, make, shape, ops, params=(), *, min_chunk=16384, cost=1,
                chunked=False):
    """Run a loop kernel over `shape` for operands [(handle, strides)].

    make(ndim, kinds) -> KernelSpec is called once per layout class; the launch
    geometry is cached per exact layout, so a repeated call only packs arguments."""
    strides = tuple(st for _, st in ops)
    pkey = (fkey, shape, strides)
    plan = dev.plans.get(pkey)
    if plan is None:
        D, kinds, cshape, cstrides = layout_class(*coalesce(shape, strides))
        kernel, what = dev.kernel((fkey, D, kinds), partial(make, D, kinds))
        n = prod(shape)
        items, chunk, gs, ls = dev.split(n, min_chunk, cost, chunked)
        per_op = [tuple(st[:-1]) + ((st[-1],) if k == "g" else ()) for st, k in zip(cstrides, kinds)]
        plan = (kernel, gs, ls, per_op, (n, chunk, *cshape), what, items)
        if len(dev.plans) > _PLAN_LIMIT:
            dev.plans.clear()
        dev.plans[pkey] = plan
    kernel, gs, ls, per_op, tail, what, items = plan
    args = []
    for (h, _), st in zip(ops, per_op):
        args.append(h.buf)
        args.append(h.offset)
        args.extend(st)
    args.extend(tail)
    args.extend(params)
    dev.launch(kernel, gs, ls, args, what)
    return items


def coords(index, shape_vars, prefix="k"):
    """C statements splitting `index` into coordinates {prefix}0.. over dims whose
    sizes are the C expressions shape_vars (C order)."""
    D = len(shape_vars)
    if D == 0:
        return ""
    out = [f"long {prefix}r_ = {index};"]
    for d in range(D - 1, 0, -1):
        out.append(f"long {prefix}{d} = {prefix}r_ % {shape_vars[d]}; {prefix}r_ /= {shape_vars[d]};")
    out.append(f"long {prefix}0 = {prefix}r_;")
    return " ".join(out)


def dot(prefix, stride_vars):
    """C expression sum of coordinate * stride."""
    if not stride_vars:
        return "0"
    return " + ".join(f"{prefix}{d} * {s}" for d, s in enumerate(stride_vars))
