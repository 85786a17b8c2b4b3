"""Batched matmul: out (*B, M, N) = a (*B, M, K) @ b (*B, K, N), any strides.

Three kernel families, chosen by device and layout:
- GPUs ("tiled"): the classic local-memory tiling; a work-group loads TILE x TILE
  blocks of a and b into local memory, each work-item accumulates one output.
- CPUs ("packed"): local memory and barriers cost more than they save on a CPU, so a
  and b are first packed (cast to the compute type, zero-padded) into panels read
  sequentially, then each work-item computes a ROWS x LANES register block with
  vector arithmetic - the layout of a BLAS micro-kernel. Packing also absorbs every
  stride (transposed and broadcast operands cost no extra copy).
- CPUs, float32/float64 with rows or columns contiguous ("direct", matmul_direct.py):
  register blocks reading the operands in place, no packing pass, up to
  matmul_direct.MAX_WORK multiply-adds a matrix; the packed kernels take every other
  dtype, layout and size.
float16/bfloat16 accumulate in float32; integers in wrapping unsigned arithmetic.
"""
from __future__ import annotations

from math import prod

import numpy as np

from .. import cltypes as T
from ..codegen import KernelSpec, coords, dot, kernel_name, signature
from ..handle import coalesce
from .matmul_direct import _MASK, _RELU, direct

I64 = np.int64
TILE = 16


def compute_type(dt):
    if dt in T.FLOATS:
        return "double" if dt == "float64" else "float"
    return T.WRAP[dt]


def register_block(ctype, dev):
    """(ROWS, LANES): ROWS x LANES accumulators fill the vector registers. Where the
    device's vectors are 512 bits (an AVX-512 build: 32 zmm registers) a 16-float row
    is one register and 4 rows leave the FMA pipes waiting: 8x16 (one PoCL thread, the
    micro-kernel of 512x128 @ 128x512: 0.45-0.50 ms against 0.62-0.66; 6x16 0.60,
    12x16 and 16x16 no better than 8). With 256-bit vectors (16 ymm registers; PoCL on
    Zen 4 compiles for znver3, see vector_width.py) float 6x16: 12 accumulators, two
    loads of b and a broadcast (one PoCL thread, the micro-kernel alone, 128x512x512 /
    512x512x128: 0.62 / 0.65 ms, ~105 GFLOP/s, against 0.66-0.68 / 0.69 for 4x16,
    1.04 / 1.11 for 8x16, which spills; 5x16 0.65 / 0.67-0.90, 7x16 1.25 (spills),
    12x8 0.71-0.87, 8x8 1.03; unrolling k by 2 or 4: no change)."""
    wide = dev.vector_width
    if ctype == "float" and wide.get("float32", 0) >= 16:
        return 8, 16
    if ctype == "double" and wide.get("float64", 0) >= 8:
        return 8, 8
    return {"float": (6, 16), "uint": (8, 8), "double": (4, 8), "ulong": (4, 4)}[ctype]


# -- CPU: pack + register-blocked micro-kernel ------------------------------------------

def _pack_head(dt, db, w, ctype):
    """(signature, arg types, prologue) both pack kernels share: the panel `g` of this
    work-item, its source rows `src` (valid of them) and its destination `dst`."""
    params = [(T.pointer(dt, True), "p_x", None), ("long", "o_x", I64)]
    params += [("long", f"bs{d}", I64) for d in range(db)]
    params += [("long", f"bx{d}", I64) for d in range(db)]
    params += [("long", "R", I64), ("long", "K", I64), ("long", "sr", I64), ("long", "sk", I64),
               ("long", "panels", I64), ("long", "items", I64), (f"__global {ctype}*", "p_out", None)]
    sig, types = signature(params)
    return sig, types, [
        "long g = get_global_id(0); if (g >= items) return;",
        "long batch = g / panels, pn = g - batch * panels;",
        coords("batch", [f"bs{d}" for d in range(db)], "b"),
        f"long xb = o_x + {dot('b', [f'bx{d}' for d in range(db)])};",
        f"__global {ctype}* dst = p_out + g * K * {w};",
        f"long valid = R - pn * {w}; if (valid > {w}) valid = {w};",
        f"__global const {T.STORAGE[dt]}* src = p_x + xb + pn * {w} * sr;"]


