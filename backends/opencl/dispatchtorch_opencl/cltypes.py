"""How each dtype lives in OpenCL C: storage type, compute type, loads, stores, C casts.

float16 and bfloat16 are stored as 16-bit words and computed in float32 (rounded
once on store, to nearest even), the way the CPU reference computes them; this
needs no `cl_khr_fp16`, so every device gets both. bool is a byte holding 0 or 1.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

FLOATS = frozenset({"float16", "bfloat16", "float32", "float64"})
LOWP = frozenset({"float16", "bfloat16"})
INTS = frozenset({"uint8", "int8", "int16", "int32", "int64"})

# the C type of one stored element
STORAGE = {"bool": "uchar", "uint8": "uchar", "int8": "char", "int16": "short", "int32": "int",
           "int64": "long", "float16": "ushort", "bfloat16": "ushort", "float32": "float",
           "float64": "double"}
# the C type arithmetic happens in
COMPUTE = {**STORAGE, "float16": "float", "bfloat16": "float"}
# unsigned types wide enough for wrapping integer arithmetic without C's UB
WRAP = {"bool": "uint", "uint8": "uint", "int8": "uint", "int16": "uint", "int32": "uint",
        "int64": "ulong"}
BITS = {"bool": 8, "uint8": 8, "int8": 8, "int16": 16, "int32": 32, "int64": 64}
NUMPY = {"bool": np.dtype(np.bool_), "uint8": np.dtype(np.uint8), "int8": np.dtype(np.int8),
         "int16": np.dtype(np.int16), "int32": np.dtype(np.int32), "int64": np.dtype(np.int64),
         "float16": np.dtype(np.float16), "bfloat16": np.dtype(ml_dtypes.bfloat16),
         "float32": np.dtype(np.float32), "float64": np.dtype(np.float64)}
# what the element's bits look like to numpy (for fills and host transfers)
BITS_NUMPY = {**NUMPY, "float16": np.dtype(np.uint16), "bfloat16": np.dtype(np.uint16),
              "bool": np.dtype(np.uint8)}
ITEMSIZE = {k: v.itemsize for k, v in NUMPY.items()}
# the extreme values a max/min starts from
LOWEST = {"bool": "0", "uint8": "0", "int8": "(-128)", "int16": "(-32768)",
          "int32": "(-2147483647 - 1)", "int64": "(-9223372036854775807L - 1)",
          "float16": "(-INFINITY)", "bfloat16": "(-INFINITY)", "float32": "(-INFINITY)",
          "float64": "(-(double)INFINITY)"}
HIGHEST = {"bool": "1", "uint8": "255", "int8": "127", "int16": "32767", "int32": "2147483647",
           "int64": "9223372036854775807L", "float16": "INFINITY", "bfloat16": "INFINITY",
           "float32": "INFINITY", "float64": "((double)INFINITY)"}


def is_float(dt):
    return dt in FLOATS


def load(dt, ptr, index):
    """An expression of the compute type reading element `index` of `ptr`."""
    if dt == "float16":
        return f"dt_h2f({ptr}[{index}])"
    if dt == "bfloat16":
        return f"dt_b2f({ptr}[{index}])"
    return f"{ptr}[{index}]"


def store(dt, ptr, index, value, value_dt=None):
    """A statement writing `value` (of `value_dt`'s compute type, default dt's) to
    element `index` of `ptr`, rounding to nearest even for the 16-bit floats."""
    if dt == "float16":
        fn = "dt_d2h" if value_dt == "float64" else "dt_f2h"
        return f"{ptr}[{index}] = {fn}({value});"
    if dt == "bfloat16":
        v = f"(float)({value})" if value_dt == "float64" else value
        return f"{ptr}[{index}] = dt_f2b({v});"
    return f"{ptr}[{index}] = {value};"


def cast(expr, src, dst):
    """C cast semantics between compute types: float to int truncates (through long,
    so narrow targets wrap as on the host), anything to bool is `!= 0`."""
    if src == dst:
        return expr
    if dst == "bool":
        return f"(uchar)(({expr}) != 0)"
    cs, cd = COMPUTE[src], COMPUTE[dst]
    if src in FLOATS and dst in INTS:
        return f"(long)({expr})" if dst == "int64" else f"({cd})(long)({expr})"
    if cs == cd:
        return expr
    return f"({cd})({expr})"


def store_cast(dst, ptr, index, expr, src):
    """Store an expression of src's compute type into a dst element, C-cast."""
    if dst == "float16" and src == "float64":
        return store(dst, ptr, index, expr, "float64")
    return store(dst, ptr, index, cast(expr, src, dst))


