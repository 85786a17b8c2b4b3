"""Comparing a backend's host values with the reference's.

Floats, by default as torch.testing.assert_close: |actual - expected| <= atol + rtol *
|expected| elementwise. Where the op has an ulp budget (budgets.py): the distance in
units in the last place of the output dtype, |ord(actual) - ord(expected)| <= budget,
with no absolute floor (a flushed subnormal or a naive expm1 near 0 is millions of ulp
away), and the sign of every zero compared. Always: NaN where the reference has NaN
(and only there), infinities equal. Integers and bool: exact, reported as absolute
differences.
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
    max_rel: float | None
    where: tuple
    actual: object
    expected: object
    max_ulp: float | None = None
    ulps: float | None = None          # the budget, when compared by ulp
    why: str = ""                      # "sign of zero" when only that differs

    def describe(self, rtol, atol):
        loc = ", ".join(str(i) for i in self.where)
        if self.max_rel is None:       # integers and bool: absolute differences only
            worst = abs(int(self.actual) - int(self.expected))     # exact: the worst element
            return (f"{self.count}/{self.total} elements differ (exact); max abs difference "
                    f"{worst}; e.g. at [{loc}]: got {self.actual!r}, expected {self.expected!r}")
        if self.ulps is not None:
            tol = f" (budget {self.ulps:g} ulp{', ' + self.why if self.why else ''})"
            err = f"max {_ulp_text(self.max_ulp)} ulp, max abs error {self.max_abs:.3g}"
        else:
            tol = f" (rtol {rtol:g}, atol {atol:g})" if rtol or atol else " (exact)"
            err = f"max abs error {self.max_abs:.3g}, max rel error {self.max_rel:.3g}"
            if self.max_ulp is not None:
                err += f", max {_ulp_text(self.max_ulp)} ulp"
        return (f"{self.count}/{self.total} elements differ{tol}; {err}; e.g. at [{loc}]: "
                f"got {self.actual!r}, expected {self.expected!r}")


def _ulp_text(u):
    return "inf" if u is None or not np.isfinite(u) else f"{u:.4g}"


def compare(actual: np.ndarray, expected: np.ndarray, rtol: float, atol: float,
            ulps: float | None = None, stats: dict | None = None):
    """None if equal within tolerance (or within `ulps` units in the last place, zero
    signs included), else a Mismatch (shapes must agree). `stats`, a dict, receives
    the worst ulp distance and absolute error of floating values that are not
    bit-identical."""
    with np.errstate(all="ignore"):
        return _compare(actual, expected, rtol, atol, ulps, stats)


def _compare(actual, expected, rtol, atol, ulps, stats):
    if actual.size == 0 or identical(actual, expected):
        return None
    if actual.dtype.kind in "biu":
        bad = actual != expected
        if not bad.any():
            return None
        diff = np.abs(actual.astype(object) - expected.astype(object)) if actual.dtype.itemsize \
            == 8 else np.abs(actual.astype(np.int64) - expected.astype(np.int64))
        return _mismatch(bad, diff.astype(np.float64), None, actual, expected)
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    nan_a, nan_e = np.isnan(a), np.isnan(e)
    finite = np.isfinite(a) & np.isfinite(e)
    diff = np.where(finite, np.abs(a - e), 0.0)
    dist = ulp_distance(actual, expected)
    dist = np.where(finite, dist, 0.0)
    if stats is not None:
        stats["max_ulp"] = max(stats.get("max_ulp") or 0.0, float(dist.max()))
        stats["max_abs"] = max(stats.get("max_abs") or 0.0, float(diff.max()))
    nonfinite_bad = (nan_a != nan_e) | (~finite & ~nan_a & ~nan_e & (a != e))
    why = ""
    if ulps is None:
        bad = nonfinite_bad | (finite & (diff > atol + rtol * np.abs(e)))
    else:
        bad = nonfinite_bad | (finite & (dist > ulps))
        sign = finite & (a == 0) & (e == 0) & (np.signbit(a) != np.signbit(e))
        if sign.any() and not bad.any():
            why = "sign of zero"
        bad |= sign
    if not bad.any():
        return None
    rel = np.where(finite, diff / np.maximum(np.abs(e), np.finfo(np.float64).tiny), 0.0)
    diff = np.where(bad & ~finite, np.inf, diff)
    rel = np.where(bad & ~finite, np.inf, rel)
    m = _mismatch(bad, diff if why == "" else np.where(bad, 1.0, 0.0), rel, actual, expected)
    if why:
        m.max_abs = 0.0
    m.max_ulp = float(np.max(np.where(bad & ~finite, np.inf, dist)))
    m.ulps, m.why = ulps, why
    return m


_BITS = {2: (np.uint16, 15), 4: (np.uint32, 31), 8: (np.uint64, 63)}


def ulp_distance(actual, expected):
    """|ord(a) - ord(e)| as float64, where ord orders a float format's bit patterns
    (adjacent values differ by 1; +0 and -0 are both 0). bfloat16 and float16 use
    their own 16 bits, so one ulp is one step of the output dtype."""
    ui, top = _BITS[actual.dtype.itemsize]
    a = np.ascontiguousarray(actual).view(ui).astype(np.uint64)
    e = np.ascontiguousarray(expected).view(ui).astype(np.uint64)
    sign = np.uint64(1) << np.uint64(top)
    mag_a, mag_e = a & ~sign, e & ~sign
    same = (a & sign) == (e & sign)
    d = np.where(same, np.where(mag_a > mag_e, mag_a - mag_e, mag_e - mag_a), mag_a + mag_e)
    return d.astype(np.float64).reshape(actual.shape)


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
                    None if rel is None else float(np.max(np.where(bad, rel, 0.0))),
                    tuple(int(i) for i in where), _py(actual[where]), _py(expected[where]))


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
