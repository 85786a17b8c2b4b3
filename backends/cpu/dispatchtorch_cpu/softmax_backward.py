"""The CPU kernels of the softmax_backward row, (g - sum(g y)) y along dim in three
passes, and of the log_softmax_backward row (below).

The row's decomposition (dispatchtorch/ops/nn_ops/softmax.py) is four frontend ops,
each a pass over the whole array into a new buffer, its sum a numpy reduction along
a short axis (the attention scores' 64: a slow inner loop). Here the row dot
products sum(g y) are one einsum over rows of the last axis, then g - s and the
product with y are written in place in the output. float16/bfloat16 compute in
float32, rounded once (as the decomposition's row does). Contiguous float32/float64
arrays along the last axis take c_softmax.py's C row loop instead where a compiler is
found (the same formula and sign rule, the row dots in SIMD lanes).
"""
from __future__ import annotations

import numpy as np

from . import c_softmax as _c_softmax
from .kernels import _F32, _LOWP, _sum


def softmax_backward(out, g, y, *, dim):
    if y.size == 0:
        return
    if _c_softmax.applies_backward(out, g, y, dim):
        return _c_softmax.run_backward(out, g, y)
    wide = out.dtype in _LOWP
    if wide:
        g, y = g.astype(_F32), y.astype(_F32)
    if y.ndim == 0:
        res = np.multiply(y, np.subtract(g, np.multiply(g, y)))
        out[...] = res
        return
    dim %= y.ndim
    if dim != y.ndim - 1:
        g, y = np.moveaxis(g, dim, -1), np.moveaxis(y, dim, -1)
    n = y.shape[-1]
    g2 = np.ascontiguousarray(g).reshape(-1, n)
    y2 = np.ascontiguousarray(y).reshape(-1, n)
    s = np.einsum("ij,ij->i", g2, y2)
    if dim == y.ndim - 1 and not s.all():
        # PyTorch's last-dim kernel sums each row from its first element: -0.0 for a
        # row of -0.0 products (einsum starts from +0.0). Only rows that sum to zero
        # are looked at again (one test over the row sums, not the data).
        z = np.flatnonzero(s == 0)
        neg = np.signbit(np.multiply(g2[z], y2[z])).all(axis=1)
        s[z[neg]] = -0.0
    o = np.moveaxis(out, dim, -1) if dim != out.ndim - 1 else out
    direct = not wide and o.flags.c_contiguous
    res = o.reshape(-1, n) if direct else np.empty(g2.shape, g2.dtype)
    np.subtract(g2, s[:, None], out=res)
    res *= y2
    if not direct:
        np.copyto(o, res.reshape(o.shape), casting="unsafe")


def log_softmax_backward(out, g, y, *, dim):
    """The log_softmax_backward row: g - exp(y) s along dim, s = sum(g) with the sign of
    PyTorch's last-dim kernel (-|s| for a row whose terms all have the sign bit set), in
    the decomposition's operations (ops/nn_ops/softmax.py) and sum kernel: the same bits
    in one call instead of seven frontend ops."""
    if y.size == 0:
        return
    wide = out.dtype in _LOWP
    if wide:
        g, y = g.astype(_F32), y.astype(_F32)
    if y.ndim:
        dim %= y.ndim
        s = np.empty(tuple(1 if d == dim else n for d, n in enumerate(g.shape)), g.dtype)
        _sum(s, g, dims=(dim,), keepdim=True)
    else:
        s = np.array(g)
    if y.ndim == 0 or dim == y.ndim - 1:
        neg = np.signbit(g).all(axis=dim, keepdims=True) if y.ndim else np.signbit(g)
        if neg.any():
            s = np.where(neg, np.negative(np.abs(s)), s)
    res = np.empty(y.shape, y.dtype) if wide or y.ndim == 0 else out
    np.exp(y, out=res)
    res *= s
    np.negative(res, out=res)
    res += g
    if res is not out:
        out[...] = res


KERNELS = {"softmax_backward": softmax_backward, "log_softmax_backward": log_softmax_backward}
