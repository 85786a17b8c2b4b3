"""The nn rows with OpenCL kernels of their own (kernels/softmax.py, nll_loss.py)
against the CPU backend: every dim and layout, NaN/inf rows, the reductions, class
weights, ignored targets, a class dim in the middle, the long-input path, float16 and
float64, and cross_entropy's value and gradient through them. (F.linear's kernel is
tested in test_opencl_frontend.py.)"""
from __future__ import annotations

import numpy as np
import pytest

from _nll_cases import nll_cases

import dispatchtorch as torch
from dispatchtorch_opencl.kernels import nll_loss as nll_kernels

F = torch.nn.functional


def _both(fn, *arrays):
    return [fn(*(torch.tensor(a, device=dev) if isinstance(a, np.ndarray) else a for a in arrays))
            for dev in ("cpu", "opencl")]


def _close(c, o, rtol=1e-5, atol=1e-6):
    assert str(o.device).startswith("opencl") and c.dtype == o.dtype and c.shape == o.shape
    np.testing.assert_allclose(o.cpu().numpy().astype(np.float64), c.numpy().astype(np.float64),
                               rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
def test_softmax_rows(ocl, rng, fn):
    a = rng.standard_normal((3, 4, 5)).astype(np.float32)
    a[0, 1, 2] = np.nan
    a[1, 2, :] = np.inf
    a[2, 3, :] = -np.inf
    for dim in (0, 1, 2, -1):
        _close(*_both(lambda x: fn(x, dim=dim), a))
        _close(*_both(lambda x: fn(x.transpose(0, 2), dim=dim), a))
    _close(*_both(lambda x: fn(x, dim=0), a[0, 0]))
    if fn is F.log_softmax:             # (each dtype is a kernel build: one op is enough)
        _close(*_both(lambda x: fn(x.half(), dim=1), a), rtol=2e-3, atol=1e-3)
        _close(*_both(lambda x: fn(x.double(), dim=1), a), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_vector_rows(ocl, rng, fn, dtype):
    """Rows contiguous along the last dim, from one vector's lanes up (the vector form:
    a tail past the last full vector, a NaN, +inf and -inf rows, a row of -inf but one,
    masked attention scores), then the same through a strided view (the scalar form)."""
    for n in (4, 8, 13, 64, 67):
        a = rng.standard_normal((6, n)).astype(dtype) * 4
        a[1, n // 2] = np.nan
        a[2, :] = np.inf
        a[3, :] = -np.inf
        a[4, :] = -np.inf
        a[4, n - 1] = 0.5
        a[5, 1:] = -np.inf
        tol = (1e-5, 1e-6) if dtype == "float32" else (1e-12, 1e-13)
        _close(*_both(lambda x: fn(x, dim=-1), a), *tol)
        _close(*_both(lambda x: fn(x, dim=1), a[:, ::2].copy()), *tol)
        c, o = _both(lambda x: fn(x, dim=-1), a)
        want = np.exp(a[0] - a[0].max())
        want = np.log(want / want.sum()) if fn is F.log_softmax else want / want.sum()
        np.testing.assert_allclose(o.cpu().numpy()[0], want, rtol=tol[0] * 10, atol=tol[1])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_rows(ocl, rng, reduction):
    x, t, _, cases = nll_cases(rng)
    for xi, ti, wi, ignore in cases:
        _close(*_both(lambda a, b, c: F.nll_loss(a, b, c, reduction=reduction, ignore_index=ignore),
                      xi, ti, wi), atol=1e-5)
    _close(*_both(lambda a, b: F.nll_loss(a.t(), b, reduction=reduction), x.T.copy(), t),
           atol=1e-5)
    if reduction == "mean":
        _close(*_both(lambda a, b: F.nll_loss(a.double(), b, reduction=reduction), x, t),
               rtol=1e-12, atol=1e-12)


def test_nll_loss_long_input(ocl, rng, monkeypatch):
    """Past SERIAL elements the losses and weights go through the sum kernel."""
    monkeypatch.setattr(nll_kernels, "SERIAL", 8)
    x = rng.standard_normal((40, 3)).astype(np.float32)
    t = rng.integers(0, 3, 40)
    w = rng.random(3).astype(np.float32)
    for reduction in ("mean", "sum"):
        _close(*_both(lambda a, b, c: F.nll_loss(a, b, c, reduction=reduction, ignore_index=1),
                      x, t, w), atol=1e-5)


def test_cross_entropy_value_and_gradient(ocl, rng):
    x = rng.standard_normal((32, 10)).astype(np.float32)
    t = rng.integers(0, 10, 32)
    grads = []
    for dev in ("cpu", "opencl"):
        xs = torch.tensor(x, device=dev, requires_grad=True)
        loss = F.cross_entropy(xs, torch.tensor(t, device=dev))
        loss.backward()
        grads.append((loss.detach().cpu().numpy(), xs.grad.cpu().numpy()))
    np.testing.assert_allclose(grads[1][0], grads[0][0], rtol=1e-5)
    np.testing.assert_allclose(grads[1][1], grads[0][1], rtol=1e-5, atol=1e-7)
