"""Casts to and from the float8 dtypes, rounded as PyTorch's c10 types round.

ml_dtypes' casts are correctly rounded from float32 but differ from c10 at the edges:
c10 converts every source to float32 first (so float64 rounds twice), saturates
float8_e4m3fn overflow to +-448 instead of NaN, writes e5m2 NaN as 0x7f / 0xff, and
builds float8_e8m0fnu (an exponent only) from |x|'s exponent, rounding half up
(but 2**-127, a float32 subnormal, stays)."""
from __future__ import annotations

import ml_dtypes
import numpy as np

E4M3FN = np.dtype(ml_dtypes.float8_e4m3fn)
E5M2 = np.dtype(ml_dtypes.float8_e5m2)
E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)
FLOAT8 = frozenset({E4M3FN, E5M2, E8M0, np.dtype(ml_dtypes.float8_e4m3fnuz),
                    np.dtype(ml_dtypes.float8_e5m2fnuz)})
# c10 casts these straight to integers (NaN -> 0), the IEEE-like two through float
_DIRECT_TO_INT = frozenset({E8M0, np.dtype(ml_dtypes.float8_e4m3fnuz),
                            np.dtype(ml_dtypes.float8_e5m2fnuz)})
_F32 = np.dtype(np.float32)


def _float32(src):
    """src's values as float32: c10 reads float8 as float and casts others to float."""
    a = np.asarray(src)
    if a.dtype.kind == "c":         # complex -> real keeps the real part (the frontend warns)
        a = a.real
    with np.errstate(all="ignore"):
        return a.astype(_F32)


def from_float32(f, dt):
    """float32 array `f` as float8 dtype `dt`, bit for bit as c10's constructors."""
    if dt is E8M0:
        bits = f.view(np.uint32)
        exp = (bits >> 23) & 0xFF
        # the first dropped bit rounds up, except a tie below the normals (2**-127 stays)
        up = ((bits >> 22) & 1) & (((bits & 0x3FFFFF) != 0) | (exp != 0))
        return np.where(exp == 0xFF, 0xFF, np.minimum(exp + up, 0xFF)).astype(np.uint8).view(E8M0)
    with np.errstate(all="ignore"):
        r = f.astype(dt)
    if dt is E4M3FN:                            # finite or infinite overflow saturates
        over = np.isnan(r) & ~np.isnan(f)
        if over.any():
            r[over] = np.where(np.signbit(f[over]), -448.0, 448.0).astype(dt)
    elif dt is E5M2:
        nan = np.isnan(f)
        if nan.any():
            r.view(np.uint8)[nan] = np.where(np.signbit(f[nan]), 0xFF, 0x7F).astype(np.uint8)
    return r


def copy(dst, src):
    """np.copyto(dst, src) where dst or src is float8 (src may broadcast to dst)."""
    src = np.asarray(src)
    if src.dtype == dst.dtype:
        np.copyto(dst, src)
        return
    if src.dtype in _DIRECT_TO_INT and dst.dtype.kind in "biu":
        with np.errstate(all="ignore"):
            np.copyto(dst, src, casting="unsafe")
        return
    f = src.astype(_F32) if src.dtype in FLOAT8 else _float32(src)
    if dst.dtype in FLOAT8:
        np.copyto(dst, from_float32(np.asarray(f), dst.dtype))
    else:
        with np.errstate(all="ignore"):
            np.copyto(dst, f, casting="unsafe")
