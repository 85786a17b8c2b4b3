"""softmax, log_softmax and softmax_backward over the last axis of contiguous
float32/float64 arrays as one C loop a row (c_compiler.py), rows split over the pool
(parallel.py).

numpy's route is four whole-array passes, its row maximum a reduction along a short
axis (the attention scores' rows of 64: numpy's slowest inner loop): 2.5-3 ms for a
(32, 4, 64, 64) float32 softmax where PyTorch's vectorised row loop takes 0.5 ms. Here
each row is read for its maximum, then exp(x - max) is written and summed in SIMD
lanes, then divided (log_softmax: x - max - log(sum)), while the row is in L1.

softmax_backward ((g - sum(g y)) y a row, softmax_backward.py's formula and sign rule)
was an einsum of the row dots and two passes: 0.4-0.6 ms on (32, 4, 64, 64) float32
against PyTorch's 0.21 ms.

Not numpy's bits: exp is libmvec's (within an ulp of numpy's), and the row sum adds in
SIMD lanes rather than numpy's pairwise order (as PyTorch's does); within the softmax
tolerances of the tests and the conformance suite. NaN and infinities give numpy's
and PyTorch's values (a row holding NaN or +inf is NaN, a row of -inf is NaN).
Without a C compiler composites.py runs numpy's passes.
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np

from . import c_compiler
from . import parallel as P

MIN_ELEMENTS = 4096     # below this numpy's few calls on a small array cost about the same
ROW_BLOCK = 1 << 16     # elements a pool task (whole rows)

_TYPES = {np.dtype(np.float32): ("float", "f"), np.dtype(np.float64): ("double", "")}

_KERNEL = """
/* A masked score (x = -inf: attention's causal mask) gets exp's exact 0 without being
   passed to exp: libmvec's vector exp sends a whole vector to its scalar fallback when
   one lane is out of its fast range, which made a causal (32, 4, 64, 64) softmax 3.7 ms
   against 0.9 ms unmasked. The argument is stored first and exp reads it back: written
   in one loop, gcc sees the select's discarded lanes and passes exp the -inf anyway. */
void softmax_{c}({c} *o, const {c} *x, int64_t rows, int64_t n, int take_log) {{
  for (int64_t r = 0; r < rows; r++) {{
    const {c} *xr = x + r * n;
    {c} *orow = o + r * n;
    {c} m = -INFINITY;
    int nan = 0;
    #pragma omp simd reduction(max:m) reduction(|:nan)
    for (int64_t j = 0; j < n; j++) {{
      const {c} v = xr[j];
      nan |= v != v;
      m = v > m ? v : m;
    }}
    if (nan) m = NAN;
    {c} s = 0;
    #pragma omp simd
    for (int64_t j = 0; j < n; j++) {{
      const {c} d = xr[j] - m;
      orow[j] = d == -INFINITY ? 0 : d;
    }}
    if (take_log) {{
      #pragma omp simd reduction(+:s)
      for (int64_t j = 0; j < n; j++) {{
        const {c} e = exp{f}(orow[j]);
        s += xr[j] - m == -INFINITY ? 0 : e;
      }}
      const {c} ls = log{f}(s);
      #pragma omp simd
      for (int64_t j = 0; j < n; j++) {{ const {c} d = xr[j] - m; orow[j] = d - ls; }}
    }} else {{
      #pragma omp simd reduction(+:s)
      for (int64_t j = 0; j < n; j++) {{
        const {c} e0 = exp{f}(orow[j]);
        const {c} e = xr[j] - m == -INFINITY ? 0 : e0;
        orow[j] = e;
        s += e;
      }}
      #pragma omp simd
      for (int64_t j = 0; j < n; j++) orow[j] /= s;
    }}
  }}
}}

/* softmax_backward: (g - sum(g y)) y a row; a row sum of zero whose products all have
   the sign bit set is -0.0, as PyTorch's last-dim kernel (which starts from the first
   product) gives it */
