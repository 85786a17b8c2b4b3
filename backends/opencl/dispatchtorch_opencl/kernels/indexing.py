"""gather, scatter_ and nonzero, on the shared loop template.

gather walks out/index and reads x at (index along dim, the same coordinates
elsewhere): x enters the loop with stride 0 along dim. scatter_ gives each fiber
(all coordinates but dim) to one work-item, which applies its updates in order, so
duplicate indices resolve exactly as on the CPU (the last write wins for 'none',
sums accumulate in index order) and the result is deterministic. nonzero counts
per chunk, turns the counts into offsets, then writes each chunk's coordinates.
"""
from __future__ import annotations


import numpy as np

from .. import cltypes as T
from ..codegen import KernelSpec, Operand, coords, kernel_name, loop_kernel, loop_launch
from ..handle import CLArray, contiguous_strides
from .elementwise import binary_expr, copy_kernel

I64 = np.int64
_SCATTER_OP = {"sum": "add", "prod": "mul", "amax": "maximum", "amin": "minimum"}


def _dim_zeroed(strides, dim):
    return tuple(0 if d == dim else s for d, s in enumerate(strides))


def gather(out, x, index, *, dim):
    if out.size == 0:
        return
    dt = x.dtype

    def make(D, kinds):
        ops = [Operand("out", dt, const=False), Operand("i", "int64"), Operand("x", dt)]

        def body(ix):
            return f"p_out[{ix['out']}] = p_x[{ix['x']} + p_i[{ix['i']}] * xsd];"
        return loop_kernel(kernel_name("gather", dt, D, *kinds), ops, kinds, D, body,
                           params=[("long", "xsd", I64)], dtypes=(dt,), what=f"gather ({dt})")
    loop_launch(out.dev, ("gather", dt), make, out.shape,
                [(out, out.strides), (index, index.strides), (x, _dim_zeroed(x.strides, dim))],
                [x.strides[dim]])


def scatter_(out, index, src, *, dim, reduce):
    if index.size == 0:
        return
    if reduce != "none" and out.dtype in T.LOWP:
        # accumulate in float32 and round once, as the CPU does
        dev = out.dev
        acc = CLArray(dev.alloc(out.size * 4), dev, "float32", out.shape,
                      contiguous_strides(out.shape), 0)
        copy_kernel(acc, out)
        _scatter(acc, index, src, dim, reduce)
        copy_kernel(out, acc)
        return
    _scatter(out, index, src, dim, reduce)


def _scatter(out, index, src, dim, reduce):
    od, sd = out.dtype, src.dtype
    if not index.shape:
        index, src = _as_1d(index), _as_1d(src)
        out = _as_1d(out)
        dim = 0
    n = index.shape[dim]
    fiber = tuple(1 if d == dim else s for d, s in enumerate(index.shape))
    if reduce == "none":
        update = "p_out[ot] = p_src[sj];"
    else:
        expr, helpers = binary_expr(_SCATTER_OP[reduce], od)
        update = ("{ " + f"{T.COMPUTE[od]} a = {T.load(od, 'p_out', 'ot')}; "
                  f"{T.COMPUTE[od]} b = ({T.COMPUTE[od]})({T.load(sd, 'p_src', 'sj')}); "
                  + T.store(od, "p_out", "ot", expr) + " }")

    def make(D, kinds):
        ops = [Operand("out", od, const=False), Operand("i", "int64"), Operand("src", sd)]

        def body(ix):
            return (f"for (long t = 0; t < nd; t++) {{ long ot = {ix['out']} + p_i[{ix['i']} + t * isd] * osd; "
                    f"long sj = {ix['src']} + t * ssd; {update} }}")
        return loop_kernel(kernel_name("scatter", reduce, od, sd, D, *kinds), ops, kinds, D, body,
                           params=[("long", n_, I64) for n_ in ("nd", "isd", "ssd", "osd")],
                           helpers="", dtypes=(od, sd), what=f"scatter_ reduce={reduce} ({sd} -> {od})")
    loop_launch(out.dev, ("scatter", reduce, od, sd), make, fiber,
                [(out, _dim_zeroed(out.strides, dim)), (index, _dim_zeroed(index.strides, dim)),
                 (src, _dim_zeroed(src.strides, dim))],
                [n, index.strides[dim], src.strides[dim], out.strides[dim]], cost=max(1, n))


def _as_1d(h):
    return CLArray(h.buf, h.dev, h.dtype, (1,), (0,), h.offset, h.storage, h.capacity)


# -- nonzero ----------------------------------------------------------------------------

def _count_spec(dt):
    def make(D, kinds):
        return loop_kernel(kernel_name("nzcount", dt, D, *kinds), [Operand("x", dt)], kinds, D,
                           lambda ix: f"cnt += ({T.load(dt, 'p_x', ix['x'])} != 0);",
                           params=[("__global long*", "counts", None)], setup="long cnt = 0;",
                           finish="counts[wi] = cnt;", dtypes=(dt,), what=f"nonzero count ({dt})")
    return make


def _write_spec(dt, nd):
    def make(D, kinds):
        split = coords("lin", [f"osh{d}" for d in range(nd)], "k")
        writes = " ".join(f"p_out[o_out + pos * {nd} + {d}] = k{d};" for d in range(nd))
        params = [("__global const long*", "counts", None), ("__global long*", "p_out", None),
                  ("long", "o_out", I64)]
        params += [("long", f"osh{d}", I64) for d in range(nd)]
        return loop_kernel(kernel_name("nzwrite", dt, nd, D, *kinds), [Operand("x", dt)], kinds, D,
                           lambda ix: f"if ({T.load(dt, 'p_x', ix['x'])} != 0) {{ {split} {writes} pos++; }}",
                           params=params, setup="long pos = counts[wi];", dtypes=(dt,),
                           what=f"nonzero ({dt})")
    return make


def _offsets_spec():
    src = ("__kernel void nz_offsets(__global long* c, long items) {\n"
           "  if (get_global_id(0) != 0) return;\n"
           "  long s = 0;\n"
           "  for (long i = 0; i < items; i++) { long t = c[i]; c[i] = s; s += t; }\n}\n")
    return KernelSpec("nz_offsets", src, (None, I64), "nonzero offsets")


def nonzero(out, x):
    if out.size == 0:
        return
    dev = out.dev
    dt, nd = x.dtype, len(x.shape)
    items = dev.split(x.size, chunked=True)[0]
    counts = dev.alloc(items * 8)
    ops = [(x, x.strides)]
    loop_launch(dev, ("nzcount", dt), _count_spec(dt), x.shape, ops, [counts], chunked=True)
    kernel, what = dev.kernel(("nz_offsets",), _offsets_spec)
    dev.launch(kernel, (1,), (1,), [counts, items], what)
    loop_launch(dev, ("nzwrite", dt, nd), _write_spec(dt, nd), x.shape, ops,
                [counts, out.buf, out.offset, *x.shape], chunked=True)


KERNELS = {"gather": gather, "scatter_": scatter_, "nonzero": nonzero}
