"""dtype names, their numpy host types, value ranges and extreme values."""
from __future__ import annotations

import ml_dtypes
import numpy as np
from dispatchtorch.backend import BARE, DTYPE_NAMES, FLOAT8, FLOATING, INTEGRAL

ALL = tuple(DTYPE_NAMES)
NP = {n: np.dtype(ml_dtypes.bfloat16) if n == "bfloat16" else np.dtype(n) for n in ALL}
_BY_NP = {v: k for k, v in NP.items()}
# the bare dtypes (uint16-64, float8: docs/dtypes.md): only the contract's storage checks
# run on them, on a device that claims them; the op x dtype table stays ALL
BARE_NP = {n: np.dtype(getattr(ml_dtypes, n) if n in FLOAT8 else n) for n in BARE}


def bare_values(name) -> np.ndarray:
    """Every float8 bit pattern (NaNs, -0.0, extremes), or an unsigned type's extremes
    and a spread between, as a (16, k) array."""
    npd = BARE_NP[name]
    if name in FLOAT8:
        return np.arange(256, dtype=np.uint8).view(npd).reshape(16, 16)
    hi = int(np.iinfo(npd).max)
    return np.array([0, 1, 2, hi // 3, hi // 2, hi - 1, hi, 255, 256, 65535], dtype=npd) \
        .repeat(8).reshape(16, 5)
SHORT = {"bool": "bool", "uint8": "u8", "int8": "i8", "int16": "i16", "int32": "i32",
         "int64": "i64", "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64"}

# the dtype categories an OpDef declares, as the frontend accepts them
CATEGORIES = {
    "all": ALL,
    "numeric": tuple(n for n in ALL if n != "bool"),
    # a row's "float" rule is floats; an op that promotes integers and bool to the default
    # float dtype says so with promote="int_to_float" (registry.input_category: "all")
    "float": tuple(n for n in ALL if n in FLOATING),
    "int_float": tuple(n for n in ALL if n != "bool"),
    "integral": ("bool",) + tuple(n for n in ALL if n in INTEGRAL),
    "floating": tuple(n for n in ALL if n in FLOATING),
    "integer": tuple(n for n in ALL if n in INTEGRAL),
}


def expand(spec, where="") -> tuple:
    """A category name or an iterable of names -> the dtype names, canonical order."""
    if isinstance(spec, str):
        if spec in CATEGORIES:
            return CATEGORIES[spec]
        if spec in NP:
            return (spec,)
        raise ValueError(f"{where}: unknown dtype or category {spec!r}; expected one of "
                         f"{sorted(CATEGORIES)} or dtype names")
    names = tuple(getattr(d, "name", d) for d in spec)
    bad = [n for n in names if n not in NP]
    if bad:
        raise ValueError(f"{where}: unknown dtypes {bad}")
    return tuple(n for n in ALL if n in names)


def name_of(npdtype) -> str:
    return _BY_NP[np.dtype(npdtype)]


def junk(npdtype):
    """The filler around strided views: anything a kernel must never read."""
    name = name_of(npdtype)
    if name == "bool":
        return True
    if name in FLOATING:
        return np.nan
    return 77


def _default_range(name):
    if name in FLOATING:
        return -3.0, 3.0
    if name == "uint8":
        return 0, 9
    return -9, 9


def limits(name):
    if name in FLOATING:
        info = ml_dtypes.finfo(NP[name]) if name == "bfloat16" else np.finfo(NP[name])
        return float(info.min), float(info.max)
    info = np.iinfo(NP[name])
    return int(info.min), int(info.max)


def random(rng, shape, name, low=None, high=None):
    """Uniform random values of `shape`, as the dtype `name`."""
    shape = tuple(shape)
    if name == "bool":
        return rng.random(shape) < 0.5
    dlow, dhigh = _default_range(name)
    low = dlow if low is None else low
    high = dhigh if high is None else high
    if name in FLOATING:
        # float32 draws (half the work) unless the values are float64
        draw = np.float64 if name == "float64" else np.float32
        v = rng.random(shape, dtype=draw)
        v *= draw(high - low)
        v += draw(low)
        return v if v.dtype == NP[name] else v.astype(NP[name])
    lo, hi = limits(name)
    low, high = max(int(np.ceil(low)), lo), min(int(np.floor(high)), hi)
    if high < low:
        low = high = max(lo, min(hi, 0))
    return rng.integers(low, high, size=shape, endpoint=True, dtype=NP[name])


def special(name) -> np.ndarray:
    """Extreme values of a dtype, one of each."""
    if name == "bool":
        return np.array([False, True])
    if name in INTEGRAL:
        lo, hi = limits(name)
        vals = [lo, lo + 1, -1, 0, 1, hi - 1, hi] if lo < 0 else [0, 1, 2, hi - 1, hi]
        return np.array(vals, NP[name])
    info = ml_dtypes.finfo(NP[name]) if name == "bfloat16" else np.finfo(NP[name])
    big, tiny = float(info.max), float(info.tiny)
    sub = float(info.smallest_subnormal)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, big, -big, tiny, -tiny, sub, -sub,
            float(info.eps), 100.0, -100.0, np.inf, -np.inf, np.nan]
    return np.array(vals, np.float64).astype(NP[name])
