"""Reductions (sum, prod, amax, amin, argmax, argmin) over any dims of a strided input.

The input is split into kept dims (one output each) and reduced dims, each group
coalesced. Work-group g reduces part p of output o's elements: each work-item walks
its share, then the group combines with a local-memory tree (CPUs use groups of one,
walking a contiguous share). When there are few outputs the reduced range is split
into parts written as partials, and a second launch of the same template reduces
the partials. argmax/argmin carry (value, index) pairs: NaN is the extreme, ties
and NaNs go to the smaller index.
"""
from __future__ import annotations

from math import prod

import numpy as np

from .. import cltypes as T
from ..codegen import KernelSpec, coords, dot, kernel_name, signature
from ..handle import coalesce
from .colsum import try_colsum

I64 = np.int64
ARG = ("argmax", "argmin")
BLOCK = 512
LANES = 8


def acc_dtype(op, x_dt, out_dt):
    """The dtype partial results are kept in."""
    if op in ("sum", "prod"):
        if out_dt in T.FLOATS:
            return "float64" if out_dt == "float64" else "float32"
        return out_dt
    return "float32" if x_dt in T.LOWP else x_dt


def _acc_ctype(op, acc_dt):
    if op in ("sum", "prod") and acc_dt not in T.FLOATS:
        return T.WRAP[acc_dt]
    return T.COMPUTE[acc_dt]


def _init(op, acc_dt, ctype):
    return {"sum": f"({ctype})0", "prod": f"({ctype})1", "amax": T.LOWEST[acc_dt],
            "amin": T.HIGHEST[acc_dt]}.get(op, f"({ctype})0")


def _combine(op, fl):
    """C statement folding value v (index vi) into acc (index ai)."""
    if op == "sum":
        return "acc = acc + v;"
    if op == "prod":
        return "acc = acc * v;"
    if op in ("amax", "amin"):
        cmp = ">" if op == "amax" else "<"
        nan = " || v != v" if fl else ""
        return f"acc = (v {cmp} acc{nan}) ? v : acc;"
    cmp = ">" if op == "argmax" else "<"
    if fl:
        better = (f"((v != v) ? (acc == acc || vi < ai) : "
                  f"(acc == acc && (v {cmp} acc || (v == acc && vi < ai))))")
    else:
        better = f"(v {cmp} acc || (v == acc && vi < ai))"
    return f"if (vi >= 0 && (ai < 0 || {better})) {{ acc = v; ai = vi; }}"


