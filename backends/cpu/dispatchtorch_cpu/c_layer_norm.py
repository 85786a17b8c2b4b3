"""layer_norm and its backward over trailing dims of contiguous float32/float64 arrays as
C loops a row (c_compiler.py), rows split over the pool (parallel.py) when large.

composites.py's forward and norm_backward.py's backward make a dozen numpy passes a
block (row sums by BLAS gemv or einsum, then whole-block products): on the tiny
transformer's (32, 64, 64) about 0.4 and 1.1 ms a call where PyTorch's row loops take
0.13 and 0.2 ms. Here a row is read for its mean, again for its variance, and once
more to write the result (backward: the two row dot products, then grad x, and grad
weight / grad bias accumulated down the rows), all in L1.

The same formulas in the same float operations as the numpy kernels (-ffp-contract=off:
no fused multiply-add): forward (x - mean) / sqrt(var + eps) * w + b; backward
rstd (g w - mean(g w) - xhat mean(g w xhat)) with rstd = 1 / sqrt(var + eps). Only the
row sums add in SIMD lanes instead of BLAS's or einsum's order, and grad weight / grad
bias add groups of GROUP rows in sequence, the groups' sums to a task's total and the
tasks' totals in task order: the bits differ from the numpy kernels' in the last
places (a (32, 64, 64) float32 input's grad weight / grad bias within 3.8e-5 / 2.8e-5
of float64, the numpy kernel's 2.6e-4 / 5.1e-5, PyTorch's 8.4e-5 / 8.8e-5).
Without a C compiler the numpy kernels run.
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np

from . import c_compiler
from . import parallel as P

MIN_ELEMENTS = 4096
ROW_BLOCK = 1 << 17     # elements a pool task (whole rows); below THRESHOLD one task
GROUP = 32              # rows whose weight / bias gradients are summed before the total

_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}

_KERNEL = """
static void stats_{c}(const {c} *xr, int64_t n, {c} eps, {c} *mean, {c} *sd) {{
  {c} s = 0;
  #pragma omp simd reduction(+:s)
  for (int64_t j = 0; j < n; j++) s += xr[j];
  const {c} m = s / ({c})n;
  {c} v = 0;
  #pragma omp simd reduction(+:v)
  for (int64_t j = 0; j < n; j++) {{ const {c} d = xr[j] - m; v += d * d; }}
  v /= ({c})n;
  v += eps;
  *mean = m;
  *sd = sqrt{f}(v);
}}

void forward_{c}({c} *o, const {c} *x, const {c} *w, const {c} *b, int64_t rows, int64_t n,
                 {c} eps) {{
  for (int64_t r = 0; r < rows; r++) {{
    const {c} *xr = x + r * n;
    {c} *orow = o + r * n;
    {c} m, sd;
    stats_{c}(xr, n, eps, &m, &sd);
    if (w && b) {{
      #pragma omp simd
      for (int64_t j = 0; j < n; j++) {{ {c} y = (xr[j] - m) / sd; y *= w[j]; orow[j] = y + b[j]; }}
    }} else if (w) {{
      #pragma omp simd
      for (int64_t j = 0; j < n; j++) {{ {c} y = (xr[j] - m) / sd; y *= w[j]; orow[j] = y + 0; }}
    }} else if (b) {{
      #pragma omp simd
      for (int64_t j = 0; j < n; j++) orow[j] = (xr[j] - m) / sd + b[j];
    }} else {{
      #pragma omp simd
      for (int64_t j = 0; j < n; j++) orow[j] = (xr[j] - m) / sd + 0;
    }}
  }}
}}

/* gx (or NULL), gw and gb accumulators (or NULL: not asked for); w: ones without a weight
   (g * 1 is g's bits) */