void softmax_backward_{c}({c} *o, const {c} *g, const {c} *y, int64_t rows, int64_t n) {{
  for (int64_t r = 0; r < rows; r++) {{
    const {c} *gr = g + r * n, *yr = y + r * n;
    {c} *orow = o + r * n;
    {c} s = 0;
    #pragma omp simd reduction(+:s)
    for (int64_t j = 0; j < n; j++) s += gr[j] * yr[j];
    if (s == 0) {{
      int neg = 1;
      for (int64_t j = 0; j < n && neg; j++) neg = signbit(gr[j] * yr[j]) != 0;
      if (neg) s = -s;
    }}
    #pragma omp simd
    for (int64_t j = 0; j < n; j++) {{ const {c} d = gr[j] - s; orow[j] = d * yr[j]; }}
  }}
}}
"""


def source():
    """The C source of the kernels (the test reads it)."""
    decl = "".join(f"#pragma omp declare simd notinbranch\n{c} exp{f}({c});\n"
                   for c, f in _TYPES.values())
    return ("#include <math.h>\n#include <stdint.h>\n" + decl
            + "".join(_KERNEL.format(c=c, f=f) for c, f in _TYPES.values()))


_lock = threading.Lock()
_kernels: dict = {}
_loaded = []            # [True] once kernels() has looked (the table may stay empty)


def kernels():
    """{dtype: (softmax (out, x, rows, n, log), softmax_backward (out, g, y, rows, n))}
    ctypes functions, or {} (no compiler or no vector exp in libmvec: the row loop
    would be scalar)."""
    if not _loaded:
        with _lock:
            if not _loaded:
                found = {}
                simd = c_compiler.simd_functions() if c_compiler.compiler() else set()
                if {"expf", "exp"} <= simd:
                    # -fno-trapping-math: gcc leaves a loop with a float compare scalar
                    # otherwise; it changes no value
                    lib = c_compiler.load(source(), extra_flags=("-fno-trapping-math",))
                    if lib is not None:
                        for dtype, (c, _) in _TYPES.items():
                            fn = getattr(lib, f"softmax_{c}")
                            fn.argtypes = [ctypes.c_void_p] * 2 + [ctypes.c_int64] * 2 + [ctypes.c_int]
                            bw = getattr(lib, f"softmax_backward_{c}")
                            bw.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int64] * 2
                            fn.restype = bw.restype = None
                            found[dtype] = (fn, bw)
                _kernels.update(found)
                _loaded.append(True)
    return _kernels


def applies(out, x, dim):
    """Whether this kernel takes the call: the last axis of a large contiguous float32 or
    float64 x into a contiguous out of its dtype that does not overlap x."""
    return (x.size >= MIN_ELEMENTS and x.ndim >= 1 and dim % x.ndim == x.ndim - 1
            and x.dtype in _TYPES and out.dtype == x.dtype and x.flags.c_contiguous
            and out.flags.c_contiguous and apart(out, x) and x.dtype in kernels())


def apart(out, x):
    """Whether out's memory and x's (contiguous, of one size) do not overlap: the loops
    read a row of x again after writing that row of out."""
    return abs(out.ctypes.data - x.ctypes.data) >= x.nbytes


def run(out, x, log):
    """out = softmax (log: log_softmax) of x along its last axis; applies() must hold."""
    fn = _kernels[x.dtype][0]
    po, px, n = out.ctypes.data, x.ctypes.data, x.shape[-1]
    _by_rows(x, lambda off, rows: fn(po + off, px + off, rows, n, log))


def applies_backward(out, g, y, dim):
    """Whether softmax_backward's C loop takes the call (as applies(), g of y's dtype
    and layout too)."""
    return (applies(out, y, dim) and g.dtype == y.dtype and g.flags.c_contiguous
            and g.shape == y.shape and apart(out, g))


def run_backward(out, g, y):
    """out = softmax_backward along the last axis; applies_backward() must hold."""
    fn = _kernels[y.dtype][1]
    po, pg, py, n = out.ctypes.data, g.ctypes.data, y.ctypes.data, y.shape[-1]
    _by_rows(y, lambda off, rows: fn(po + off, pg + off, py + off, rows, n))


def _by_rows(x, call):
    """call(byte offset, rows) over blocks of whole rows of x, on the pool when several."""
    n = x.shape[-1]
    rows = x.size // n
    step = max(1, ROW_BLOCK // n)
    tasks = -(-rows // step)
    if tasks == 1 or P.POOL.threads == 1:
        call(0, rows)
        return
    size = x.itemsize * n * step
    P.POOL.run(tasks, lambda i: call(i * size, min(step, rows - i * step)))
