"""softmax / log_softmax rows as one launch each (the decomposition is five: amax,
sub, exp, sum, then div or log and sub). A work-item takes whole rows along `dim`:
the row's max, the sum of exp(x - max), then each output, computed as the
decomposition does (x - max, then / sum or - log(sum)), in the compute type
(float16/bfloat16 in float32, rounded once). The frontend keeps the rows' derivative
rules, so these are forward only.

Rows contiguous in input and output (the last dim: attention's scores) of float32 /
float64 go through a vector form: 8 (4) lanes a load, so the `exp`s are PoCL's vector
calls, and softmax stores each exp(x - max) on its way to the sum and divides it in
place (one exp per element instead of two). One PoCL thread, device time, the tiny
transformer's attention softmax (32x4x64 rows of 64 float32): ~17 ms a launch in
scalar form, see docs/performance.md for the vector form's figure.
"""
from __future__ import annotations

from math import prod

import numpy as np

from .. import cltypes as T
from ..codegen import KernelSpec, coords, dot, kernel_name, signature
from ..handle import coalesce

I64 = np.int64


def softmax_spec(log, dt, dk):
    c = T.COMPUTE[dt]
    sig, types = signature(
        [(T.pointer(dt, True), "p_x", None), ("long", "o_x", I64)]
        + [("long", f"ks{d}", I64) for d in range(dk)]
        + [("long", f"kx{d}", I64) for d in range(dk)]
        + [("long", f"ko{d}", I64) for d in range(dk)]
        + [("long", n, I64) for n in ("R", "rx", "ro", "rows", "chunk")]
        + [(T.pointer(dt), "p_out", None)])
    x = T.load(dt, "p_x", "xb + r * rx")
    result = "(s - l)" if log else "(e / l)"
    body = ["long first = get_global_id(0) * chunk, last = first + chunk;",
            "if (last > rows) last = rows;",
            "for (long row = first; row < last; row++) {",
            "  " + coords("row", [f"ks{d}" for d in range(dk)], "k"),
            f"  long xb = o_x + {dot('k', [f'kx{d}' for d in range(dk)])};",
            f"  long ob = {dot('k', [f'ko{d}' for d in range(dk)])};",
            f"  {c} m = {T.LOWEST['float64' if c == 'double' else 'float32']};",
            f"  for (long r = 0; r < R; r++) {{ {c} v = {x}; m = (v > m || v != v) ? v : m; }}",
            f"  {c} l = 0;",
            f"  for (long r = 0; r < R; r++) l += exp({x} - m);",
            "  l = log(l);" if log else "",
            f"  for (long r = 0; r < R; r++) {{ {c} s = {x} - m;" + ("" if log else f" {c} e = exp(s);"),
            "    " + T.store(dt, "p_out", "ob + r * ro", result),
            "  }",
            "}"]
    name = kernel_name("logsoftmax" if log else "softmax", dt, dk)
    src = (T.preamble((dt,)) + f"\n__kernel void {name}({sig}) {{\n  "
           + "\n  ".join(x for x in body if x) + "\n}\n")
    return KernelSpec(name, src, types, f"{'log_' if log else ''}softmax ({dt})")


VEC = {"float32": 8, "float64": 4}     # lanes of the vector form (256-bit vectors)


