"""Run one callable on dispatchtorch and on PyTorch with the same inputs; compare the
outputs and the gradients of every floating input (helpers for the parity tests)."""
from __future__ import annotations

import numpy as np

import dispatchtorch as dt


class Fixed:
    """An input that takes no gradient (targets, masks)."""

    def __init__(self, array):
        self.array = np.asarray(array)


def _convert(lib, v, grad):
    if isinstance(v, Fixed):
        return lib.tensor(v.array)
    if isinstance(v, np.ndarray):
        t = lib.tensor(v)
        if grad and v.dtype.kind == "f":
            t.requires_grad_(True)
        return t
    if isinstance(v, (list, tuple)) and v and isinstance(v[0], np.ndarray):
        return type(v)(_convert(lib, x, grad) for x in v)
    return v


def _leaves(args):
    out = []
    for a in args:
        if isinstance(a, (list, tuple)):
            out += _leaves(a)
        elif hasattr(a, "requires_grad") and a.requires_grad:
            out.append(a)
    return out


def _flat(y):
    if isinstance(y, (tuple, list)):
        r = []
        for v in y:
            r += _flat(v)
        return r
    return [y] if hasattr(y, "shape") else []


def _np(t):
    a = t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)
    return a.astype(np.float64) if a.dtype.kind == "f" else a


def compare_call(torch, fn_ours, fn_theirs, args, kwargs=None, rtol=1e-5, atol=1e-5, grad=True):
    """Same inputs through both; outputs match; the gradients of a fixed random
    projection of the floating outputs match for every floating input."""
    kwargs = kwargs or {}
    ours = [_convert(dt, a, grad) for a in args]
    theirs = [_convert(torch, a, grad) for a in args]
    ko = {k: _convert(dt, v, False) for k, v in kwargs.items()}
    kt = {k: _convert(torch, v, False) for k, v in kwargs.items()}
    y, ty = fn_ours(*ours, **ko), fn_theirs(*theirs, **kt)
    ys, tys = _flat(y), _flat(ty)
    assert len(ys) == len(tys)
    for a, b in zip(ys, tys):
        assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
        np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)
    if not grad:
        return y
    rng = np.random.default_rng(7)
    lo, lt = None, None
    for a, b in zip(ys, tys):
        if not (b.dtype.is_floating_point and b.requires_grad):
            continue
        seed = rng.standard_normal(tuple(b.shape))
        so = (a * dt.tensor(seed.astype(np.float32)).to(a.dtype)).sum()
        st = (b * torch.tensor(seed.astype(np.float32)).to(b.dtype)).sum()
        lo, lt = (so, st) if lo is None else (lo + so, lt + st)
    if lt is None:
        return y
    lt.backward()
    lo.backward()
    for a, b in zip(_leaves(ours), _leaves(theirs)):
        if b.grad is None or not np.any(_np(b.grad)):       # no gradient, or zero
            assert a.grad is None or not np.any(_np(a.grad))
        else:
            assert a.grad is not None
            np.testing.assert_allclose(_np(a.grad), _np(b.grad), rtol=rtol, atol=atol)
    return y
