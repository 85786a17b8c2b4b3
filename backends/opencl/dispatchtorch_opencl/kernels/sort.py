"""sort (bitonic, made stable) and searchsorted.

sort orders (key, original index) pairs, so the bitonic network - not stable by
itself - yields exactly the stable order: equal keys keep their original order in
both directions, and NaN is larger than every number. Rows are padded to a power of
two with entries that sort last. Each work-group first sorts blocks of BLOCK
entries on its own (all merge steps with a partner distance inside the block),
wider steps run as one launch each. The values are finally gathered from the input
by index, so they keep their exact bits.
"""
from __future__ import annotations

from math import prod

import numpy as np

from .. import cltypes as T
from ..codegen import KernelSpec, Operand, coords, dot, kernel_name, loop_kernel, loop_launch, signature
from ..handle import coalesce

I64 = np.int64
BLOCK_CPU = 4096


def _key_type(dt):
    return T.COMPUTE[dt]


def _less(dt):
    """C macro body: NaN-aware a < b (NaN is the largest)."""
    if dt in T.FLOATS:
        return "((a) < (b) || ((b) != (b) && (a) == (a)))"
    return "((a) < (b))"


def _helpers(dt, descending):
    kt = _key_type(dt)
    lt = _less(dt)
    order = "DT_LT(kb, ka)" if descending else "DT_LT(ka, kb)"
    rev = "DT_LT(ka, kb)" if descending else "DT_LT(kb, ka)"
    return (f"#define DT_LT(a, b) {lt}\n"
            f"inline int dt_before({kt} ka, int ia, {kt} kb, int ib, int n) {{\n"
            "  int pa = ia >= n, pb = ib >= n;\n"
            "  if (pa | pb) return !pa || (pb && ia < ib);\n"
            f"  if ({order}) return 1;\n"
            f"  if ({rev}) return 0;\n"
            "  return ia < ib;\n}\n"
            f"inline void dt_cmpx(__global {kt}* keys, __global int* idx, long a, long b, int up, int n) {{\n"
            f"  {kt} ka = keys[a], kb = keys[b]; int ia = idx[a], ib = idx[b];\n"
            "  int swap = up ? dt_before(kb, ib, ka, ia, n) : dt_before(ka, ia, kb, ib, n);\n"
            "  if (swap) { keys[a] = kb; keys[b] = ka; idx[a] = ib; idx[b] = ia; }\n}\n")


def _row_params(dk):
    p = [("long", f"ks{d}", I64) for d in range(dk)]
    p += [("long", f"kx{d}", I64) for d in range(dk)]
    p += [("long", f"ko{d}", I64) for d in range(dk)]
    return p


def _work_loop(count, per_group=False):
    """The range of items this work-item (or, per_group, this work-group) handles."""
    gid = "get_group_id(0)" if per_group else "get_global_id(0)"
    return f"long first = {gid} * wchunk, last = first + wchunk; if (last > {count}) last = {count};"


def _spec(name, dt, params, body, helpers="", what="sort"):
    sig, types = signature(params)
    src = (T.preamble((dt,)) + helpers + f"\n__kernel void {name}({sig}) {{\n  "
           + "\n  ".join(x for x in body if x) + "\n}\n")
    return KernelSpec(name, src, types, f"{what} ({dt})")


def init_spec(dt, dk):
    kt = _key_type(dt)
    params = [(T.pointer(dt, True), "p_x", None), ("long", "o_x", I64), *_row_params(dk),
              ("long", "n", I64), ("long", "xsd", I64), ("long", "P", I64), ("long", "items", I64),
              ("long", "wchunk", I64), (f"__global {kt}*", "keys", None), ("__global int*", "idx", None)]
    body = [_work_loop("items"),
            "for (long g = first; g < last; g++) {",
            "  long row = g / P, pos = g - row * P;",
            "  " + coords("row", [f"ks{d}" for d in range(dk)], "k"),
            f"  long xb = o_x + {dot('k', [f'kx{d}' for d in range(dk)])};",
            f"  keys[g] = pos < n ? ({kt})({T.load(dt, 'p_x', 'xb + pos * xsd')}) : ({kt})0;",
            "  idx[g] = (int)pos;",
            "}"]
    return _spec(kernel_name("sortinit", dt, dk), dt, params, body)


