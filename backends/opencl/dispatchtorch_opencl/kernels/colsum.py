"""sum over the outer dim of a row-major block (a bias gradient: `g.sum(0)` of a
(batch, features) gradient) on CPUs: each work-item adds whole rows of its 4-vector
column strip, so every load is a contiguous vector and the rows stream in order.

The general reduction (reduction.py) gives each work-item whole outputs and walks
them down a column, which reads one element per cache line. Rows are added in
blocks of reduction.BLOCK (as there: float error grows with BLOCK + R / BLOCK).
"""
from __future__ import annotations

import numpy as np

from .. import cltypes as T
from ..codegen import KernelSpec, kernel_name, signature

I64 = np.int64
WIDTH = {"float32": 8, "float64": 4}      # elements per 256-bit vector
VECTORS = 4                               # vectors per work-item's strip


def colsum_spec(dt, block):
    c, w = T.COMPUTE[dt], WIDTH[dt]
    vec, cols = f"{c}{w}", w * VECTORS
    sig, types = signature([(T.pointer(dt, True), "p_x", None), ("long", "o_x", I64),
                            ("long", "O", I64), ("long", "R", I64), ("long", "rst", I64),
                            (T.pointer(dt), "p_out", None)])
    vs = range(VECTORS)
    body = [f"long c0 = get_global_id(0) * {cols};",
            "__global const " + c + "* xp = p_x + o_x + c0;",
            f"if (c0 + {cols} <= O) {{",
            *(f"  {vec} a{v} = ({vec})0;" for v in vs),
            f"  for (long rb = 0; rb < R; rb += {block}) {{",
            f"    long re = rb + {block}; if (re > R) re = R;",
            *(f"    {vec} b{v} = ({vec})0;" for v in vs),
            "    for (long r = rb; r < re; r++) {",
            f"      __global const {c}* p = xp + r * rst;",
            *(f"      b{v} += DT_LOAD(p + {v * w});" for v in vs),
            "    }",
            *(f"    a{v} += b{v};" for v in vs),
            "  }",
            *(f"  DT_STORE(a{v}, p_out + c0 + {v * w});" for v in vs),
            "} else {",
            "  for (long j = c0; j < O; j++) {",
            f"    {c} acc = 0;",
            f"    for (long rb = 0; rb < R; rb += {block}) {{",
            f"      long re = rb + {block}; if (re > R) re = R;",
            f"      {c} blk = 0;",
            "      for (long r = rb; r < re; r++) blk += xp[r * rst + j - c0];",
            "      acc += blk;",
            "    }",
            "    p_out[j] = acc;",
            "  }",
            "}"]
    name = kernel_name("colsum", dt)
    src = (T.preamble((dt,)) + T.vector_io(c, w) + f"\n__kernel void {name}({sig}) {{\n  "
           + "\n  ".join(body) + "\n}\n")
    return KernelSpec(name, src, types, f"sum ({dt} -> {dt})")


def try_colsum(dev, op, out, x, kshape, kstrides, rshape, rstrides, block):
    """Run the column sum and return True when it applies: a CPU device, a float32/
    float64 sum into its own dtype, one contiguous kept dim of at least two strips,
    one reduced dim."""
    dt = x.dtype
    if not (dev.loop and op == "sum" and dt in WIDTH and out.dtype == dt and len(kshape) == 1
            and kstrides == (1,) and len(rshape) == 1 and kshape[0] >= 2 * WIDTH[dt] * VECTORS):
        return False
    O, R = kshape[0], rshape[0]
    kernel, what = dev.kernel(("colsum", dt, block), lambda: colsum_spec(dt, block))
    items = -(-O // (WIDTH[dt] * VECTORS))
    dev.launch(kernel, (items,), (1,), [x.buf, x.offset, O, R, rstrides[0], out.buf], what)
    return True
