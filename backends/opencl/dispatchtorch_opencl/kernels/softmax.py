"""softmax / log_softmax rows as one launch each (the decomposition is five: amax,
sub, exp, sum, then div or log and sub). A work-item takes whole rows along `dim`:
the row's max, the sum of exp(x - max), then each output, computed as the
decomposition does (x - max, then / sum or - log(sum)), in the compute type
(float16/bfloat16 in float32, rounded once). The frontend keeps the rows' derivative
rules, so these are forward only.
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
        spec = (lambda: softmax_spec(log, out.dtype, dk))
        k, what = dev.kernel(("logsoftmax" if log else "softmax", out.dtype, dk), spec)
        items, chunk, gsize, lsize = dev.split(rows, per_item_cost=max(1, 4 * R), chunked=True)
        dev.launch(k, gsize, lsize, [x.buf, x.offset, *kshape, *kx, *ko, R, rx, ro, rows, chunk,
                                     out.buf], what)
    kernel.__name__ = "log_softmax" if log else "softmax"
    return kernel


KERNELS = {"softmax": _make(False), "log_softmax": _make(True)}
