"""CPU matmul reading its operands in place: no packing pass, register blocks of
vector FMAs, for float32 and float64 when the layout lets rows be vector-loaded.

- "nn" (b's rows contiguous, `b.strides[-1] == 1`; a any strides): each work-item
  computes a rows x 2*W block (W = the 256-bit vector width: 8 floats, 4 doubles;
  rows: nn_rows), one broadcast of a and two vector loads of b per k - 8 or 12
  accumulators, which fill the FMA pipes of an AVX2 core without spilling (an 8x8
  block with 8 accumulators and one load of b per k ran at half the rate on PoCL). Not for a stored column by
  column (the weight gradient `g.T @ x`: a's k-stride is its row length, often a power
  of two, so the blocks' strided broadcasts alias in L1): there the packed kernels
  were faster at every size measured (one PoCL thread, device time, g.T @ x with
  M,N,K = 512,512,128: 766 against 941 us; 512,512,512: 4.0 against 9.4 ms;
  1024,1024,64: 2.1 against 3.2 ms; 64,512,64: 56 against 66 us; equal below
  MIN_PACKED_T multiply-adds, where the packing's two launches cost host time).
- "nt" (a's and b's columns contiguous: `a @ w.T`, the Linear forward): each
  work-item computes ROWS x COLS dot products along k, W at a time, and reduces the
  vectors at the end; a scalar loop takes k's tail.
A partial block clamps its rows (and nt its columns) to the last one and does not
store them; the edge kernel computes nn's columns past the last full block (one
output per work-item). Loads go through an unaligned vector type (cltypes.vector_io).
Layouts these do not take, and products past MAX_WORK, go to matmul.py's packed
kernels.
"""
from __future__ import annotations

from math import gcd, prod

import numpy as np

from .. import cltypes as T
from ..codegen import KernelSpec, coords, dot, kernel_name, signature

I64 = np.int64
ROWS = 4              # rows of a work-item's block (both kernels)
NN_ROWS = 6           # the nn block's rows with 256-bit float32 vectors (nn_rows)
NT_COLS = 2           # columns of an "nt" block
WIDTH = {"float32": 8, "float64": 4}     # elements per 256-bit vector
# the nn kernel on a device whose native vectors are 512 bits (PoCL on AVX-512): a
# ROWS x 2*16 float block, 8 accumulators of 16 lanes. One PoCL thread, device time,
# 128x512 @ 512x512: 0.47-0.48 ms against 0.79-0.84 with 256-bit vectors (8 ROWS: 0.47,
# 6: 0.46; the nt kernel gains little from them: 0.70-0.74 against 0.79)
WIDE = {"float32": 16, "float64": 8}
# past this many multiply-adds per matrix the packed kernels win (1024^3: 28 against
# 48-59 core-ms on PoCL): b's rows a power-of-two stride apart alias in the L1 cache and
# the packing pass, O(n^2), is paid back; at 512x1024x512 the two were even
MAX_WORK = 1 << 28
# a column-major a (stride 1 along m, not along k) goes to the packed kernels from
# this many multiply-adds on (10x512x128, the MLP head's weight gradient: equal)
MIN_PACKED_T = 1 << 20
CTYPE = {"float32": "float", "float64": "double"}
NT_LONG_K = 2048      # from this k on, "nt" products stay direct


# the ReLU epilogue (dispatchtorch.compile's linear + relu): elementwise.py's relu
# expression on the value about to be stored (NaN stays NaN)
_RELU = " v = (v < ({c})0) ? ({c})0 : v;"   # NaN and -0.0 stay, as relu
# the ReLU-backward epilogue (dispatchtorch.compile's matmul + threshold_backward): the
# value about to be stored, zeroed where the ReLU's result h is <= 0 (a NaN h keeps it:
# relu's derivative rule `where(result <= 0, 0.0, g)`, +0.0 where it zeroes). The
# conditional operator, not OpenCL's select(): PoCL 3.0's LLVM 14 aborts the whole
# process compiling select() on float16 in the packed micro-kernel where the host has
# AVX-512 (an AMD EPYC whose PoCL target is znver3: "LLVM ERROR: Cannot emit physreg
# copy instruction"); `?:` on vectors selects per lane just the same
_MASK = "(({h} <= ({c})0) ? ({c})0 : {v})"


