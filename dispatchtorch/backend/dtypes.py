"""dtype names shared by the frontend and backends (plain strings, no numpy)."""

DTYPE_NAMES = ("bool", "uint8", "int8", "int16", "int32", "int64",
               "float16", "bfloat16", "float32", "float64")
FLOATING = frozenset({"float16", "bfloat16", "float32", "float64"})
INTEGRAL = frozenset({"uint8", "int8", "int16", "int32", "int64"})
SIGNED = frozenset({"int8", "int16", "int32", "int64"}) | FLOATING
ITEMSIZE = {"bool": 1, "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8,
            "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8,
            "complex64": 8, "complex128": 16}
# complex dtypes: a backend lists them in DeviceInfo.dtypes only if it computes in them
# (DTYPE_NAMES stays the real dtypes every backend is checked on)
COMPLEX = ("complex64", "complex128")
ALL_DTYPE_NAMES = DTYPE_NAMES + COMPLEX