def pack_spec(dt, db, which, block):
    """Pack a (which='a': panels [batch][M/ROWS][K][ROWS]) or b (which='b': panels
    [batch][N/LANES][K][LANES]); rows past the matrix are zero. block: (ROWS, LANES)."""
    ctype = compute_type(dt)
    rows, lanes = block
    w = rows if which == "a" else lanes
    sig, types, body = _pack_head(dt, db, w, ctype)
    body += [
        f"if (valid == {w}) {{",        # a full panel: no test an element (6-row panels of a
        "  for (long k = 0; k < K; k++)",  # column-major a, 512x128: 0.033 -> 0.023-0.026 ms)
        f"    for (int i = 0; i < {w}; i++) dst[k * {w} + i] = ({ctype})({T.load(dt, 'src', 'i * sr + k * sk')});",
        "} else {",
        "  for (long k = 0; k < K; k++)",
        f"    for (long i = 0; i < {w}; i++)",
        f"      dst[k * {w} + i] = i < valid ? ({ctype})({T.load(dt, 'src', 'i * sr + k * sk')}) : ({ctype})0;",
        "}",
    ]
    name = kernel_name("mmpack", which, dt, db)
    src = T.preamble((dt,)) + f"\n__kernel void {name}({sig}) {{\n  " + "\n  ".join(body) + "\n}\n"
    return KernelSpec(name, src, types, f"matmul packing {which} ({dt})")


PACK_K = {"float32": 8, "float64": 4}      # k values a vector load of the rows form


def pack_rows_spec(dt, db, which, block):
    """pack_spec where each panel row is contiguous along k (sk == 1: a row-major a, the
    Linear weight as b = w.T), float32/float64: a panel row's next PACK_K values are
    one vector load, spread over the panel, instead of one strided load each (one PoCL
    thread, packing a 512x512 float32 weight: see docs/performance.md). The panel's
    rows at k..k+PACK_K are then PACK_K vector stores (a transpose in registers): the
    panel (g * K * w elements from a fresh buffer's start) is aligned for them."""
    rows, lanes = block
    w = rows if which == "a" else lanes
    c, v = T.STORAGE[dt], PACK_K[dt]
    vec = f"{c}{v}"
    lane = [f"s{x:x}" for x in range(v)]
    sig, types, body = _pack_head(dt, db, w, c)
    if w in (2, 4, 8, 16):      # an OpenCL vector type: one store a panel row
        store = [f"  __global {c}{w}* d = (__global {c}{w}*)(dst + k * {w});",
                 *(f"  d[{j}] = ({c}{w})(" + ", ".join(f"x{i}.{lane[j]}" for i in range(w)) + ");"
                   for j in range(v))]
    else:                       # (6 rows: scalar stores)
        store = [f"  dst[(k + {j}) * {w} + {i}] = x{i}.{lane[j]};" for j in range(v) for i in range(w)]
    body += [
        f"long kv = K - K % {v}, k = 0;",
        f"for (; k < kv; k += {v}) {{",
        *(f"  {vec} x{i} = {i} < valid ? DT_LOAD(src + {i} * sr + k) : ({vec})(0);" for i in range(w)),
        *store,
        "}",
        "for (; k < K; k++)",
        f"  for (long i = 0; i < {w}; i++) dst[k * {w} + i] = i < valid ? src[i * sr + k] : ({c})0;",
    ]
    name = kernel_name("mmpack", which, dt, db, "rows")
    src = (T.preamble((dt,)) + T.vector_io(c, v) + f"\n__kernel void {name}({sig}) {{\n  "
           + "\n  ".join(body) + "\n}\n")
    return KernelSpec(name, src, types, f"matmul packing {which} ({dt})")


