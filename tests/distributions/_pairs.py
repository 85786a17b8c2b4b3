"""One distribution built in both libraries from the same float64 parameters, for the
tests that hold dispatchtorch.distributions to torch.distributions."""
from __future__ import annotations

import numpy as np

import dispatchtorch as dt

torch = None
try:
    import torch
except ImportError:
    pass


def to_dt(x, grad=False):
    if isinstance(x, (int, float)):
        return x
    t = dt.tensor(np.asarray(x))
    return t.requires_grad_() if grad else t


def to_torch(x, grad=False):
    if isinstance(x, (int, float)):
        return x
    t = torch.tensor(np.asarray(x))
    return t.requires_grad_() if grad else t


def as_np(x):
    if hasattr(x, "detach"):
        x = x.detach()
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def build(lib, name, params, grad=False):
    """(distribution, {name: leaf tensor}) in `lib` ("dt" or "torch")."""
    mod = dt.distributions if lib == "dt" else torch.distributions
    conv = to_dt if lib == "dt" else to_torch
    leaves = {k: conv(v, grad and not isinstance(v, (int, float))) for k, v in params.items()}
    return getattr(mod, name)(**leaves), leaves


def close(a, b, rtol=1e-7, atol=1e-9):
    a, b = as_np(a), as_np(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    if np.float32 in (a.dtype, b.dtype):          # single-precision cases: its rounding
        rtol, atol = max(rtol, 1e-5), max(atol, 1e-6)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
