"""Sums over trailing or leading axes of float arrays by BLAS gemv (blas_sums.py):
within float32 rounding of the float64 sum, keepdim and strided outputs, and the
shapes that keep numpy's reduction (middle axes, long rows, integers) unchanged."""
import numpy as np
import pytest

from dispatchtorch_cpu import blas_sums as B
from dispatchtorch_cpu.kernels import KERNELS

rng = np.random.default_rng(9)


@pytest.mark.parametrize("shape,dims", [((32, 4, 64, 64), (3,)), ((32, 64, 64), (1, 2)),
                                        ((32, 64, 64), (0, 1)), ((2048, 65), (0,)),
                                        ((7, 1031), (1,)), ((1031, 7), (0,))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_matches_float64(shape, dims, dtype, keepdim):
    x = rng.standard_normal(shape).astype(dtype)
    exact = x.astype(np.float64)
    want = exact.sum(axis=dims, keepdims=keepdim)
    out = np.empty(want.shape, dtype)
    assert B.blas_sum(out, x, dims)                       # the BLAS path applies
    KERNELS["sum"](out, x, dims=dims, keepdim=keepdim)
    scale = np.abs(exact).sum(axis=dims, keepdims=keepdim)
    eps = 3e-7 if dtype == np.float32 else 1e-15
    assert (np.abs(out - want) <= eps * scale).all()


def test_strided_out_and_paths_that_keep_numpy():
    x = rng.standard_normal((64, 33, 65)).astype(np.float32)
    out = np.empty((65, 64), np.float32).T                # a transposed output
    KERNELS["sum"](out, x, dims=(1,), keepdim=False)      # a middle axis: numpy
    np.testing.assert_allclose(out, x.astype(np.float64).sum(1), rtol=1e-5, atol=1e-5)
    assert not B.blas_sum(out, x, (1,))
    long_rows = rng.standard_normal((3, B.ROW_MAX + 1)).astype(np.float32)
    assert not B.blas_sum(np.empty(3, np.float32), long_rows, (1,))
    ints = rng.integers(0, 9, (64, 64))
    assert not B.blas_sum(np.empty(64, np.int64), ints, (1,))
    wide = np.empty(64, np.float64)                       # out wider than x: numpy
    assert not B.blas_sum(wide, x[:, 0, :], (1,))
    t = rng.standard_normal((96, 64)).astype(np.float32)
    out2 = np.empty((64, 1), np.float32)
    KERNELS["sum"](out2, t.T, dims=(1,), keepdim=True)    # non-contiguous input: numpy
    np.testing.assert_allclose(out2[:, 0], t.astype(np.float64).sum(0), rtol=1e-5, atol=1e-5)


def test_nan_and_inf_propagate_by_row():
    x = np.ones((64, 128), np.float32)
    x[3, 5], x[7, 0], x[9, 1], x[9, 2] = np.nan, np.inf, np.inf, -np.inf
    out = np.empty(64, np.float32)
    KERNELS["sum"](out, x, dims=(1,), keepdim=False)
    assert np.isnan(out[3]) and out[7] == np.inf and np.isnan(out[9]) and out[0] == 128
