"""linalg.ldl_factor(_ex) / ldl_solve against PyTorch's LAPACK (dsytrf / dsytrs): LD and
the pivots equal PyTorch's on random symmetric matrices and on ones with a zero
diagonal (mostly 2x2 blocks, with interchanges); solves match."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")
rng = np.random.default_rng(8)


def _symmetric(n, zero_diagonal=False):
    a = rng.standard_normal((n, n))
    a = a + a.T
    if zero_diagonal:
        np.fill_diagonal(a, 0.0)
    return a


@pytest.mark.parametrize("zero_diagonal", [False, True])
def test_ldl_factor_and_solve_equal_lapacks(zero_diagonal):
    a = np.stack([_symmetric(6, zero_diagonal) for _ in range(12)])
    b = rng.standard_normal((12, 6, 2))
    ours = dt.linalg.ldl_factor_ex(dt.tensor(a))
    theirs = torch.linalg.ldl_factor_ex(torch.tensor(a))
    np.testing.assert_allclose(ours.LD.numpy(), theirs.LD.numpy(), rtol=1e-9, atol=1e-11)
    np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
    np.testing.assert_array_equal(ours.info.numpy(), theirs.info.numpy())
    x = dt.linalg.ldl_solve(ours.LD, ours.pivots, dt.tensor(b))
    y = torch.linalg.ldl_solve(theirs.LD, theirs.pivots, torch.tensor(b))
    np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(np.einsum("bij,bjk->bik", a, x.numpy()), b, atol=1e-9)
    if zero_diagonal:
        assert (ours.pivots.numpy() < 0).mean() > 0.5       # mostly 2x2 blocks


def test_singular_matrix_reports_info_as_lapack():
    a = np.zeros((3, 3))
    a[0, 0] = 1.0
    ours, theirs = dt.linalg.ldl_factor_ex(dt.tensor(a)), torch.linalg.ldl_factor_ex(torch.tensor(a))
    assert int(ours.info) == int(theirs.info) == 2
    np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
