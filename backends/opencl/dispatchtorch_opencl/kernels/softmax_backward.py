"""softmax_backward / log_softmax_backward rows as one launch each (their
decompositions are four and seven frontend ops; cross_entropy's backward on (128, 10)
ran log_softmax_backward as five launches). A work-item takes whole rows along `dim`:
the row's sum s of g y (softmax) or of g (log_softmax), then (g - s) y or g - exp(y) s,
in the compute type (float16/bfloat16 in float32, rounded once, as the CPU
reference's kernels), each operation rounded (no a * b + c contracted into an fma),
as the decomposition's ops round.

The sum starts from the row's first term on the last dim (and for a 0-d tensor) and
from +0.0 on the others, as the rows' `_row_sum` (ops/nn_ops/softmax.py) adds it:
PyTorch's last-dim kernel gives -0.0 for a row of -0.0 terms.
"""
from __future__ import annotations

from math import prod

import numpy as np

from .. import cltypes as T
from ..codegen import KernelSpec, coords, dot, kernel_name, signature
from ..handle import coalesce

I64 = np.int64
NAMES = {False: "softmax_backward", True: "log_softmax_backward"}


def backward_spec(log, dt, dk):
    c = T.COMPUTE[dt]
    axes = ("g", "y", "o")
    sig, types = signature(
        [(T.pointer(dt, True), "p_g", None), ("long", "o_g", I64),
         (T.pointer(dt, True), "p_y", None), ("long", "o_y", I64), ("long", "o_o", I64)]
        + [("long", f"ks{d}", I64) for d in range(dk)]
        + [("long", f"k{a}{d}", I64) for a in axes for d in range(dk)]
        + [("long", n, I64) for n in ("R", "rg", "ry", "ro", "rows", "chunk", "from_first")]
        + [(T.pointer(dt), "p_out", None)])
    g, y = T.load(dt, "p_g", "gb + r * rg"), T.load(dt, "p_y", "yb + r * ry")
    term = g if log else f"{g} * {y}"
    result = f"{g} - exp({y}) * s" if log else f"({g} - s) * {y}"
    body = ["long first = get_global_id(0) * chunk, last = first + chunk;",
            "if (last > rows) last = rows;",
            "for (long row = first; row < last; row++) {",
            "  " + coords("row", [f"ks{d}" for d in range(dk)], "k"),
            *(f"  long {a}b = o_{a} + "
              f"{dot('k', [f'k{a}{d}' for d in range(dk)])};" for a in axes),
            f"  {c} s = 0;",
            "  long r = 0;",
            f"  if (from_first) {{ s = {term}; r = 1; }}",
            f"  for (; r < R; r++) s += {term};",
            f"  for (r = 0; r < R; r++) {T.store(dt, 'p_out', 'ob + r * ro', result)}",
            "}"]
    name = kernel_name("lsmbw" if log else "smbw", dt, dk)
    src = (T.preamble((dt,)) + "#pragma OPENCL FP_CONTRACT OFF\n"
           + f"\n__kernel void {name}({sig}) {{\n  " + "\n  ".join(body) + "\n}\n")
    return KernelSpec(name, src, types, f"{NAMES[log]} ({dt})")


def _make(log):
    def kernel(out, g, y, *, dim):
        if out.size == 0:
            return
        dev, dt = out.dev, out.dtype
        nd = len(y.shape)
        dim = dim % nd if nd else 0
        kept = [d for d in range(nd) if d != dim]
        kshape, (kg, ky, ko) = coalesce(
            tuple(y.shape[d] for d in kept),
            [tuple(a.strides[d] for d in kept) for a in (g, y, out)])
        R = y.shape[dim] if nd else 1
        rg, ry, ro = (g.strides[dim], y.strides[dim], out.strides[dim]) if nd else (0, 0, 0)
        rows, dk = prod(kshape), len(kshape)
        k, what = dev.kernel(("smbw", log, dt, dk), lambda: backward_spec(log, dt, dk))
        _, chunk, gsize, lsize = dev.split(rows, per_item_cost=max(1, 3 * R), chunked=True)
        dev.launch(k, gsize, lsize, [g.buf, g.offset, y.buf, y.offset, out.offset,
                                     *kshape, *kg, *ky, *ko,
                                     R, rg, ry, ro, rows, chunk, int(dim == nd - 1 or nd == 0),
                                     out.buf], what)
    kernel.__name__ = NAMES[log]
    return kernel


KERNELS = {name: _make(log) for log, name in NAMES.items()}
