"""The OpenCL erf (kernels/clerf.py: polynomials and one exp, vectorised) against
scipy's float64 erf: every branch (|x| < 1, the exp tail, past the cap), the vector
body and the scalar tail, a strided view, the special values, and a fused region."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as dt

sp = pytest.importorskip("scipy.special")

# ulp of the result allowed: float64 against scipy's (itself within ~1 ulp of the
# exact erf); float32 against the float64 erf
ULPS = {"float64": 3.0, "float32": 3.0}


def _inputs(rng, dtype):
    x = np.concatenate([rng.standard_normal(3000) * 0.7, rng.uniform(-7, 7, 3000),
                        np.linspace(-1.05, 1.05, 2001), 10.0 ** rng.uniform(-30, 0, 200),
                        [0.999999, 1.0, 1.000001, 3.9999, 4.0, 5.9999, 6.0, 40.0]])
    return np.concatenate([x, -x]).astype(dtype)


def _ulps(got, x, dtype):
    want = sp.erf(x.astype(np.float64))
    ulp = np.spacing(np.abs(want).astype(dtype)).astype(np.float64)
    return np.abs(got.astype(np.float64) - want) / ulp


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_erf_is_within_a_few_ulp(ocl, rng, dtype):
    x = _inputs(rng, dtype)
    got = dt.erf(dt.tensor(x, device="opencl")).cpu().numpy()
    assert got.dtype == x.dtype
    assert _ulps(got, x, dtype).max() <= ULPS[dtype]
    # odd sizes run the scalar tail after the vectors; a strided view the gather path
    small = dt.tensor(x[:13], device="opencl")
    assert _ulps(dt.erf(small).cpu().numpy(), x[:13], dtype).max() <= ULPS[dtype]
    view = dt.tensor(x[:600], device="opencl")[::7]
    assert _ulps(dt.erf(view).cpu().numpy(), x[:600:7], dtype).max() <= ULPS[dtype]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_erf_special_values(ocl, dtype):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30] * 3, dtype)   # vectors too
    got = dt.erf(dt.tensor(x, device="opencl")).cpu().numpy()
    want = sp.erf(x.astype(np.float64)).astype(dtype)
    np.testing.assert_array_equal(got[:5], want[:5])
    assert list(np.signbit(got[:2])) == [False, True]                 # erf(-0.0) is -0.0
    np.testing.assert_allclose(got[5:7], [1.1283791670955126e-30, -1.1283791670955126e-30],
                               rtol=1e-6)


def test_gelu_in_a_fused_region_matches_eager(ocl, rng):
    x = dt.tensor((rng.standard_normal(4099) * 2).astype(np.float32), device="opencl")
    gelu = dt.nn.functional.gelu
    fused = dt.compile(lambda a: gelu(a) * 2.0)
    got = fused(x).cpu().numpy()
    x64 = x.cpu().numpy().astype(np.float64)
    want = 2.0 * 0.5 * x64 * (1.0 + sp.erf(x64 / np.sqrt(2.0)))
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(got, (gelu(x) * 2.0).cpu().numpy(), rtol=1e-6, atol=1e-7)
