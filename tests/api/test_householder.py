"""torch.geqrf and torch.ormqr against PyTorch (LAPACK's dgeqrf / dormqr): tall, wide,
batched and empty matrices, a column that needs no reflection, ormqr's four
left/transpose forms and its gradients."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")
rng = np.random.default_rng(4)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (0, 3), (4, 1)])
def test_geqrf_matches_lapack(shape):
    x = rng.standard_normal(shape)
    if shape == (4, 1):
        x[1:] = 0.0                   # already upper triangular: tau = 0
    ours, theirs = dt.geqrf(dt.tensor(x)), torch.geqrf(torch.tensor(x))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("left,transpose", list(itertools.product([True, False], repeat=2)))
def test_ormqr_and_its_gradients_match_pytorch(left, transpose):
    a = rng.standard_normal((2, 4, 3))
    c = rng.standard_normal((2, 4, 2) if left else (2, 2, 4))
    refl, tau = torch.geqrf(torch.tensor(a))
    res = []
    for lib, r, t in ((dt, dt.tensor(refl.numpy()), dt.tensor(tau.numpy())),
                      (torch, refl.clone(), tau.clone())):
        r.requires_grad_(True)
        t.requires_grad_(True)
        o = lib.tensor(c, requires_grad=True)
        y = lib.ormqr(r, t, o, left=left, transpose=transpose)
        (y * lib.tensor(np.arange(y.numel()).reshape(tuple(y.shape)) / 7.0)).sum().backward()
        res.append([v.detach().numpy() for v in (y, r.grad, t.grad, o.grad)])
    for a_, b_ in zip(*res):
        np.testing.assert_allclose(a_, b_, rtol=1e-10, atol=1e-12)


def test_ormqr_errors_match_pytorch():
    for lib in (dt, torch):
        with pytest.raises(RuntimeError, match="at least 2 dimensions"):
            lib.ormqr(lib.zeros(()), lib.zeros(()), lib.zeros(()))
        with pytest.raises(RuntimeError, match=r"tau.shape\[-1\] must be equal"):
            lib.ormqr(lib.ones(5, 0), lib.ones(5), lib.ones(5, 5))
