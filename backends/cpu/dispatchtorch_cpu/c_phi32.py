"""phi32.py's gelu and gelu' of float32 blocks as one C loop each (c_compiler.py).

phi32 evaluates x Phi(x) in 19 whole-block numpy passes plus a gathered tail: 2.8-3 ms
for a (32, 64, 256) block at one thread, where PyTorch's vectorised loop takes 0.5-0.7
ms. Here every element runs the same float32 operations in the same order in
registers (-ffp-contract=off: no fused multiply-add), the polynomial branch and the
tail both computed and one selected (built with -fno-trapping-math: otherwise gcc
treats the float comparisons of the selects as possible traps and leaves the loop
scalar, slower than numpy; the flag changes no value, only FP exception flags), so the polynomial branch (|x| < sqrt 2) gives
phi32's bits; the tail differs from them only through exp (glibc's libmvec `expf`
against numpy's, each within an ulp). The special values are phi32's.

None of it without a C compiler or without a vector expf in libmvec: gelu.py then
runs phi32's numpy passes.
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np

from . import c_compiler, phi32


def _poly(var, coeffs, name):
    """C lines of phi32._poly: r = var * c0 + c1, then r = r * var + c for the rest."""
    lines = [f"float {name} = {var} * {_lit(coeffs[0])};", f"{name} += {_lit(coeffs[1])};"]
    lines += [f"{name} = {name} * {var} + {_lit(c)};" for c in coeffs[2:]]
    return lines


def _lit(c):
    return f"{float(np.float32(c))!r}f"


def _shared():
    """Per element: z, large, the polynomial's r (T or D), and the tail's phi, ex."""
    return (["const float x = xs[i];", "const float z = x * x;"]
            + ["float t = fabsf(x) * " + _lit(phi32._P) + ";", "t += 1.0f;", "t = 1.0f / t;"]
            + _poly("t", phi32._M, "m")
            + ["m *= t;", "float ex = z * -0.5f;", "ex = expf(ex);", "m *= ex;", "m *= 0.5f;",
               "const float upper = 1.0f - m;", "const float phi = x < 0.0f ? m : upper;"])


def source():
    """The C source of both kernels (the test reads it)."""
    forward = (_shared() + _poly("z", phi32._T, "r")
               + ["r *= x;", "r += 0.5f;", "const float tail = phi * x;", "r *= x;",
                  "o[i] = z >= 2.0f ? tail : r;"])
    backward = (_shared() + _poly("z", phi32._D, "r")
                + ["r *= x;", "r += 0.5f;",
                   "float d = ex * " + _lit(phi32._INV_SQRT_2PI) + ";", "d *= x;", "d += phi;",
                   "const float gi = gs[i];", "d *= gi;", "r *= gi;",
                  "o[i] = z >= 2.0f ? d : r;"])
    body = "\n      ".join
    return f"""#include <math.h>
#include <stdint.h>
#pragma omp declare simd notinbranch
float expf(float);

void gelu(float *o, const float *xs, int64_t n) {{
  #pragma omp simd
  for (int64_t i = 0; i < n; i++) {{
      {body(forward)}
  }}
}}

void gelu_backward(float *o, const float *gs, const float *xs, int64_t n) {{
  #pragma omp simd
  for (int64_t i = 0; i < n; i++) {{
      {body(backward)}
  }}
}}
"""


_lock = threading.Lock()
_kernels: dict = {}
_loaded = []            # [True] once kernels() has looked (the table may stay empty)


def kernels():
    """{"gelu": f(o, x, n), "gelu_backward": f(o, g, x, n)} as ctypes functions of data
    pointers, or {} (no compiler, or no vector expf)."""
    if not _loaded:
        with _lock:
            if not _loaded:
                found = {}
                if c_compiler.compiler() is not None and "expf" in c_compiler.simd_functions():
                    lib = c_compiler.load(source(), extra_flags=("-fno-trapping-math",))
                    if lib is not None:
                        for name, args in (("gelu", 2), ("gelu_backward", 3)):
                            fn = getattr(lib, name)
                            fn.argtypes = [ctypes.c_void_p] * args + [ctypes.c_int64]
                            fn.restype = None
                            found[name] = fn
                _kernels.update(found)
                _loaded.append(True)
    return _kernels


def gelu(o, x):
    """o = x Phi(x) for 1-d contiguous float32 blocks (o may be x); kernels() non-empty.
    Elementwise, reading x[i] before writing o[i], so in place is safe."""
    _kernels["gelu"](o.ctypes.data, x.ctypes.data, x.size)


def gelu_backward(o, g, x):
    """o = g (Phi(x) + x phi(x)) for 1-d contiguous float32 blocks (o may be g or x)."""
    _kernels["gelu_backward"](o.ctypes.data, g.ctypes.data, x.ctypes.data, x.size)