def block_spec(dt, descending, full, L):
    """Sort (full) or finish merging (with the global k) each block of Bk entries."""
    kt = _key_type(dt)
    params = [(f"__global {kt}*", "keys", None), ("__global int*", "idx", None), ("long", "n", I64),
              ("long", "P", I64), ("long", "Bk", I64), ("long", "kglob", I64),
              ("long", "blocks", I64), ("long", "wchunk", I64)]
    step = ("for (long t = lid; t < Bk / 2; t += L_) { long l = 2 * t - (t & (j - 1)); "
            "dt_cmpx(keys, idx, base + l, base + l + j, ((pos0 + l) & k) == 0, (int)n); }")
    sync = "barrier(CLK_GLOBAL_MEM_FENCE);" if L > 1 else ""
    if full:
        loops = [f"for (long k = 2; k <= Bk; k <<= 1) for (long j = k >> 1; j > 0; j >>= 1) {{ {step} {sync} }}"]
    else:
        loops = [f"long k = kglob; for (long j = Bk >> 1; j > 0; j >>= 1) {{ {step} {sync} }}"]
    body = [f"long lid = {'get_local_id(0)' if L > 1 else '0'}; const long L_ = {L};",
            _work_loop("blocks", per_group=True),
            "for (long b = first; b < last; b++) {",
            "  long base = b * Bk, pos0 = base % P;",
            *("  " + x for x in loops),
            "}"]
    name = kernel_name("sortblock", dt, int(descending), int(full), L)
    return _spec(name, dt, params, body, _helpers(dt, descending))


def step_spec(dt, descending):
    kt = _key_type(dt)
    params = [(f"__global {kt}*", "keys", None), ("__global int*", "idx", None), ("long", "n", I64),
              ("long", "P", I64), ("long", "k", I64), ("long", "j", I64), ("long", "items", I64),
              ("long", "wchunk", I64)]
    body = [_work_loop("items"),
            "long hp = P / 2;",
            "for (long t = first; t < last; t++) {",
            "  long row = t / hp, tt = t - row * hp;",
            "  long l = 2 * tt - (tt & (j - 1));",
            "  dt_cmpx(keys, idx, row * P + l, row * P + l + j, (l & k) == 0, (int)n);",
            "}"]
    return _spec(kernel_name("sortstep", dt, int(descending)), dt, params, body,
                 _helpers(dt, descending))


def final_spec(dt, dk):
    params = [(T.pointer(dt, True), "p_x", None), ("long", "o_x", I64), *_row_params(dk),
              ("long", "n", I64), ("long", "xsd", I64), ("long", "osd", I64), ("long", "P", I64),
              ("long", "items", I64), ("long", "wchunk", I64), ("__global const int*", "idx", None),
              (T.pointer(dt), "p_v", None), ("long", "o_v", I64), ("__global long*", "p_i", None),
              ("long", "o_i", I64)]
    body = [_work_loop("items"),
            "for (long g = first; g < last; g++) {",
            "  long row = g / n, pos = g - row * n;",
            "  " + coords("row", [f"ks{d}" for d in range(dk)], "k"),
            f"  long xb = o_x + {dot('k', [f'kx{d}' for d in range(dk)])};",
            f"  long ob = {dot('k', [f'ko{d}' for d in range(dk)])} + pos * osd;",
            "  int src = idx[row * P + pos];",
            "  p_v[o_v + ob] = p_x[xb + src * xsd];",
            "  p_i[o_i + ob] = src;",
            "}"]
    return _spec(kernel_name("sortfinal", dt, dk), dt, params, body)


def _geometry(dev, count, cost=1):
    """(wchunk, global, local) for a work loop over count items of one work-item each."""
    _, chunk, gsize, lsize = dev.split(count, per_item_cost=cost)
    return chunk, gsize, lsize