def _params(dt, db, extra, bias, mask=False):
    ptr_in, ptr_out = T.pointer(dt, True), T.pointer(dt)
    params = [(ptr_in, "p_a", None), ("long", "o_a", I64), (ptr_in, "p_b", None), ("long", "o_b", I64),
              (ptr_out, "p_out", None), ("long", "o_out", I64)]
    params += [("long", f"bs{d}", I64) for d in range(db)]
    params += [("long", f"ba{d}", I64) for d in range(db)]
    params += [("long", f"bb{d}", I64) for d in range(db)]
    params += [("long", n, I64) for n in ("M", "N", "K", "sam", "sak", "sbk", "sbn", *extra)]
    if bias:                  # the Linear's bias (N,), added to every row before the store
        params += [(ptr_in, "p_bias", None), ("long", "o_bias", I64)]
    if mask:                  # the ReLU's result (M, N), rows shm apart: ReLU's backward
        params += [(ptr_in, "p_h", None), ("long", "o_h", I64), ("long", "shm", I64)]
    return signature(params)


def _bases(db, batch_id):
    """C statements: `batch`, the operands' bases pa0, pb0 and the output's pc0."""
    return [f"long batch = {batch_id};",
            coords("batch", [f"bs{d}" for d in range(db)], "q"),
            f"__global const {{S}}* pa0 = p_a + o_a + {dot('q', [f'ba{d}' for d in range(db)])};",
            f"__global const {{S}}* pb0 = p_b + o_b + {dot('q', [f'bb{d}' for d in range(db)])};",
            "__global {S}* pc0 = p_out + o_out + batch * M * N;"]


def _program(dt, name, sig, body, w=None):
    head = T.preamble((dt,)) + T.vector_io(CTYPE[dt], w or WIDTH[dt])
    text = "\n  ".join(body).replace("{S}", T.STORAGE[dt])
    return head + f"\n__kernel void {name}({sig}) {{\n  {text}\n}}\n"


def _rows(c, stride, rows=ROWS):
    """C statements: the offsets r0.. of a block's rows, rows past M clamped to M - 1
    (computed, never stored: a partial block costs no separate kernel)."""
    return [f"long r{i} = (m0 + {i} < M ? m0 + {i} : M - 1) * {stride};" for i in range(rows)]


def nn_width(dev, dt, N):
    """The nn kernel's vector width for dtype dt and N columns: the device's native
    width where it is 512 bits and the wide blocks leave the edge kernel no more
    columns than the narrow ones (N % 32 < 16 floats), else 256 bits."""
    w = WIDE[dt]
    return w if dev.vector_width.get(dt, 0) >= w and N >= 2 * w and N % (2 * w) < w \
        else WIDTH[dt]


def nn_rows(dt, w):
    """(rows of the nn block, k values a loop trip). 256-bit float32 (16 ymm
    registers): 6 rows, 12 accumulators, one k a trip (one PoCL thread on Zen 4,
    128x512x512: 0.64-0.65 ms against 0.68-0.69 for 4 rows, two k a trip; 5 rows
    0.67, 6 rows two k 0.68, spilling). Else 4 rows, two k a trip (the 512-bit blocks,
    measured on an AVX-512 build; float64 not re-measured)."""
    return (NN_ROWS, 1) if dt == "float32" and w == WIDTH[dt] else (ROWS, 2)


