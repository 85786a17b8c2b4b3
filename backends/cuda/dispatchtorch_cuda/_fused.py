"""The few hand-written CUDA kernels, for where cupy has no one-pass function.

Each has an xp-op twin that the CPU-only tests run under numpy (`_bf16.py`); the GPU
tests check every kernel here against its twin. Keep this file small: a kernel
belongs here only when it replaces several passes over memory with one.
"""
from __future__ import annotations

import cupy

# bfloat16 bits -> float32: the bits are the float32's top half.
BF16_TO_F32_BODY = "f = __uint_as_float(((unsigned int)b) << 16);"

# float32 -> bfloat16 bits, round to nearest even; NaN keeps its sign and stays quiet.
F32_TO_BF16_BODY = (
    "unsigned int u = __float_as_uint(f);"
    "b = (f != f) ? (unsigned short)((u >> 16) | 0x40u)"
    " : (unsigned short)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);"
)

# where: one pass over any dtype (bfloat16 bits included) instead of two masked copies.
# An output aliasing `a` or `b` element for element is safe: each thread reads then writes.
WHERE_BODY = "out = c ? a : b;"

# relu with PyTorch's values (x <= 0 ? 0 : x, so NaN passes through), one pass instead of
# the decomposition's four (compare, zeros, two copies); float32 and float64.
RELU_BODY = "out = x <= (T)0 ? (T)0 : x;"

# scatter's product: each run of equal targets (sorted, stable) multiplied into its target
# in index order, one thread per run, so the rounding is the reference's sequential one
# (cupy has no atomic multiply). T is float32/float64 or an integer type (wrapping).
# (no `return`: cupy runs the body inside a grid-stride loop)
RUN_PRODUCT_BODY = (
    "if (i == 0 || ts[i] != ts[i - 1]) {"
    " const long long t = ts[i]; T acc = flat[t];"
    " for (long long j = i; j < count && ts[j] == t; ++j) acc = (T)(acc * vs[j]);"
    " flat[t] = acc; }"
)

where = cupy.ElementwiseKernel("bool c, T a, T b", "T out", WHERE_BODY, "dispatchtorch_where")
relu = cupy.ElementwiseKernel("T x", "T out", RELU_BODY, "dispatchtorch_relu")
run_product = cupy.ElementwiseKernel("raw int64 ts, raw T vs, int64 count", "raw T flat",
                                     RUN_PRODUCT_BODY, "dispatchtorch_run_product")
bf16_to_f32 = cupy.ElementwiseKernel("uint16 b", "float32 f", BF16_TO_F32_BODY,
                                     "dispatchtorch_bf16_to_f32")
f32_to_bf16 = cupy.ElementwiseKernel("float32 f", "uint16 b", F32_TO_BF16_BODY,
                                     "dispatchtorch_f32_to_bf16")