def reduce_spec(op, x_dt, out_dt, dk, dr, partial_in, partial_out, group):
    """The kernel for one pass. partial_in: x holds partials of the acc dtype (and, for
    arg ops, an index buffer); partial_out: write partials instead of the output."""
    acc_dt = acc_dtype(op, x_dt, out_dt)
    ctype = _acc_ctype(op, acc_dt)
    fl = acc_dt in T.FLOATS
    arg = op in ARG
    in_dt = acc_dt if partial_in else x_dt
    params = [(T.pointer(in_dt, True), "p_x", None), ("long", "o_x", I64)]
    if partial_in and arg:
        params.append(("__global const long*", "p_xi", None))
    params += [("long", f"ks{d}", I64) for d in range(dk)]
    params += [("long", f"kst{d}", I64) for d in range(dk)]
    params += [("long", f"rs{d}", I64) for d in range(dr)]
    params += [("long", f"rst{d}", I64) for d in range(dr)]
    params += [("long", "R", I64), ("long", "rchunk", I64), ("long", "P", I64),
               ("long", "total", I64), ("long", "ochunk", I64)]
    out_store_dt = acc_dt if partial_out else out_dt
    params.append((T.pointer(out_store_dt), "p_out", None))
    if partial_out and arg:
        params.append(("__global long*", "p_outi", None))
    sig, types = signature(params)

    load = T.load(in_dt, "p_x", "xo")
    conv = f"({ctype})({load})" if in_dt != acc_dt or op in ("sum", "prod") else load
    vi = "p_xi[xo]" if partial_in and arg else "r_"
    fold = _combine(op, fl)
    L = group
    body = [
        f"__local {ctype} lacc[{L}]; __local long lai[{L}];" if L > 1 else "",
        f"long lid = {'get_local_id(0)' if L > 1 else '0'};",
        "long first = get_group_id(0) * ochunk, last = first + ochunk; if (last > total) last = total;",
        "for (long g = first; g < last; g++) {",
        "long o = g / P, part = g - o * P;",
        coords("o", [f"ks{d}" for d in range(dk)], "k"),
        f"long base = o_x + {dot('k', [f'kst{d}' for d in range(dk)])};",
        "long r0 = part * rchunk, r1 = r0 + rchunk; if (r1 > R) r1 = R;",
        f"{ctype} acc = {_init(op, acc_dt, ctype)}; long ai = -1;",
    ]
    element = [coords("r_", [f"rs{d}" for d in range(dr)], "c"),
               f"long xo = base + {dot('c', [f'rst{d}' for d in range(dr)])};",
               f"{ctype} v = {conv}; long vi = {vi};"]
    if L == 1 and dr == 1 and op in ("sum", "prod"):
        # CPUs: eight running lanes per block, so the loop vectorises (a single float
        # accumulator chains every add through its latency), then the block is added
        sym = "+" if op == "sum" else "*"
        ident = _init(op, acc_dt, ctype)
        lanes = ", ".join(f"({ctype})({T.load(in_dt, 'p_x', f'base + (r_ + {k}) * rst0')})"
                          for k in range(LANES))
        fold_lanes = f" {sym} ".join(f"vb.s{k}" for k in range(LANES))
        body += [f"for (long rb = r0; rb < r1; rb += {BLOCK}) {{",
                 f"  long re = rb + {BLOCK}; if (re > r1) re = r1;",
                 f"  {ctype}{LANES} vb = ({ctype}{LANES})({ident});",
                 "  long r_ = rb;",
                 f"  for (; r_ + {LANES} <= re; r_ += {LANES}) vb = vb {sym} ({ctype}{LANES})({lanes});",
                 f"  {ctype} blk = {fold_lanes};",
                 f"  for (; r_ < re; r_++) blk = blk {sym} ({ctype})({T.load(in_dt, 'p_x', 'base + r_ * rst0')});",
                 f"  acc = acc {sym} blk;",
                 "}"]
    elif fl and op in ("sum", "prod"):
        # blocks of BLOCK elements summed apart, then added: float error grows with
        # BLOCK + n / BLOCK instead of n
        sym = "+" if op == "sum" else "*"
        body += [f"for (long rb = r0 + lid; rb < r1; rb += {BLOCK * L}) {{",
                 f"  long re = rb + {BLOCK * L}; if (re > r1) re = r1;",
                 f"  {ctype} blk = {_init(op, acc_dt, ctype)};",
                 f"  for (long r_ = rb; r_ < re; r_ += {L}) {{",
                 *("    " + x for x in element),
                 f"    blk = blk {sym} v;",
                 "  }",
                 f"  acc = acc {sym} blk;",
                 "}"]
    else:
        body += [f"for (long r_ = r0 + lid; r_ < r1; r_ += {L}) {{",
                 *("  " + x for x in element),
                 "  " + fold,
                 "}"]
    if L > 1:
        body += [
            "lacc[lid] = acc; lai[lid] = ai;",
            "barrier(CLK_LOCAL_MEM_FENCE);",
            f"for (long s_ = {L // 2}; s_ > 0; s_ >>= 1) {{",
            "  if (lid < s_) {",
            f"    acc = lacc[lid]; ai = lai[lid]; {ctype} v = lacc[lid + s_]; long vi = lai[lid + s_];",
            "    " + fold,
            "    lacc[lid] = acc; lai[lid] = ai;",
            "  }",
            "  barrier(CLK_LOCAL_MEM_FENCE);",
            "}",
            "acc = lacc[0]; ai = lai[0];",
        ]
    if partial_out:
        write = T.store(acc_dt, "p_out", "g", f"({T.COMPUTE[acc_dt]})acc")
        if arg:
            write += " p_outi[g] = ai;"
    elif arg:
        write = "p_out[o] = ai;"
    else:
        write = T.store_cast(out_dt, "p_out", "o", f"({T.COMPUTE[acc_dt]})acc", acc_dt)
    if L > 1:
        body += [f"if (lid == 0) {{ {write} }}", "barrier(CLK_LOCAL_MEM_FENCE);"]
    else:
        body.append(write)
    body.append("}")
    name = kernel_name("red", op, x_dt, out_dt, dk, dr, int(partial_in), int(partial_out), L)
    src = (T.preamble((x_dt, out_dt, acc_dt)) + f"\n__kernel void {name}({sig}) {{\n  "
           + "\n  ".join(x for x in body if x) + "\n}\n")
    return KernelSpec(name, src, types, f"{op} ({x_dt} -> {out_dt})")