void backward_{c}({c} *gx, {c} *gw, {c} *gb, const {c} *g, const {c} *x, const {c} *w,
                  int64_t rows, int64_t n, {c} eps) {{
  /* grad weight / grad bias: GROUP rows summed in sequence, each group's sum then added
     to the total (a two-level sum: the error of GROUP + rows / GROUP terms, not rows) */
  {c} *lw = gw ? calloc(n, sizeof({c})) : NULL, *lb = gb ? calloc(n, sizeof({c})) : NULL;
  if ((gw && !lw) || (gb && !lb)) {{ free(lw); free(lb); lw = gw; lb = gb; }}
  for (int64_t r = 0; r < rows; r++) {{
    const {c} *xr = x + r * n, *gr = g + r * n;
    {c} m, sd;
    stats_{c}(xr, n, eps, &m, &sd);
    const {c} rstd = 1 / sd;
    if (gx) {{
      {c} a = 0, bb = 0;
      #pragma omp simd reduction(+:a) reduction(+:bb)
      for (int64_t j = 0; j < n; j++) {{
        const {c} xh = (xr[j] - m) * rstd;
        const {c} gh = gr[j] * w[j];
        a += gh;
        bb += gh * xh;
      }}
      const {c} k = rstd / ({c})n;
      a *= k;
      bb *= k;
      {c} *gxr = gx + r * n;
      #pragma omp simd
      for (int64_t j = 0; j < n; j++) {{
        const {c} xh = (xr[j] - m) * rstd;
        const {c} gh = gr[j] * w[j];
        {c} t = gh * rstd;
        t -= a;
        gxr[j] = t - xh * bb;
      }}
    }}
    if (gw) {{
      #pragma omp simd
      for (int64_t j = 0; j < n; j++) lw[j] += gr[j] * ((xr[j] - m) * rstd);
    }}
    if (gb) {{
      #pragma omp simd
      for (int64_t j = 0; j < n; j++) lb[j] += gr[j];
    }}
    if ((r + 1) % GROUP == 0 || r == rows - 1) {{
      if (gw && lw != gw) {{
        #pragma omp simd
        for (int64_t j = 0; j < n; j++) {{ gw[j] += lw[j]; lw[j] = 0; }}
      }}
      if (gb && lb != gb) {{
        #pragma omp simd
        for (int64_t j = 0; j < n; j++) {{ gb[j] += lb[j]; lb[j] = 0; }}
      }}
    }}
  }}
  if (lw != gw) free(lw);
  if (lb != gb) free(lb);
}}
"""


def source():
    """The C source of the kernels (the test reads it)."""
    return (f"#include <math.h>\n#include <stdint.h>\n#include <stdlib.h>\n#define GROUP {GROUP}\n"
            + "".join(_KERNEL.format(c=c, f="f" if c == "float" else "")
                      for c in _TYPES.values()))


_lock = threading.Lock()
_kernels: dict = {}
_loaded = []            # [True] once kernels() has looked (the table may stay empty)


def kernels():
    """{dtype: (forward, backward) ctypes functions}, or {} without a compiler."""
    if not _loaded:
        with _lock:
            if not _loaded:
                found = {}
                lib = c_compiler.load(source()) if c_compiler.compiler() else None
                if lib is not None:
                    for dtype, c in _TYPES.items():
                        real = ctypes.c_float if c == "float" else ctypes.c_double
                        fw, bw = getattr(lib, f"forward_{c}"), getattr(lib, f"backward_{c}")
                        fw.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int64] * 2 + [real]
                        bw.argtypes = [ctypes.c_void_p] * 6 + [ctypes.c_int64] * 2 + [real]
                        fw.restype = bw.restype = None
                        found[dtype] = (fw, bw)
                _kernels.update(found)
                _loaded.append(True)
    return _kernels


def _ptr(a):
    return None if a is None else a.ctypes.data


def _affine_ok(a, dtype, n):
    return a is None or (a.dtype == dtype and a.size == n and a.flags.c_contiguous)


def _apart(a, b):
    """Whether a and b (contiguous) do not overlap in memory."""
    pa, pb = a.ctypes.data, b.ctypes.data
    return pa + a.nbytes <= pb or pb + b.nbytes <= pa


def applies(x, arrays, n, weight, bias, written=None):
    """Whether the C loops take the call: float32/float64 x of MIN_ELEMENTS or more, the
    other arrays (grad output, grad weight / bias) and `written` (out, or grad x)
    contiguous and of its dtype, rows of n > 0, and `written` apart from x and the
    arrays: the loops read rows of x and g again after writing that row of out or gx."""
    others = tuple(arrays) + (() if written is None else (written,))
    return (x.size >= MIN_ELEMENTS and n > 0 and x.dtype in _TYPES and x.flags.c_contiguous
            and all(a.dtype == x.dtype and a.flags.c_contiguous for a in others)
            and _affine_ok(weight, x.dtype, n) and _affine_ok(bias, x.dtype, n)
            and (written is None or all(_apart(written, a) for a in (x,) + tuple(arrays)))
            and x.dtype in kernels())


def _tasks(rows, n, size):
    step = max(1, ROW_BLOCK // n)
    count = -(-rows // step)
    if size < P.THRESHOLD or P.POOL.threads == 1:
        return rows, 1
    return step, count


def forward(out, x, weight, bias, n, eps):
    """out = layer_norm of x over its trailing n elements a row; applies() must hold."""
    fn = _kernels[x.dtype][0]
    rows = x.size // n
    po, px, pw, pb = out.ctypes.data, x.ctypes.data, _ptr(weight), _ptr(bias)
    step, count = _tasks(rows, n, x.size)
    if count == 1:
        fn(po, px, pw, pb, rows, n, eps)
        return
    size = step * n * x.itemsize
    P.POOL.run(count, lambda i: fn(po + i * size, px + i * size, pw, pb,
                                   min(step, rows - i * step), n, eps))


def backward(gx, gw, gb, g, x, weight, n, eps):
    """gx (or None) = layer_norm's input gradient, gw / gb (or None) = the weight and
    bias gradients (flat, n each); applies() must hold for x and g (and gx)."""
    fn = _kernels[x.dtype][1]
    rows = x.size // n
    step, count = _tasks(rows, n, x.size)
    parts = [(np.zeros(n, x.dtype) if gw is not None else None,
              np.zeros(n, x.dtype) if gb is not None else None) for _ in range(count)]
    w = np.ones(n, x.dtype) if weight is None else weight
    pgx, pg, px, pw = _ptr(gx), g.ctypes.data, x.ctypes.data, w.ctypes.data
    size = step * n * x.itemsize

    def part(i):
        off = i * size
        fn(None if pgx is None else pgx + off, _ptr(parts[i][0]), _ptr(parts[i][1]),
           pg + off, px + off, pw, min(step, rows - i * step), n, eps)
    if count == 1:
        part(0)
    else:
        P.POOL.run(count, part)
    for k, out in ((0, gw), (1, gb)):
        if out is not None:
            total = parts[0][k]
            for p in parts[1:]:
                total += p[k]
            np.copyto(out, total)
