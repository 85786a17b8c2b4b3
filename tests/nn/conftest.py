"""Helpers for the nn tests: PyTorch (dev-only) as an independent reference."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as dt


@pytest.fixture
def torch():
    """PyTorch's CPU build, for comparison tests; they skip where it is not installed."""
    return pytest.importorskip("torch")


def to_np(t):
    """Values of a dispatchtorch or PyTorch tensor as a float64 / int numpy array."""
    if not isinstance(t, (np.ndarray, list, tuple, float, int)):
        t = t.detach().cpu().numpy()
    a = np.asarray(t)
    return a.astype(np.float64) if a.dtype.kind == "f" else a


def ours(a, requires_grad=False, dtype=None):
    return dt.tensor(np.asarray(a), dtype=dtype, requires_grad=requires_grad)


def theirs(torch, a, requires_grad=False):
    t = torch.tensor(np.asarray(a))
    return t.requires_grad_(requires_grad)


def copy_params(src_torch_module, dst_module):
    """Copy a PyTorch module's parameters and buffers into ours by state_dict key."""
    sd = {k: dt.tensor(v.detach().numpy()) for k, v in src_torch_module.state_dict().items()}
    dst_module.load_state_dict(sd)


def assert_close(a, b, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(to_np(a), to_np(b), rtol=rtol, atol=atol)


def compare_module(torch, ours_mod, torch_mod, *inputs, rtol=1e-5, atol=1e-5, grad=True):
    """Same weights, same inputs: outputs, input gradients and parameter gradients agree."""
    copy_params(torch_mod, ours_mod)
    xs = [ours(x, requires_grad=grad and np.asarray(x).dtype.kind == "f") for x in inputs]
    ts = [theirs(torch, x, requires_grad=grad and np.asarray(x).dtype.kind == "f") for x in inputs]
    y, ty = ours_mod(*xs), torch_mod(*ts)
    if isinstance(ty, tuple):
        y, ty = y[0], ty[0]
    assert tuple(y.shape) == tuple(ty.shape)
    assert_close(y, ty, rtol, atol)
    if not grad:
        return y
    seed = np.random.default_rng(1).standard_normal(tuple(ty.shape)).astype(np.float32)
    (y * ours(seed)).sum().backward()
    (ty * torch.tensor(seed)).sum().backward()
    for x, t in zip(xs, ts):
        if t.grad is not None:
            assert_close(x.grad, t.grad, rtol, atol)
    theirs_params = dict(torch_mod.named_parameters())
    for name, p in ours_mod.named_parameters():
        tp = theirs_params[name]
        if tp.grad is None:
            assert p.grad is None or not np.any(to_np(p.grad)), name
        else:
            assert p.grad is not None, name
            assert_close(p.grad, tp.grad, rtol, atol)
    return y