def nn_spec(dt, db, bias, w=None, mask=False):
    """mask: the ReLU-backward epilogue (_MASK) on each stored vector, h read in place
    (its rows contiguous)."""
    c, w = CTYPE[dt], w or WIDTH[dt]
    vec = f"{c}{w}"
    rows, unroll = nn_rows(dt, w)
    sig, types = _params(dt, db, (), bias, mask)
    add = (" + e_0", " + e_1") if bias else ("", "")

    def value(i, v):          # block row i, vector v, as stored
        x = f"c{i}_{v}{add[v]}"
        return _MASK.format(v=f"({x})", c=vec, h=f"h{i}_{v}") if mask else x

    # the mask's loads all before the first store (a store might alias h: a load after
    # it waits, and the misses of h's rows came one after the other). One PoCL thread,
    # 128x512x512, load 6: still 4-8% slower than the plain kernel (p25 of 80, device
    # time; h's 256 KB through the caches), about what the separate le + where cost;
    # loading h before the k loop (spilled) or prefetching it there: no better
    h_loads = [f"__global const {c}* hp = p_h + o_h + nb * {2 * w};",
               *(f"{vec} h{i}_0 = DT_LOAD(hp + (m0 + {i} < M ? m0 + {i} : M - 1) * shm), "
                 f"h{i}_1 = DT_LOAD(hp + (m0 + {i} < M ? m0 + {i} : M - 1) * shm + {w});"
                 for i in range(rows))] if mask else []

    def trip(n):              # n k values: two vector loads of b's row, a broadcast of a
        out = []
        for u in range(n):
            at = f" + {u} * sbk" if u else ""
            out += [f"  {{ {vec} b_0 = DT_LOAD(bp{at}), b_1 = DT_LOAD(bp{at} + {w});",
                    *(f"    {{ {c} x = ap[r{i}{f' + {u} * sak' if u else ''}]; c{i}_0 += x * b_0; "
                      f"c{i}_1 += x * b_1; }}" for i in range(rows)), "  }"]
        return out
    body = ["long mb = get_global_id(0), nb = get_global_id(1);", *_bases(db, "get_global_id(2)"),
            f"long m0 = mb * {rows};", *_rows(c, "sam", rows),
            f"__global const {c}* ap = pa0;",
            f"__global const {c}* bp = pb0 + nb * {2 * w};",
            *(f"{vec} c{i}_{v} = ({vec})0;" for i in range(rows) for v in range(2)),
            "long k = 0;",
            f"for (; k + {unroll} <= K; k += {unroll}) {{", *trip(unroll),
            f"  ap += {unroll} * sak; bp += {unroll} * sbk;",
            "}",
            *(["if (k < K) {", *trip(1), "}"] if unroll > 1 else []),
            f"__global {c}* cp = pc0 + m0 * N + nb * {2 * w};",
            (f"{vec} e_0 = DT_LOAD(p_bias + o_bias + nb * {2 * w}), e_1 = DT_LOAD(p_bias + o_bias + "
             f"nb * {2 * w} + {w});" if bias else ""),
            *h_loads,
            *(f"if (m0 + {i} < M) {{ DT_STORE({value(i, 0)}, cp + {i} * N); "
              f"DT_STORE({value(i, 1)}, cp + {i} * N + {w}); }}" for i in range(rows))]
    name = kernel_name("mmnn", dt, db, "bias" if bias else "", "" if w == WIDTH[dt] else f"w{w}",
                       "mask" if mask else "")
    return KernelSpec(name, _program(dt, name, sig, body, w), types, f"matmul ({dt})")


