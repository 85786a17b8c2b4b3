"""dtype names shared by the frontend and backends (plain strings, no numpy)."""

DTYPE_NAMES = ("bool", "uint8", "int8", "int16", "int32", "int64",
               "float16", "bfloat16", "float32", "float64")
FLOATING = frozenset({"float16", "bfloat16", "float32", "float64"})
INTEGRAL = frozenset({"uint8", "int8", "int16", "int32", "int64"})
SIGNED = frozenset({"int8", "int16", "int32", "int64"}) | FLOATING
ITEMSIZE = {"bool": 1, "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8,
            "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8,
            "complex64": 8, "complex128": 16, "uint16": 2, "uint32": 4, "uint64": 8,
            "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e4m3fnuz": 1, "float8_e5m2fnuz": 1,
            "float8_e8m0fnu": 1}
# complex dtypes: a backend lists them in DeviceInfo.dtypes only if it computes in them
# (DTYPE_NAMES stays the real dtypes every backend is checked on)
COMPLEX = ("complex64", "complex128")
# PyTorch's "bare" dtypes: stored, copied, cast, viewed and indexed, but computed in by
# only a few kernels (PyTorch 2.13 has no add for uint16, no sum for float8). A backend
# lists them in DeviceInfo.dtypes only if it stores them; the conformance suite's dtype
# axis stays DTYPE_NAMES (+ COMPLEX), so they add nothing to its op x dtype table.
UNSIGNED = ("uint16", "uint32", "uint64")
FLOAT8 = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu")
BARE = UNSIGNED + FLOAT8
ALL_DTYPE_NAMES = DTYPE_NAMES + COMPLEX + BARE