def micro_spec(dt, block, bias=False, relu=False, mask=False):
    """The register-blocked product of packed panels; bias (float32/float64 only): a
    contiguous (N,) row added before the store (F.linear's), relu: then rectified
    (dispatchtorch.compile's linear + relu epilogue); mask: zeroed where an (M, N)
    ReLU result, rows contiguous, is <= 0 (its matmul + threshold_backward)."""
    ctype = compute_type(dt)
    rows, lanes = block
    vec = f"{ctype}{lanes}"
    params = [(f"__global const {ctype}*", "pa", None), (f"__global const {vec}*", "pb", None),
              (T.pointer(dt), "p_out", None), ("long", "o_out", I64), ("long", "M", I64), ("long", "N", I64),
              ("long", "K", I64), ("long", "MB", I64), ("long", "NB", I64)]
    if bias:
        params += [(T.pointer(dt, True), "p_bias", None), ("long", "o_bias", I64)]
    if mask:
        params += [(T.pointer(dt, True), "p_h", None), ("long", "o_h", I64), ("long", "shm", I64)]
    sig, types = signature(params)
    lane = [f"s{i:x}" for i in range(lanes)]
    body = [
        "long nb = get_global_id(0), mb = get_global_id(1), batch = get_global_id(2);",
        f"__global const {ctype}* ap = pa + (batch * MB + mb) * K * {rows};",
        f"__global const {vec}* bp = pb + (batch * NB + nb) * K;",
        *(f"{vec} acc{i} = ({vec})0;" for i in range(rows)),
        "for (long k = 0; k < K; k++) {",
        f"  {vec} bv = bp[k];",
        *(f"  acc{i} += ap[{i}] * bv;" for i in range(rows)),
        f"  ap += {rows};",
        "}",
        f"long m0 = mb * {rows}, n0 = nb * {lanes};",
        "__global " + T.STORAGE[dt] + "* cp = p_out + o_out + batch * M * N;",
    ]
    store_dt = "float64" if ctype == "double" else "float32" if ctype == "float" else dt
    if (bias or relu or mask) and dt not in ("float32", "float64"):
        raise ValueError(f"matmul: a bias or ReLU epilogue only for float32/float64, not {dt}")
    plus = " + p_bias[o_bias + n0 + {v}]" if bias else ""
    tail = _RELU.format(c=ctype) if relu else ""
    if mask:
        tail += f" if (p_h[o_h + (m0 + {{i}}) * shm + n0 + {{v}}] <= ({ctype})0) v = ({ctype})0;"
    head = ""
    if dt in ("float32", "float64"):
        # a whole block inside the matrix: a vector store a row, not LANES tested scalar
        # ones (one PoCL thread, the 6x16 micro-kernel alone, best of 60: 512x512x128
        # 0.645 -> 0.58 ms, 128x512x512 0.62 -> 0.60)
        e = " + e" if bias else ""
        body += ["if (m0 + " + str(rows) + " <= M && n0 + " + str(lanes) + " <= N) {",
                 *([f"  {vec} e = DT_LOAD(p_bias + o_bias + n0);"] if bias else []),
                 *(f"  {{ {vec} v = acc{i}{e};{_RELU.format(c=vec) if relu else ''}"
                   + (f" v = {_MASK.format(v='v', c=vec, h=f'DT_LOAD(p_h + o_h + (m0 + {i}) * shm + n0)')};"
                      if mask else "")
                   + f" DT_STORE(v, cp + (m0 + {i}) * N + n0); }}" for i in range(rows)),
                 "  return;", "}"]
        head = T.vector_io(ctype, lanes)
    for i in range(rows):
        if bias or relu or mask:
            stores = " ".join(
                f"if (n0 + {v} < N) {{ {ctype} v = acc{i}.{lane[v]}{plus.format(v=v)};{tail.format(i=i, v=v)} "
                f"cp[(m0 + {i}) * N + n0 + {v}] = v; }}" for v in range(lanes))
        else:
            stores = " ".join(
                f"if (n0 + {v} < N) {{ {T.store_cast(dt, 'cp', f'(m0 + {i}) * N + n0 + {v}', f'acc{i}.{lane[v]}', store_dt)} }}"
                for v in range(lanes))
        body.append(f"if (m0 + {i} < M) {{ {stores} }}")
    name = kernel_name("mmmicro", dt, "bias" if bias else "", "relu" if relu else "",
                       "mask" if mask else "")
    src = T.preamble((dt,)) + head + f"\n__kernel void {name}({sig}) {{\n  " + "\n  ".join(body) + "\n}\n"
    return KernelSpec(name, src, types, f"matmul ({dt})")


