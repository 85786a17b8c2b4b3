"""The CPU backend's blocked float32 erf (erf32.py) against the float64 erf: within 3
ulp everywhere, specials as IEEE/PyTorch give them, in place and strided."""
import numpy as np
import pytest

scipy_special = pytest.importorskip("scipy.special")

import dispatchtorch as torch
from dispatchtorch_cpu import erf32
from dispatchtorch_cpu.kernels import ERF32_MIN, KERNELS


def _ulps(got, x):
    ref = scipy_special.erf(x.astype(np.float64))
    return np.abs(got.astype(np.float64) - ref) / np.spacing(np.abs(ref.astype(np.float32)))


def test_within_three_ulp_across_the_range():
    x = np.concatenate([np.linspace(-5, 5, 1_000_003, dtype=np.float32),
                        np.float32(10.0) ** np.linspace(-44, 0.7, 100_001, dtype=np.float32),
                        -np.float32(10.0) ** np.linspace(-44, 0.7, 100_001, dtype=np.float32)])
    out = np.empty_like(x)
    erf32.erf(out, x)
    assert _ulps(out, x).max() <= 3


def test_specials():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 4.0, -9.5, 1e-38, 1.0, -1.0], np.float32)
    out = np.empty_like(x)
    erf32.erf(out, x)
    assert np.isnan(out[0])
    np.testing.assert_array_equal(out[1:6], [1, -1, 0, 0, 1])
    assert np.signbit(out[4]) and not np.signbit(out[3])
    assert out[6] == -1
    np.testing.assert_allclose(out[7:], scipy_special.erf(x[7:].astype(np.float64)), rtol=3e-7)


def test_kernel_in_place_strided_and_half_precision():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((ERF32_MIN, 6)) * 2).astype(np.float32)
    want = scipy_special.erf(x.astype(np.float64))
    y = x.copy()
    KERNELS["erf"](y, y)                                   # out is the input
    np.testing.assert_allclose(y, want, rtol=4e-7, atol=1e-7)
    t = np.empty((6, ERF32_MIN), np.float32).T             # strided out and input
    KERNELS["erf"](t, x.T.copy().T)
    np.testing.assert_array_equal(t, y)
    h = x.astype(np.float16)
    out = np.empty_like(h)
    KERNELS["erf"](out, h)
    np.testing.assert_allclose(out, scipy_special.erf(h.astype(np.float64)), rtol=1e-3, atol=1e-4)


def test_gelu_through_the_frontend_matches_float64():
    x = torch.linspace(-6, 6, 50_001)
    xd = x.numpy().astype(np.float64)
    want = 0.5 * xd * (1 + scipy_special.erf(xd / np.sqrt(2)))
    np.testing.assert_allclose(torch.nn.functional.gelu(x).numpy(), want, rtol=2e-6, atol=1e-7)
