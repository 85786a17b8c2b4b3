"""Scans along one dim: cumsum, cumprod, cummax, cummin.

Each row (all coordinates but the scanned dim) is cut into P chunks. With P > 1,
one launch folds each chunk to an aggregate, one turns each row's aggregates into
exclusive prefixes, and the scan launch runs every chunk in order from its prefix.
With P == 1 only the scan launch runs. cummax/cummin carry (value, index): an
element `>=` (`<=`) the running value replaces it, a NaN replaces it and sticks.
"""
from __future__ import annotations

from math import prod

import numpy as np

from .. import cltypes as T
from ..codegen import KernelSpec, coords, dot, kernel_name, signature
from ..handle import coalesce
from .reduction import acc_dtype

I64 = np.int64
EXTREME = ("cummax", "cummin")


def _state(op, x_dt, out_dt):
    """(state dtype, C type, identity, fold statement of v at position j into s)."""
    if op in EXTREME:
        dt = "float32" if x_dt in T.LOWP else x_dt
        cmp = ">=" if op == "cummax" else "<="
        if dt in T.FLOATS:
            take = f"(v != v) || (s == s && v {cmp} s)"
        else:
            take = f"v {cmp} s"
        return dt, T.COMPUTE[dt], "0", f"if (si < 0 || {take}) {{ s = v; si = j; }}"
    dt = acc_dtype("sum", x_dt, out_dt)
    ctype = T.WRAP[dt] if dt not in T.FLOATS else T.COMPUTE[dt]
    sym = "+" if op == "cumsum" else "*"
    ident = "0" if op == "cumsum" else "1"
    return dt, ctype, f"({ctype}){ident}", f"s = s {sym} v; si = j;"


def _params(dk, x_dt, state_dt):
    p = [(T.pointer(x_dt, True), "p_x", None), ("long", "o_x", I64)]
    p += [("long", f"ks{d}", I64) for d in range(dk)]
    p += [("long", f"kx{d}", I64) for d in range(dk)]
    p += [("long", f"ko{d}", I64) for d in range(dk)]
    p += [("long", "n", I64), ("long", "xsd", I64), ("long", "osd", I64), ("long", "P", I64),
          ("long", "C", I64), ("long", "items", I64), ("long", "wchunk", I64)]
    p += [(T.pointer(state_dt), "p_agg", None), ("__global long*", "p_aggi", None)]
    return p


def _head(dk):
    return [
        "long first = get_global_id(0) * wchunk, last = first + wchunk; if (last > items) last = items;",
        "for (long g = first; g < last; g++) {",
        "long row = g / P, part = g - row * P;",
        coords("row", [f"ks{d}" for d in range(dk)], "k"),
        f"long xb = o_x + {dot('k', [f'kx{d}' for d in range(dk)])};",
        f"long ob = {dot('k', [f'ko{d}' for d in range(dk)])};",
        "long j0 = part * C, j1 = j0 + C; if (j1 > n) j1 = n;",
    ]


