"""The CUDA source of the fused kernels (`_fused.py`), as plain strings: the CPU tests
compile them with nvcc and run their arithmetic on the host without cupy or a GPU.

Each body is the `operation` of a cupy.ElementwiseKernel: the parameters by name, `i`
the element index, `T` the type placeholder.
"""

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