def softmax_vec_spec(log, dt, dk):
    """The vector form: rows contiguous in x and out (rx == ro == 1)."""
    c, w = T.COMPUTE[dt], VEC[dt]
    vec = f"{c}{w}"
    lanes = [f"s{i:x}" for i in range(w)]
    sig, types = signature(
        [(T.pointer(dt, True), "p_x", None), ("long", "o_x", I64)]
        + [("long", f"ks{d}", I64) for d in range(dk)]
        + [("long", f"kx{d}", I64) for d in range(dk)]
        + [("long", f"ko{d}", I64) for d in range(dk)]
        + [("long", n, I64) for n in ("R", "rows", "chunk")]
        + [(T.pointer(dt), "p_out", None)])
    lowest = T.LOWEST["float64" if c == "double" else "float32"]
    pick = "m = (v > m || v != v) ? v : m;"
    body = ["long first = get_global_id(0) * chunk, last = first + chunk;",
            "if (last > rows) last = rows;",
            f"long rv = R - R % {w};",
            "for (long row = first; row < last; row++) {",
            "  " + coords("row", [f"ks{d}" for d in range(dk)], "k"),
            f"  __global const {c}* xp = p_x + o_x + {dot('k', [f'kx{d}' for d in range(dk)])};",
            f"  __global {c}* op = p_out + {dot('k', [f'ko{d}' for d in range(dk)])};",
            f"  {vec} m8 = ({vec})({lowest});",
            f"  for (long r = 0; r < rv; r += {w}) {{ {vec} v = DT_LOAD(xp + r); "
            "m8 = select(m8, v, (v > m8) | isnan(v)); }",
            f"  {c} m = {lowest};",
            *(f"  {{ {c} v = m8.{x}; {pick} }}" for x in lanes),
            f"  for (long r = rv; r < R; r++) {{ {c} v = xp[r]; {pick} }}",
            f"  {vec} mv = ({vec})(m), l8 = ({vec})(0);",
            (f"  for (long r = 0; r < rv; r += {w}) l8 += exp(DT_LOAD(xp + r) - mv);" if log else
             f"  for (long r = 0; r < rv; r += {w}) {{ {vec} e = exp(DT_LOAD(xp + r) - mv); "
             "l8 += e; DT_STORE(e, op + r); }"),
            f"  {c} l = " + " + ".join(f"l8.{x}" for x in lanes) + ";",
            ("  for (long r = rv; r < R; r++) l += exp(xp[r] - m);" if log else
             f"  for (long r = rv; r < R; r++) {{ {c} e = exp(xp[r] - m); l += e; op[r] = e; }}"),
            "  l = log(l);" if log else "",
            f"  {vec} lv = ({vec})(l);",
            (f"  for (long r = 0; r < rv; r += {w}) DT_STORE((DT_LOAD(xp + r) - mv) - lv, op + r);"
             if log else f"  for (long r = 0; r < rv; r += {w}) DT_STORE(DT_LOAD(op + r) / lv, op + r);"),
            ("  for (long r = rv; r < R; r++) op[r] = (xp[r] - m) - l;" if log else
             "  for (long r = rv; r < R; r++) op[r] = op[r] / l;"),
            "}"]
    name = kernel_name("logsoftmax" if log else "softmax", dt, dk, "v")
    src = (T.preamble((dt,)) + T.vector_io(c, w) + f"\n__kernel void {name}({sig}) {{\n  "
           + "\n  ".join(x for x in body if x) + "\n}\n")
    return KernelSpec(name, src, types, f"{'log_' if log else ''}softmax ({dt})")


def _make(log):
    def kernel(out, x, *, dim):
        if out.size == 0:
            return
        dev = out.dev
        nd = len(x.shape)
        dim = dim % nd if nd else 0
        kept = [d for d in range(nd) if d != dim]
        ostrides = out.strides
        kshape, (kx, ko) = coalesce(tuple(x.shape[d] for d in kept),
                                    [tuple(x.strides[d] for d in kept), tuple(ostrides[d] for d in kept)])
        R = x.shape[dim] if nd else 1
        rx, ro = (x.strides[dim], ostrides[dim]) if nd else (0, 0)
        rows = prod(kshape)
        dk = len(kshape)
        if out.dtype in VEC and rx == 1 and ro == 1 and R >= VEC[out.dtype] and \
                not _overlap(out, x):
            k, what = dev.kernel(("softmax_v", log, out.dtype, dk),
                                 lambda: softmax_vec_spec(log, out.dtype, dk))
            items, chunk, gsize, lsize = dev.split(rows, per_item_cost=max(1, 4 * R), chunked=True)
            dev.launch(k, gsize, lsize, [x.buf, x.offset, *kshape, *kx, *ko, R, rows, chunk,
                                         out.buf], what)
            return
        spec = (lambda: softmax_spec(log, out.dtype, dk))
        k, what = dev.kernel(("logsoftmax" if log else "softmax", out.dtype, dk), spec)
        items, chunk, gsize, lsize = dev.split(rows, per_item_cost=max(1, 4 * R), chunked=True)
        dev.launch(k, gsize, lsize, [x.buf, x.offset, *kshape, *kx, *ko, R, rx, ro, rows, chunk,
                                     out.buf], what)
    kernel.__name__ = "log_softmax" if log else "softmax"
    return kernel


def _overlap(out, x):
    """Whether out and x share a buffer (the vector form writes exps into out while
    later rows of x are still to be read)."""
    return out.buf is not None and out.buf == x.buf


KERNELS = {"softmax": _make(False), "log_softmax": _make(True)}