def scan_spec(op, x_dt, out_dt, dk, stage):
    """stage: 'scan' (write outputs, seeded from p_agg when P > 1), 'agg' (fold each
    chunk into p_agg) or 'prefix' (per row, aggregates -> exclusive prefixes)."""
    st_dt, ctype, ident, fold = _state(op, x_dt, out_dt)
    params = _params(dk, x_dt, st_dt)
    if stage == "scan":
        params.append((T.pointer(out_dt), "p_out", None))
        if op in EXTREME:
            params.append(("__global long*", "p_idx", None))
    sig, types = signature(params)
    load = f"({ctype})({T.load(x_dt, 'p_x', 'xb + j * xsd')})"
    if stage == "prefix":
        body = ["long row = get_global_id(0); if (row * P >= items) return;",
                f"{ctype} s = {ident}; long si = -1;",
                "for (long part = 0; part < P; part++) {",
                f"  long a_ = row * P + part; {ctype} v = {T.load(st_dt, 'p_agg', 'a_')}; "
                "long j = p_aggi[a_];",
                f"  {T.store(st_dt, 'p_agg', 'a_', 's')} p_aggi[a_] = si;",
                "  " + fold,
                "}"]
    else:
        body = _head(dk) + [f"{ctype} s = {ident}; long si = -1;"]
        if stage == "scan":
            body.append(f"if (P > 1 && part > 0) {{ s = {T.load(st_dt, 'p_agg', 'g')}; "
                        "si = p_aggi[g]; }")
        body += ["for (long j = j0; j < j1; j++) {", f"  {ctype} v = {load};", "  " + fold]
        if stage == "scan":
            if op in EXTREME:
                body.append("  " + T.store(out_dt, "p_out", "ob + j * osd", "s"))
                body.append("  p_idx[ob + j * osd] = si;")
            else:
                body.append("  " + T.store_cast(out_dt, "p_out", "ob + j * osd",
                                                f"({T.COMPUTE[st_dt]})s", st_dt))
        body.append("}")
        if stage == "agg":
            body.append(T.store(st_dt, "p_agg", "g", f"({T.COMPUTE[st_dt]})s") + " p_aggi[g] = si;")
        body.append("}")
    name = kernel_name("scan", op, stage, x_dt, out_dt, dk)
    src = (T.preamble((x_dt, out_dt, st_dt)) + f"\n__kernel void {name}({sig}) {{\n  "
           + "\n  ".join(x for x in body if x) + "\n}\n")
    return KernelSpec(name, src, types, f"{op} ({x_dt} -> {out_dt})")


def _chunks(dev, rows, n):
    if dev.loop:
        target, least = dev.workers, 4096
    else:
        target, least = dev.compute_units * 256, 64
    if rows >= target or n <= least:
        return 1
    return max(1, min(-(-target // rows), n // least))


def _scan(op, out, idx, x, dim):
    dev = out.dev
    n = x.shape[dim] if x.shape else 1
    if out.size == 0:
        return
    kept = [d for d in range(len(x.shape)) if d != dim]
    ostr = out.strides
    kshape, (kx, ko) = coalesce(tuple(x.shape[d] for d in kept),
                                [tuple(x.strides[d] for d in kept), tuple(ostr[d] for d in kept)])
    xsd = x.strides[dim] if x.shape else 0
    osd = ostr[dim] if x.shape else 0
    rows = prod(kshape)
    P = _chunks(dev, rows, n)
    C = -(-n // P)
    P = -(-n // C)
    items = rows * P
    st_dt = _state(op, x.dtype, out.dtype)[0]
    dk = len(kshape)
    agg = dev.alloc(items * T.ITEMSIZE[st_dt]) if P > 1 else dev.dummy
    aggi = dev.alloc(items * 8) if P > 1 else dev.dummy
    _, wchunk, gsize, lsize = dev.split(items, per_item_cost=C)
    common = [x.buf, x.offset, *kshape, *kx, *ko, n, xsd, osd, P, C, items, wchunk, agg, aggi]

    def run(stage, gsize, lsize, extra=()):
        key = ("scan", op, stage, x.dtype, out.dtype, dk)
        kernel, what = dev.kernel(key, lambda: scan_spec(op, x.dtype, out.dtype, dk, stage))
        dev.launch(kernel, gsize, lsize, [*common, *extra], what)

    if P > 1:
        run("agg", gsize, lsize)
        run("prefix", *dev.one_per_item(rows))
    run("scan", gsize, lsize, [out.buf] + ([idx.buf] if idx is not None else []))


def _make(op):
    if op in EXTREME:
        def kernel(values, indices, x, *, dim):
            _scan(op, values, indices, x, dim)
    else:
        def kernel(out, x, *, dim):
            _scan(op, out, None, x, dim)
    kernel.__name__ = op
    return kernel


KERNELS = {op: _make(op) for op in ("cumsum", "cumprod", "cummax", "cummin")}