def nt_spec(dt, db, bias, relu=False):
    c, w = CTYPE[dt], WIDTH[dt]
    vec = f"{c}{w}"
    pairs = [(i, j) for i in range(ROWS) for j in range(NT_COLS)]
    lanes = [f"s{x:x}" for x in range(w)]
    body = ["long nb = get_global_id(0), mb = get_global_id(1);", *_bases(db, "get_global_id(2)"),
            f"long m0 = mb * {ROWS}, n0 = nb * {NT_COLS};", *_rows(c, "sam"),
            *(f"long s{j} = (n0 + {j} < N ? n0 + {j} : N - 1) * sbn;" for j in range(NT_COLS)),
            *(f"{vec} c{i}_{j} = ({vec})0;" for i, j in pairs),
            f"long kv = K - K % {w}, k = 0;",
            f"for (; k < kv; k += {w}) {{",
            *(f"  {vec} a_{i} = DT_LOAD(pa0 + r{i} + k);" for i in range(ROWS)),
            *(f"  {{ {vec} y = DT_LOAD(pb0 + s{j} + k);" + "".join(
                f" c{i}_{j} += a_{i} * y;" for i in range(ROWS)) + " }" for j in range(NT_COLS)),
            "}",
            *(f"{c} t{i}_{j} = " + " + ".join(f"c{i}_{j}.{x}" for x in lanes) + ";" for i, j in pairs),
            "for (; k < K; k++) {",
            *(f"  t{i}_{j} += pa0[r{i} + k] * pb0[s{j} + k];" for i, j in pairs),
            "}",
            "__global " + c + "* cp = pc0 + m0 * N + n0;",
            *(f"if (m0 + {i} < M && n0 + {j} < N) {{ {c} v = t{i}_{j}"
              + (f" + p_bias[o_bias + n0 + {j}];" if bias else ";")
              + (_RELU.format(c=c) if relu else "") + f" cp[{i} * N + {j}] = v; }}"
              for i, j in pairs)]
    sig, types = _params(dt, db, (), bias)
    name = kernel_name("mmnt", dt, db, "bias" if bias else "", "relu" if relu else "")
    return KernelSpec(name, _program(dt, name, sig, body), types, f"matmul ({dt})")


def edge_spec(dt, db, bias, mask=False):
    """One output per work-item over the rectangle [m0, m0 + rows) x [n0, n0 + cols)."""
    c = CTYPE[dt]
    sig, types = _params(dt, db, ("m0", "n0", "cols", "items"), bias, mask)
    body = ["long i = get_global_id(0); if (i >= items) return;", *_bases(db, "get_global_id(1)"),
            "long m = m0 + i / cols, n = n0 + i % cols;",
            f"__global const {c}* ap = pa0 + m * sam;",
            f"__global const {c}* bp = pb0 + n * sbn;",
            f"{c} acc = 0;",
            "for (long k = 0; k < K; k++) acc += ap[k * sak] * bp[k * sbk];",
            "acc = acc" + (" + p_bias[o_bias + n];" if bias else ";"),
            f"pc0[m * N + n] = " + (f"p_h[o_h + m * shm + n] <= ({c})0 ? ({c})0 : acc;" if mask else "acc;")]
    name = kernel_name("mmedge", dt, db, "bias" if bias else "", "mask" if mask else "")
    return KernelSpec(name, _program(dt, name, sig, body), types, f"matmul ({dt})")