def pointer(dt, const=False):
    return f"__global {'const ' if const else ''}{STORAGE[dt]}*"


# Helpers every program gets: 16-bit float conversions in plain integer/float code so
# they inline and vectorise (PoCL calls its builtins out of line), and the few math
# builtins that clang lowers to single instructions.
PREAMBLE = r"""
#ifdef __clang__
#define DT_SQRTF __builtin_sqrtf
#define DT_FLOORF __builtin_floorf
#define DT_CEILF __builtin_ceilf
#define DT_RINTF __builtin_rintf
#define DT_TRUNCF __builtin_truncf
#define DT_SQRT __builtin_sqrt
#define DT_FLOOR __builtin_floor
#define DT_CEIL __builtin_ceil
#define DT_RINT __builtin_rint
#define DT_TRUNC __builtin_trunc
#else
#define DT_SQRTF sqrt
#define DT_FLOORF floor
#define DT_CEILF ceil
#define DT_RINTF rint
#define DT_TRUNCF trunc
#define DT_SQRT sqrt
#define DT_FLOOR floor
#define DT_CEIL ceil
#define DT_RINT rint
#define DT_TRUNC trunc
#endif

inline float dt_h2f(ushort h) {
    uint e = ((uint)h >> 10) & 0x1fu, m = (uint)h & 0x3ffu;
    uint s = ((uint)h & 0x8000u) << 16;
    uint bits = (e == 0u) ? as_uint((float)m * 0x1.0p-24f)
              : (e == 31u) ? (0x7f800000u | (m << 13)) : (((e + 112u) << 23) | (m << 13));
    return as_float(bits | s);
}

inline ushort dt_f2h(float f) {
    uint x = as_uint(f);
    uint sign = x & 0x80000000u;
    x ^= sign;
    uint big = (x > 0x7f800000u) ? 0x7e00u : 0x7c00u;
    uint sub = as_uint(as_float(x) + 0.5f) - 0x3f000000u;
    uint nrm = (x + 0xc8000fffu + ((x >> 13) & 1u)) >> 13;
    uint o = (x >= 0x47800000u) ? big : (x < 0x38800000u) ? sub : nrm;
    return (ushort)(o | (sign >> 16));
}

inline float dt_b2f(ushort b) { return as_float((uint)b << 16); }

inline ushort dt_f2b(float f) {
    uint x = as_uint(f);
    return (ushort)(((x & 0x7fffffffu) > 0x7f800000u) ? ((x >> 16) | 0x40u)
                                                      : ((x + 0x7fffu + ((x >> 16) & 1u)) >> 16));
}
"""

FP64_PREAMBLE = r"""
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
inline ushort dt_d2h(double d) {
    ushort r;
    vstore_half_rte(d, 0, (__private half*)&r);
    return r;
}
"""


def preamble(dtypes):
    """The helpers a program over these dtypes needs."""
    return (FP64_PREAMBLE if "float64" in dtypes else "") + PREAMBLE


def vector_io(ctype, width):
    """DT_LOAD(p) / DT_STORE(v, p): `width` elements at any address as one vector.
    PoCL's vloadn/vstoren are out-of-line calls (which spill every vector register
    around them), so clang compilers get a vector type aligned like its element;
    others the builtins."""
    return (f"#ifdef __clang__\ntypedef {ctype} dt_vu __attribute__((ext_vector_type({width}), "
            f"aligned(sizeof({ctype}))));\n"
            "#define DT_LOAD(p) (*(__global const dt_vu*)(p))\n"
            "#define DT_STORE(v, p) (*(__global dt_vu*)(p) = (v))\n"
            f"#else\n#define DT_LOAD(p) vload{width}(0, p)\n#define DT_STORE(v, p) vstore{width}(v, 0, p)\n"
            "#endif\n")
