"""phi32.py, gelu and gelu' of float32 blocks as x Phi(x), and c_phi32.py's C loop of
the same operations: within a few float32 ulp of float64 (scipy's ndtr) across the
range, the negative tail without 1 + erf's cancellation, special values as the
decomposition gives them, in place; the C loop's polynomial branch phi32's bits."""
import numpy as np
import pytest
from scipy import special as scipy_special

from dispatchtorch_cpu import c_phi32, phi32


@pytest.fixture(params=["numpy", "c"])
def impl(request):
    """phi32's numpy passes, or c_phi32's C loop (skipped without a compiler)."""
    if request.param == "numpy":
        return phi32
    if not c_phi32.kernels():
        pytest.skip("no C compiler or no vector expf: c_phi32 is not used")
    return c_phi32

X = np.linspace(-14, 14, 400_001).astype(np.float32)


def _want(x):
    x = x.astype(np.float64)
    return x * scipy_special.ndtr(x), scipy_special.ndtr(x) + x * np.exp(-x * x / 2) / np.sqrt(2 * np.pi)


def _ulps(got, want):
    return np.abs(got.astype(np.float64) - want) / np.spacing(np.abs(want).astype(np.float32))


@pytest.mark.parametrize("lo,hi,fw_ulp,bw_ulp", [(1.5, 3, 9, 8), (3, 5, 14, 12), (5, 14, 80, 80)])
def test_within_ulps_of_float64_away_from_cancellation(impl, lo, hi, fw_ulp, bw_ulp):
    x = X[(np.abs(X) >= lo) & (np.abs(X) < hi)]
    want, dwant = _want(x)
    got, dgot = np.empty_like(x), np.empty_like(x)
    impl.gelu(got, x)
    impl.gelu_backward(dgot, np.ones_like(x), x)
    # beyond |x| = 5 the bound is exp's argument -x**2 / 2 rounded to float32
    assert _ulps(got, want).max() <= fw_ulp
    assert _ulps(dgot, dwant).max() <= bw_ulp


def test_absolute_error_everywhere_and_ulps_near_zero(impl):
    want, dwant = _want(X)
    got, dgot = np.empty_like(X), np.empty_like(X)
    impl.gelu(got, X)
    impl.gelu_backward(dgot, np.ones_like(X), X)
    assert np.abs(got - want).max() < 4e-7          # |gelu| up to 14
    assert np.abs(dgot - dwant).max() < 2.5e-7
    small = np.abs(X) < 1.5                          # the polynomial branch
    assert _ulps(got[small], want[small]).max() <= 11


def test_negative_tail_keeps_its_digits(impl):
    x = np.array([-6, -8, -10, -12], np.float32)
    got = np.empty_like(x)
    impl.gelu(got, x)
    want, _ = _want(x)
    np.testing.assert_allclose(got, want, rtol=2e-5)   # 1 + erf(x / sqrt 2) gives -0.0 here
    assert (got < 0).all()


def test_special_values_and_zero_signs(impl):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -40.0, 1e-30, -1e-30], np.float32)
    got, dgot = np.empty_like(x), np.empty_like(x)
    impl.gelu(got, x)
    impl.gelu_backward(dgot, np.ones_like(x), x)
    np.testing.assert_array_equal(got, np.array([np.nan, np.inf, np.nan, 0.0, -0.0, -0.0, 5e-31, -5e-31], np.float32))
    assert list(np.signbit(got[3:6])) == [False, True, True]
    np.testing.assert_array_equal(dgot, [np.nan, np.nan, np.nan, 0.5, 0.5, 0.0, 0.5, 0.5])


def test_in_place_equals_out_of_place(impl):
    x = (np.random.default_rng(3).standard_normal(5000) * 2).astype(np.float32)
    g = np.random.default_rng(4).standard_normal(5000).astype(np.float32)
    a, b = np.empty_like(x), np.empty_like(x)
    impl.gelu(a, x)
    impl.gelu_backward(b, g, x)
    y = x.copy()
    impl.gelu(y, y)
    np.testing.assert_array_equal(y, a)
    y, h = x.copy(), g.copy()
    impl.gelu_backward(h, h, y)
    np.testing.assert_array_equal(h, b)
    y = x.copy()
    impl.gelu_backward(y, g, y)
    np.testing.assert_array_equal(y, b)


def test_c_loop_gives_phi32s_bits_on_the_polynomial_branch_and_close_in_the_tail():
    if not c_phi32.kernels():
        pytest.skip("no C compiler or no vector expf: c_phi32 is not used")
    x = (np.random.default_rng(5).standard_normal(100_003) * 1.5).astype(np.float32)
    g = np.random.default_rng(6).standard_normal(x.size).astype(np.float32)
    want, dwant, got, dgot = (np.empty_like(x) for _ in range(4))
    phi32.gelu(want, x)
    phi32.gelu_backward(dwant, g, x)
    c_phi32.gelu(got, x)
    c_phi32.gelu_backward(dgot, g, x)
    poly = x * x < 2
    np.testing.assert_array_equal(got[poly], want[poly])
    np.testing.assert_array_equal(dgot[poly], dwant[poly])
    # the tail differs only through exp (libmvec's expf against numpy's)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-30)
    np.testing.assert_allclose(dgot, dwant, rtol=0, atol=1e-6 * np.abs(g).max())


def test_gelu_kernel_without_the_c_loop_runs_phi32s_passes(monkeypatch):
    """No compiler: c_phi32's table is empty and gelu.py's kernel takes phi32's numpy
    passes (their bits)."""
    from dispatchtorch_cpu import gelu as gelu_kernels
    monkeypatch.setattr(c_phi32, "_kernels", {})
    monkeypatch.setattr(c_phi32, "_loaded", [True])
    assert not c_phi32.kernels()
    x = (np.random.default_rng(8).standard_normal(10_000) * 2).astype(np.float32)
    g = np.random.default_rng(9).standard_normal(x.size).astype(np.float32)
    got, dgot, want, dwant = (np.empty_like(x) for _ in range(4))
    gelu_kernels.gelu(got, x, approximate="none")
    gelu_kernels.gelu_backward(dgot, g, x, approximate="none")
    phi32.gelu(want, x)
    phi32.gelu_backward(dwant, g, x)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(dgot, dwant)
