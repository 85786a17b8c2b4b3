"""phi32.py, gelu and gelu' of float32 blocks as x Phi(x): within a few float32 ulp of
float64 (scipy's ndtr) across the range, the negative tail without 1 + erf's
cancellation, special values as the decomposition gives them, in place."""
import numpy as np
import pytest
from scipy import special as scipy_special

from dispatchtorch_cpu import phi32

X = np.linspace(-14, 14, 400_001).astype(np.float32)


def _want(x):
    x = x.astype(np.float64)
    return x * scipy_special.ndtr(x), scipy_special.ndtr(x) + x * np.exp(-x * x / 2) / np.sqrt(2 * np.pi)


def _ulps(got, want):
    return np.abs(got.astype(np.float64) - want) / np.spacing(np.abs(want).astype(np.float32))


@pytest.mark.parametrize("lo,hi,fw_ulp,bw_ulp", [(1.5, 3, 9, 8), (3, 5, 14, 12), (5, 14, 80, 80)])
def test_within_ulps_of_float64_away_from_cancellation(lo, hi, fw_ulp, bw_ulp):
    x = X[(np.abs(X) >= lo) & (np.abs(X) < hi)]
    want, dwant = _want(x)
    got, dgot = np.empty_like(x), np.empty_like(x)
    phi32.gelu(got, x)
    phi32.gelu_backward(dgot, np.ones_like(x), x)
    # beyond |x| = 5 the bound is exp's argument -x**2 / 2 rounded to float32
    assert _ulps(got, want).max() <= fw_ulp
    assert _ulps(dgot, dwant).max() <= bw_ulp


def test_absolute_error_everywhere_and_ulps_near_zero():
    want, dwant = _want(X)
    got, dgot = np.empty_like(X), np.empty_like(X)
    phi32.gelu(got, X)
    phi32.gelu_backward(dgot, np.ones_like(X), X)
    assert np.abs(got - want).max() < 4e-7          # |gelu| up to 14
    assert np.abs(dgot - dwant).max() < 2.5e-7
    small = np.abs(X) < 1.5                          # the polynomial branch
    assert _ulps(got[small], want[small]).max() <= 11


def test_negative_tail_keeps_its_digits():
    x = np.array([-6, -8, -10, -12], np.float32)
    got = np.empty_like(x)
    phi32.gelu(got, x)
    want, _ = _want(x)
    np.testing.assert_allclose(got, want, rtol=2e-5)   # 1 + erf(x / sqrt 2) gives -0.0 here
    assert (got < 0).all()


def test_special_values_and_zero_signs():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -40.0, 1e-30, -1e-30], np.float32)
    got, dgot = np.empty_like(x), np.empty_like(x)
    phi32.gelu(got, x)
    phi32.gelu_backward(dgot, np.ones_like(x), x)
    np.testing.assert_array_equal(got, np.array([np.nan, np.inf, np.nan, 0.0, -0.0, -0.0, 5e-31, -5e-31], np.float32))
    assert list(np.signbit(got[3:6])) == [False, True, True]
    np.testing.assert_array_equal(dgot, [np.nan, np.nan, np.nan, 0.5, 0.5, 0.0, 0.5, 0.5])


def test_in_place_equals_out_of_place():
    x = (np.random.default_rng(3).standard_normal(5000) * 2).astype(np.float32)
    g = np.random.default_rng(4).standard_normal(5000).astype(np.float32)
    a, b = np.empty_like(x), np.empty_like(x)
    phi32.gelu(a, x)
    phi32.gelu_backward(b, g, x)
    y = x.copy()
    phi32.gelu(y, y)
    np.testing.assert_array_equal(y, a)
    y, h = x.copy(), g.copy()
    phi32.gelu_backward(h, h, y)
    np.testing.assert_array_equal(h, b)
    y = x.copy()
    phi32.gelu_backward(y, g, y)
    np.testing.assert_array_equal(y, b)
