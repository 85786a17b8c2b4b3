"""Kernels of their own for composite ops whose decomposition costs several passes.

The frontend still records the composites' own derivative rules, so these only have
to compute the forward value, in the row's calling convention (see nn_ops.py).
"""
from __future__ import annotations

import numpy as np

from .kernels import _F32, _LOWP


def _up(a):
    return a.astype(_F32) if a is not None and a.dtype in _LOWP else a


def linear(out, x, weight, bias):
    if out.dtype in _LOWP:
        y = np.matmul(_up(x), _up(weight).T)
        if bias is not None:
            y += _up(bias)
        out[...] = y
        return
    np.matmul(x, weight.T, out=out)
    if bias is not None:
        np.add(out, bias, out=out)


def softmax(out, x, *, dim):
    if x.size == 0:                 # nothing to normalise (max of an empty dim has no identity)
        return
    xs = _up(x)
    shifted = np.asarray(xs - xs.max(axis=dim, keepdims=True))   # 0-d stays an array
    e = np.exp(shifted, out=shifted)
    e /= e.sum(axis=dim, keepdims=True)
    out[...] = e


def log_softmax(out, x, *, dim):
    if x.size == 0:                 # nothing to normalise (max of an empty dim has no identity)
        return
    xs = _up(x)
    shifted = np.asarray(xs - xs.max(axis=dim, keepdims=True))
    shifted -= np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
    out[...] = shifted


KERNELS = {"linear": linear, "softmax": softmax, "log_softmax": log_softmax}