def _local(grid, want):
    """A work-group size over grid's first dim leaving at least `want` groups (PoCL's
    own choice makes one group per thread, which a busy core holds back); a power of
    two up to 64, as PoCL builds a kernel per work-group size."""
    l0 = gcd(grid[0], 64)
    while l0 > 1 and (grid[0] // l0) * grid[1] * grid[2] < want:
        l0 //= 2
    return (l0, 1, 1)


def _nt_packed(dev, dt, M, N, K):
    """Whether an "nt" product goes to the packed kernels instead: on 512-bit devices,
    where their 8x16 block wins (one PoCL thread, device time, nt against packed:
    128x512x512 0.92 / 0.71 ms, 2048x64x256 1.92 / 0.81, 64x64x512 0.12 / 0.06,
    128 batches of 64x16x64 1.27 / 0.52), and float32 on 256-bit ones, where the 6x16
    block does (PoCL on Zen 4, one thread, with the packs: 128x512x512 0.83-1.11 /
    0.71-0.87; 128 batches of 64x64x16, the attention scores, 1.56-1.88 / 0.30-0.38;
    2048x64x64 0.55-1.38 / 0.22-0.25; 8192x16x64 0.41-0.58 / 0.32-0.38; 2048x64x256
    0.89-1.22 / 0.98-1.01 and 64x64x512 0.047-0.056 / 0.054-0.066 about even), except
    for a narrow b (N < 16: 64x512x10 0.010 / 0.028) and long dot products
    (K >= NT_LONG_K: 32x5120x144 0.96 / 1.01). float64 on 256-bit devices: not measured,
    direct."""
    wide = dev.vector_width.get(dt, 0) >= WIDE[dt]
    return (wide or dt == "float32") and N >= 2 * WIDTH[dt] and K < NT_LONG_K


def direct(out, a, b, batch, bstrides, M, N, K, bias=None, relu=False, mask=None):
    """Run the matmul with the in-place kernels and return True, or return False
    (nothing launched) when dtype or layout is not theirs. bias: None, or a
    contiguous (N,) handle added to every row (F.linear's epilogue); relu: rectify
    before the store (the nt kernel only: other layouts return False, and the packed
    micro-kernel rectifies); mask: None, or the (M, N) handle of a ReLU's result,
    its rows contiguous, zeroing the product where it is <= 0 (the nn kernel without
    batch dims only: else False)."""
    dt = out.dtype
    if dt not in WIDTH or M * N * K > MAX_WORK:
        return False
    if mask is not None and (batch or mask.dtype != dt or tuple(mask.shape[-2:]) != (M, N)
                             or (mask.strides[-1] != 1 and N > 1)):
        return False
    sam, sak = a.strides[-2:]
    sbk, sbn = b.strides[-2:]
    dev = out.dev
    w = nn_width(dev, dt, N)
    lanes = 2 * w
    if sbn == 1 and N >= lanes:
        if sam == 1 and sak != 1 and M > 1 and K > 1 and M * N * K >= MIN_PACKED_T:
            return False                 # a column-major: the packed kernels (see above)
        kind = "nn"
    elif sak == 1 and sbk == 1:
        if _nt_packed(out.dev, dt, M, N, K):
            return False
        kind = "nt"
    else:
        return False
    db = len(batch)
    Bt = prod(batch)
    # (K = 0 leaves a and b without a buffer; OpenCL 1.2 takes no null buffers)
    common = [a.buf or dev.dummy, a.offset, b.buf or dev.dummy, b.offset, out.buf, out.offset,
              *batch, *bstrides[0], *bstrides[1], M, N, K, sam, sak, sbk, sbn]
    fused = bias is not None
    tail = [bias.buf, bias.offset] if fused else []
    MB = -(-M // (nn_rows(dt, w)[0] if kind == "nn" else ROWS))
    if kind == "nn":
        NB = N // lanes
        grid, N0 = (MB, NB, Bt), NB * lanes
    else:
        NB = -(-N // NT_COLS)
        grid, N0 = (NB, MB, Bt), N
    if (relu and kind != "nt") or (mask is not None and kind != "nn"):
        return False
    masked = mask is not None
    if masked:
        tail = tail + [mask.buf, mask.offset, mask.strides[-2]]
    if kind == "nn":
        kernel, what = dev.kernel(("mmnn", dt, db, fused, w) + (("mask",) if masked else ()),
                                  lambda: nn_spec(dt, db, fused, w, masked))
    else:
        key = ("mmnt", dt, db, fused) + (("relu",) if relu else ())
        kernel, what = dev.kernel(key, lambda: nt_spec(dt, db, fused, relu))
    dev.launch(kernel, grid, _local(grid, 8 * dev.compute_units), common + tail, what)
    if N0 < N:                   # nn: the columns past the last full block
        items = M * (N - N0)
        kernel, what = dev.kernel(("mmedge", dt, db, fused) + (("mask",) if masked else ()),
                                  lambda: edge_spec(dt, db, fused, masked))
        dev.launch(kernel, (items, Bt), None, common + [0, N0, N - N0, items] + tail, what)
    return True