def _parts(dev, O, R):
    """How many parts each output's reduced range is split into."""
    if dev.loop:
        target, per = dev.workers, 8192
    else:
        target, per = dev.compute_units * 8, dev.group * 16
    if O >= target or R <= per:
        return 1
    return max(1, min(-(-target // O), R // per))


def _run(dev, op, x, x_dt, out_dt, kshape, kstrides, rshape, rstrides, out, outi, P,
         partial_in, xi=None):
    R = prod(rshape)
    O = prod(kshape)
    rchunk = max(1, -(-R // P))
    L = 1 if dev.loop else dev.group
    key = ("red", op, x_dt, out_dt, len(kshape), len(rshape), partial_in, P > 1, L)
    kernel, what = dev.kernel(key, lambda: reduce_spec(op, x_dt, out_dt, len(kshape), len(rshape),
                                                       partial_in, P > 1, L))
    args = [x.buf, x.offset]
    if xi is not None:
        args.append(xi)
    total = O * P
    if dev.loop:
        _, ochunk, gsize, lsize = dev.split(total, per_item_cost=max(1, rchunk))
    else:
        ochunk, gsize, lsize = 1, (total * L,), (L,)
    args += [*kshape, *kstrides, *rshape, *rstrides, R, rchunk, P, total, ochunk, out]
    if outi is not None:
        args.append(outi)
    dev.launch(kernel, gsize, lsize, args, what)


def _reduce(op, out, x, dims):
    """Reduce x over dims into out (contiguous, the kept dims' shape)."""
    dev = out.dev
    kept = [d for d in range(len(x.shape)) if d not in dims]
    kshape, (kstrides,) = coalesce(tuple(x.shape[d] for d in kept), [tuple(x.strides[d] for d in kept)])
    rshape, (rstrides,) = coalesce(tuple(x.shape[d] for d in dims), [tuple(x.strides[d] for d in dims)])
    O, R = prod(kshape), prod(rshape)
    if O == 0:
        return
    if try_colsum(dev, op, out, x, kshape, kstrides, rshape, rstrides, BLOCK):
        return
    arg = op in ARG
    P = _parts(dev, O, R)
    if P == 1:
        _run(dev, op, x, x.dtype, out.dtype, kshape, kstrides, rshape, rstrides,
             out.buf, None, 1, False)
        return
    acc_dt = acc_dtype(op, x.dtype, out.dtype)
    part = dev.alloc(O * P * T.ITEMSIZE[acc_dt])
    parti = dev.alloc(O * P * 8) if arg else None
    _run(dev, op, x, x.dtype, out.dtype, kshape, kstrides, rshape, rstrides, part, parti, P, False)
    partial = _Flat(part, dev)
    _run(dev, op, partial, x.dtype, out.dtype, (O,), (P,), (P,), (1,), out.buf, None, 1, True,
         xi=parti)


class _Flat:
    """A bare contiguous buffer seen as a handle (for the second pass)."""
    __slots__ = ("buf", "offset", "dev")

    def __init__(self, buf, dev):
        self.buf, self.offset, self.dev = buf, 0, dev


def _make(op):
    if op in ARG:
        def kernel(out, x, *, dim, keepdim):
            _reduce(op, out, x, (dim,))
    else:
        def kernel(out, x, *, dims, keepdim):
            _reduce(op, out, x, tuple(dims))
    kernel.__name__ = op
    return kernel


KERNELS = {op: _make(op) for op in ("sum", "prod", "amax", "amin", "argmax", "argmin")}