def sort(values, indices, x, *, dim, descending):
    if values.size == 0:
        return
    dev, dt = values.dev, x.dtype
    nd = len(x.shape)
    n = x.shape[dim] if nd else 1
    if n >= 2**31 - 1:
        raise ValueError(f"opencl sort: rows of {n} elements are too long (the limit is 2**31 - 2)")
    kept = [d for d in range(nd) if d != dim]
    kshape, (kx, ko) = coalesce(tuple(x.shape[d] for d in kept),
                                [tuple(x.strides[d] for d in kept), tuple(values.strides[d] for d in kept)])
    xsd = x.strides[dim] if nd else 0
    osd = values.strides[dim] if nd else 0
    rows, dk = prod(kshape), len(kshape)
    P = 1 << max(0, (n - 1).bit_length())
    keys = dev.alloc(rows * P * np.dtype(_np_key(dt)).itemsize)
    idx = dev.alloc(rows * P * 4)
    row_args = [*kshape, *kx, *ko]

    items = rows * P
    wchunk, gs, ls = _geometry(dev, items)
    k_init, what = dev.kernel(("sortinit", dt, dk), lambda: init_spec(dt, dk))
    dev.launch(k_init, gs, ls, [x.buf, x.offset, *row_args, n, xsd, P, items, wchunk, keys, idx], what)

    if P > 1:
        L = 1 if dev.loop else min(dev.group, P // 2)
        Bk = min(P, BLOCK_CPU if dev.loop else 2 * L)
        blocks = rows * P // Bk
        if dev.loop:
            bchunk, bgs, bls = _geometry(dev, blocks, cost=Bk * 4)
        else:
            bchunk, bgs, bls = 1, (blocks * L,), (L,)

        def block(full, kglob):
            kernel, what = dev.kernel(("sortblock", dt, descending, full, L),
                                      lambda: block_spec(dt, descending, full, L))
            dev.launch(kernel, bgs, bls, [keys, idx, n, P, Bk, kglob, blocks, bchunk], what)

        block(True, 0)
        half = rows * P // 2
        schunk, sgs, sls = _geometry(dev, half)
        k_step, swhat = dev.kernel(("sortstep", dt, descending), lambda: step_spec(dt, descending))
        k = 2 * Bk
        while k <= P:
            j = k // 2
            while j >= Bk:
                dev.launch(k_step, sgs, sls, [keys, idx, n, P, k, j, half, schunk], swhat)
                j //= 2
            block(False, k)
            k *= 2

    items = rows * n
    wchunk, gs, ls = _geometry(dev, items)
    k_fin, what = dev.kernel(("sortfinal", dt, dk), lambda: final_spec(dt, dk))
    dev.launch(k_fin, gs, ls, [x.buf, x.offset, *row_args, n, xsd, osd, P, items, wchunk, idx,
                               values.buf, values.offset, indices.buf, indices.offset], what)


def _np_key(dt):
    return {"float": np.float32, "double": np.float64}.get(_key_type(dt), T.NUMPY[dt])


# -- searchsorted --------------------------------------------------------------------------

def searchsorted(out, seq, values, *, right):
    if out.size == 0:
        return
    dt = seq.dtype
    M = seq.shape[1]
    kt = T.COMPUTE[dt]
    cond = "!DT_LT(v, s)" if right else "DT_LT(s, v)"

    def make(D, kinds):
        ops = [Operand("out", "int64", const=False), Operand("v", dt), Operand("s", dt)]

        def body(ix):
            return ("{ " + f"{kt} v = {T.load(dt, 'p_v', ix['v'])}; long lo = 0, hi = M; "
                    "while (lo < hi) { long mid = (lo + hi) >> 1; "
                    f"{kt} s = {T.load(dt, 'p_s', ix['s'] + ' + mid * ssd')}; "
                    f"if ({cond}) lo = mid + 1; else hi = mid; }} p_out[{ix['out']}] = lo; }}")
        return loop_kernel(kernel_name("searchsorted", dt, int(right), D, *kinds), ops, kinds, D,
                           body, params=[("long", "M", I64), ("long", "ssd", I64)],
                           helpers=f"#define DT_LT(a, b) {_less(dt)}\n", dtypes=(dt,),
                           what=f"searchsorted ({dt})")
    loop_launch(out.dev, ("searchsorted", dt, right), make, out.shape,
                [(out, out.strides), (values, values.strides), (seq, (seq.strides[0], 0))],
                [M, seq.strides[1]], cost=max(1, M.bit_length()))


KERNELS = {"sort": sort, "searchsorted": searchsorted}