def _packed(out, a, b, batch, bstrides, M, N, K, bias=None, relu=False, mask=None):
    dev, dt = out.dev, out.dtype
    ctype = compute_type(dt)
    block = rows, lanes = register_block(ctype, dev)
    item = 8 if ctype in ("double", "ulong") else 4
    Bt = prod(batch)
    MB, NB = -(-M // rows), -(-N // lanes)
    db = len(batch)
    pa = dev.alloc(Bt * MB * rows * K * item) or dev.dummy
    pb = dev.alloc(Bt * NB * lanes * K * item) or dev.dummy
    for which, x, st, R, sr, sk, panels, dst in (
            ("a", a, bstrides[0], M, a.strides[-2], a.strides[-1], MB, pa),
            ("b", b, bstrides[1], N, b.strides[-1], b.strides[-2], NB, pb)):
        if K == 0:
            continue
        rows_form = sk == 1 and dt in PACK_K and K >= PACK_K[dt]
        kernel, what = dev.kernel(("mmpack", which, dt, db, block, rows_form),
                                  lambda: (pack_rows_spec if rows_form else pack_spec)(dt, db, which, block))
        items = Bt * panels
        gsize = (items,) if dev.loop else (-(-items // dev.group) * dev.group,)
        dev.launch(kernel, gsize, (1,) if dev.loop else (dev.group,),
                   [x.buf, x.offset, *batch, *st, R, K, sr, sk, panels, items, dst], what)
    fused, masked = bias is not None, mask is not None
    kernel, what = dev.kernel(("mmmicro", dt, block, fused, relu) + (("mask",) if masked else ()),
                              lambda: micro_spec(dt, block, fused, relu, masked))
    tail = [bias.buf, bias.offset] if fused else []
    if masked:
        tail += [mask.buf, mask.offset, mask.strides[0]]
    dev.launch(kernel, (NB, MB, Bt), None, [pa, pb, out.buf, out.offset, M, N, K, MB, NB] + tail, what)


# -- GPU: local-memory tiles ---------------------------------------------------------------

def tiled_spec(dt, db):
    ctype = compute_type(dt)
    params = [(T.pointer(dt, True), "p_a", None), ("long", "o_a", I64),
              (T.pointer(dt, True), "p_b", None), ("long", "o_b", I64),
              (T.pointer(dt), "p_out", None), ("long", "o_out", I64)]
    params += [("long", f"bs{d}", I64) for d in range(db)]
    params += [("long", f"ba{d}", I64) for d in range(db)]
    params += [("long", f"bb{d}", I64) for d in range(db)]
    params += [("long", n, I64) for n in ("M", "N", "K", "sam", "sak", "sbk", "sbn")]
    sig, types = signature(params)
    acc_dt = "float64" if ctype == "double" else "float32" if ctype == "float" else dt
    body = [
        "int tx = get_local_id(0), ty = get_local_id(1);",
        f"long n = get_group_id(0) * {TILE} + tx, m = get_group_id(1) * {TILE} + ty;",
        "long batch = get_global_id(2);",
        coords("batch", [f"bs{d}" for d in range(db)], "b"),
        f"long ab = o_a + {dot('b', [f'ba{d}' for d in range(db)])};",
        f"long bb = o_b + {dot('b', [f'bb{d}' for d in range(db)])};",
        f"__local {ctype} As[{TILE}][{TILE}];",
        f"__local {ctype} Bs[{TILE}][{TILE}];",
        f"{ctype} acc = ({ctype})0;",
        f"for (long k0 = 0; k0 < K; k0 += {TILE}) {{",
        f"  long ka = k0 + tx, kb = k0 + ty;",
        f"  As[ty][tx] = (m < M && ka < K) ? ({ctype})({T.load(dt, 'p_a', 'ab + m * sam + ka * sak')}) : ({ctype})0;",
        f"  Bs[ty][tx] = (n < N && kb < K) ? ({ctype})({T.load(dt, 'p_b', 'bb + kb * sbk + n * sbn')}) : ({ctype})0;",
        "  barrier(CLK_LOCAL_MEM_FENCE);",
        f"  for (int k = 0; k < {TILE}; k++) acc += As[ty][k] * Bs[k][tx];",
        "  barrier(CLK_LOCAL_MEM_FENCE);",
        "}",
        "if (m < M && n < N) { " + T.store_cast(dt, "p_out", "o_out + batch * M * N + m * N + n", "acc", acc_dt) + " }",
    ]
    name = kernel_name("mmtiled", dt, db)
    src = T.preamble((dt,)) + f"\n__kernel void {name}({sig}) {{\n  " + "\n  ".join(body) + "\n}\n"
    return KernelSpec(name, src, types, f"matmul ({dt})")


def _tiled(out, a, b, batch, bstrides, M, N, K):
    dev, dt = out.dev, out.dtype
    db = len(batch)
    kernel, what = dev.kernel(("mmtiled", dt, db), lambda: tiled_spec(dt, db))
    gsize = (-(-N // TILE) * TILE, -(-M // TILE) * TILE, prod(batch))
    dev.launch(kernel, gsize, (TILE, TILE, 1),
               [a.buf, a.offset, b.buf, b.offset, out.buf, out.offset, *batch, *bstrides[0], *bstrides[1],
                M, N, K, a.strides[-2], a.strides[-1], b.strides[-2], b.strides[-1]], what)


def relu_epilogue_ok(out, a, b):
    """Whether matmul_bias(..., relu=True) applies the ReLU in its kernel here: on
    CPUs, in the direct nt kernel or the packed micro-kernel."""
    return out.dev.matmul_path == "direct" and out.dtype in ("float32", "float64")


def matmul(out, a, b):
    matmul_bias(out, a, b, None)


def matmul_masked(out, a, b, mask):
    """out (M, N) contiguous = a (M, K) @ b (K, N), zeroed where mask (the (M, N)
    result of a ReLU, rows contiguous) is <= 0, in one GEMM launch: on CPUs, the
    direct nn kernel or the packed micro-kernel, float32/float64. Returns whether it
    ran (nothing is launched otherwise)."""
    M, K = a.shape
    N = b.shape[1]
    if out.dev.matmul_path != "direct" or out.dtype not in ("float32", "float64") \
            or mask.dtype != out.dtype or (mask.strides[1] != 1 and N > 1):
        return False
    if not direct(out, a, b, (), [(), ()], M, N, K, mask=mask):
        _packed(out, a, b, (), [(), ()], M, N, K, mask=mask)
    return True


def matmul_bias(out, a, b, bias, relu=False):
    """out = a @ b, plus bias (a contiguous (N,) handle or None) where the kernel can
    add it before its store; returns whether it did (else the caller adds it).
    relu: rectified before the store too (the caller checked relu_epilogue_ok)."""
    if out.size == 0:
        return True
    M, K = a.shape[-2:]
    N = b.shape[-1]
    nb = len(a.shape) - 2
    batch, bstrides = coalesce(tuple(a.shape[:nb]), [tuple(a.strides[:nb]), tuple(b.strides[:nb])])
    path = out.dev.matmul_path
    if path == "direct" and direct(out, a, b, batch, bstrides, M, N, K, bias, relu):
        return True
    if path == "tiled":
        if relu:
            raise ValueError("matmul: a ReLU epilogue only on CPU devices")
        _tiled(out, a, b, batch, bstrides, M, N, K)
        return bias is None
    epilogue = out.dtype in ("float32", "float64")      # the micro-kernel's bias and relu
    if relu and not epilogue:
        raise ValueError(f"matmul: a ReLU epilogue only for float32/float64, not {out.dtype}")
    _packed(out, a, b, batch, bstrides, M, N, K, bias if epilogue else None, relu)
    return bias is None or epilogue


KERNELS = {"matmul": matmul}
