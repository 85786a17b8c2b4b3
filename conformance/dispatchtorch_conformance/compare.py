"""Comparing a backend's host values with the reference's, as torch.testing.assert_close.

Floats: |actual - expected| <= atol + rtol * |expected| elementwise, NaN where the
reference has NaN (and only there), infinities equal. Integers and bool: exact.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dispatchtorch.backend import FLOATING

# torch.testing.assert_close's defaults (rtol, atol); integers and bool are exact
DEFAULT_TOL = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5),
               "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}


def tolerance(dtype_name, *widenings):
    """(rtol, atol) for an output dtype: the default, widened by each Tol given."""
    if dtype_name not in FLOATING:
        return 0.0, 0.0
    rtol, atol = DEFAULT_TOL[dtype_name]
    for tol in widenings:
        w = tol.get(dtype_name) if tol is not None else None
        if w is not None:
            rtol, atol = max(rtol, w[0]), max(atol, w[1])
    return rtol, atol


@dataclass
class Mismatch:
    count: int
    total: int
    max_abs: float
    max_rel: float
    where: tuple
    actual: object
    expected: object

    def describe(self, rtol, atol):
        loc = ", ".join(str(i) for i in self.where)
        tol = f" (rtol {rtol:g}, atol {atol:g})" if rtol or atol else " (exact)"
        return (f"{self.count}/{self.total} elements differ{tol}; max abs error "
                f"{self.max_abs:.3g}, max rel error {self.max_rel:.3g}; e.g. at [{loc}]: "
                f"got {self.actual!r}, expected {self.expected!r}")


def compare(actual: np.ndarray, expected: np.ndarray, rtol: float, atol: float):
    """None if equal within tolerance, else a Mismatch (shapes must agree)."""
    with np.errstate(all="ignore"):
        return _compare(actual, expected, rtol, atol)


def _compare(actual, expected, rtol, atol):
    if actual.size == 0 or identical(actual, expected):
        return None
    if actual.dtype.kind in "biu":
        bad = actual != expected
        if not bad.any():
            return None
        a, e = actual.astype(np.float64), expected.astype(np.float64)
        diff = np.abs(a - e)
        rel = diff / np.maximum(np.abs(e), np.finfo(np.float64).tiny)
        return _mismatch(bad, diff, rel, actual, expected)
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    nan_a, nan_e = np.isnan(a), np.isnan(e)
    finite = np.isfinite(a) & np.isfinite(e)
    diff = np.where(finite, np.abs(a - e), 0.0)
    bad = (nan_a != nan_e) | (~finite & ~nan_a & ~nan_e & (a != e)) | \
        (finite & (diff > atol + rtol * np.abs(e)))
    if not bad.any():
        return None
    rel = np.where(finite, diff / np.maximum(np.abs(e), np.finfo(np.float64).tiny), 0.0)
    diff = np.where(bad & ~finite, np.inf, diff)
    rel = np.where(bad & ~finite, np.inf, rel)
    return _mismatch(bad, diff, rel, actual, expected)


def identical(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit-for-bit equality (the common case, and much cheaper than the tolerance test)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return bool(np.array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8)))


def _mismatch(bad, diff, rel, actual, expected):
    score = np.where(bad, diff, -1.0)
    flat = int(np.argmax(score))
    where = np.unravel_index(flat, bad.shape) if bad.ndim else ()
    return Mismatch(int(bad.sum()), int(bad.size), float(np.max(np.where(bad, diff, 0.0))),
                    float(np.max(np.where(bad, rel, 0.0))), tuple(int(i) for i in where),
                    _py(actual[where]), _py(expected[where]))


def _py(v):
    v = np.asarray(v)
    if v.dtype.kind == "b":
        return bool(v)
    if v.dtype.kind in "iu":
        return int(v)
    return float(v.astype(np.float64))


def same_value(a, b) -> bool:
    """Equality of non-tensor results (numbers, None, tuples), NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return type(a) is type(b) and a == b
