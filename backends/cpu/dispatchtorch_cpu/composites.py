"""Kernels of their own for composite ops whose decomposition costs several passes.

The frontend still records the composites' own derivative rules, so these only have
to compute the forward value, in the row's calling convention (see dispatchtorch/ops/nn_ops/).
"""
from __future__ import annotations

import math

import numpy as np

from . import c_layer_norm as _c_layer_norm
from . import c_softmax as _c_softmax
from . import parallel as P
from .blas_sums import MIN as _BLAS_MIN, blas_sum as _blas_sum
from .kernels import _F32, _LOWP, _sum
from .threaded import chunked as _chunked


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


def _sum_kept(x, dims):
    """x.sum(axis=dims, keepdims=True), by one BLAS gemv where blas_sums.py applies
    (short rows: softmax over attention scores, layer_norm's means)."""
    if x.size >= _BLAS_MIN:
        out = np.empty(tuple(1 if d in dims else n for d, n in enumerate(x.shape)), x.dtype)
        if _blas_sum(out, x, dims):
            return out
    return x.sum(axis=dims, keepdims=True)


def _by_rows(kernel, out, x, dims, *args, **kw):
    """kernel on blocks of rows (axis 0) when the op works along other dims only and x
    is large: each block's passes run in cache, and the blocks on the thread pool."""
    if x.size < P.THRESHOLD or x.ndim < 2 or 0 in dims or P.POOL.threads < 1:
        return kernel(out, x, *args, **kw)
    rows = x.shape[0]
    n = max(2, min(rows, x.size // P.CHUNK))
    ranges = P.bounds(rows, n)

    def part(i):
        a, b = ranges[i]
        kernel(out[a:b], x[a:b], *args, **kw)
    P.POOL.run(n, part)


def _softmax(out, x, dim):
    xs = _up(x)
    if out.dtype in _LOWP or out.ndim == 0:
        shifted = np.asarray(xs - xs.max(axis=dim, keepdims=True))   # 0-d stays an array
        e = np.exp(shifted, out=shifted)
        e /= e.sum(axis=dim, keepdims=True)
        out[...] = e
        return
    np.subtract(xs, xs.max(axis=dim, keepdims=True), out=out)      # in out: no copy
    np.exp(out, out=out)
    out /= _sum_kept(out, (dim % out.ndim,))


def _log_softmax(out, x, dim):
    xs = _up(x)
    if out.dtype in _LOWP or out.ndim == 0:
        shifted = np.asarray(xs - xs.max(axis=dim, keepdims=True))
        shifted -= np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
        out[...] = shifted
        return
    np.subtract(xs, xs.max(axis=dim, keepdims=True), out=out)
    out -= np.log(np.exp(out).sum(axis=dim, keepdims=True))


def softmax(out, x, *, dim):
    if x.size == 0:                 # nothing to normalise (max of an empty dim has no identity)
        return
    if _c_softmax.applies(out, x, dim):
        return _c_softmax.run(out, x, 0)
    _by_rows(_softmax, out, x, (dim % max(x.ndim, 1),), dim)


def log_softmax(out, x, *, dim):
    if x.size == 0:
        return
    if _c_softmax.applies(out, x, dim):
        return _c_softmax.run(out, x, 1)
    _by_rows(_log_softmax, out, x, (dim % max(x.ndim, 1),), dim)


def _layer_norm(out, x, weight, bias, dims, eps):
    """(x - mean) / sqrt(var + eps) * weight + bias, the biased variance, in out."""
    xs = _up(x)
    wide = out.dtype in _LOWP
    y = np.empty(x.shape, _F32) if wide else out
    if xs.dtype == y.dtype:
        mean = _sum_kept(xs, dims)
        mean /= math.prod(xs.shape[d] for d in dims)
    else:
        mean = xs.mean(axis=dims, keepdims=True)
    np.subtract(xs, mean, out=y)
    if y.flags.c_contiguous and len(dims) == 1 and y.shape[-1] <= 4096:
        # the variance without a squared copy (rows short enough for einsum's sums)
        rows = y.reshape(-1, y.shape[-1])
        var = np.einsum("ij,ij->i", rows, rows).reshape(y.shape[:-1] + (1,))
        var /= y.shape[-1]
    else:
        var = np.square(y).mean(axis=dims, keepdims=True)
    var += eps
    y /= np.sqrt(var, out=var)
    if weight is not None:
        y *= _up(weight)
    if bias is not None:
        y += _up(bias)
    else:
        y += 0.0        # PyTorch's kernel adds beta = 0 without a bias: +0.0, not -0.0
    if wide:
        out[...] = y


def layer_norm(out, x, weight, bias, *, normalized_shape, eps):
    n = math.prod(normalized_shape)
    if _c_layer_norm.applies(x, (), n, weight, bias, written=out):
        return _c_layer_norm.forward(out, x, weight, bias, n, eps)
    dims = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    _by_rows(_layer_norm, out, x, dims, weight, bias, dims, eps)


def _dropout(out, x, mask, scale):
    np.multiply(x, mask, out=out)       # the bool mask cast inside the loop: no float copy
    out *= scale


def dropout(out, x, mask, *, scale):
    """(x * mask) * scale, the decomposition's two roundings, in out (one pass less and
    no float copy of the mask); large arrays in chunks on the pool."""
    if out.dtype in _LOWP:      # the scalar in out's dtype, as the mul prim takes it
        out[...] = np.multiply(_up(x), mask) * np.float32(out.dtype.type(scale))
    elif out.size >= P.THRESHOLD:
        _chunked(lambda o, a, m: _dropout(o, a, m, scale), out, (x, mask))
    else:
        _dropout(out, x, mask, scale)


def _total(x):
    out = np.empty((), x.dtype)
    _sum(out, x, dims=tuple(range(x.ndim)), keepdim=False)
    return out


def nll_loss(out, x, target, weight, *, reduction, ignore_index):
    """The decomposition's passes (ops/nn_ops/loss.py) in one kernel call: w = (target !=
    ignore_index) [* weight[safe]], losses = -(x[n, safe] * w), 'mean' divides their sum
    by w's; the same numpy operations and sum kernel, so the same bits. Half precision in
    float32, rounded once. It spares the MLP step's forward nine ops (about 50 us of 100)."""
    xs, ws = _up(x), _up(weight)
    cdim = 1 if xs.ndim > 1 else 0
    valid = target != ignore_index
    safe = np.where(valid, target, 0)
    w = valid.astype(xs.dtype) if ws is None else ws[safe] * valid
    picked = np.take_along_axis(xs, np.expand_dims(safe, cdim), cdim).squeeze(cdim) \
        if xs.ndim > 1 else xs[safe]
    losses = np.negative(np.multiply(picked, w))
    if reduction == "none":
        out[...] = losses
    elif reduction == "sum":
        out[...] = _total(losses)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):     # all ignored: 0 / 0
            out[...] = np.true_divide(_total(losses), _total(w))


def nll_loss_backward(out, g, x, target, weight, *, reduction, ignore_index):
    """The nll_loss_backward row's decomposition (ops/nn_ops/loss.py) in one call, the
    same numpy operations and sum kernel: coef = -(w * g (/ w's sum for mean)) where the
    target is kept, +0.0 where not, put at each target's class in a zeroed out."""
    wide = out.dtype in _LOWP
    gs, ws = _up(g), _up(weight)
    dtype = _F32 if wide else out.dtype
    cdim = 1 if x.ndim > 1 else 0
    valid = target != ignore_index
    safe = np.where(valid, target, 0)
    w = valid.astype(dtype) if ws is None else ws[safe] * valid
    if reduction == "mean":
        with np.errstate(divide="ignore", invalid="ignore"):     # all ignored: g / 0
            gs = np.true_divide(gs, _total(w))
    coef = np.where(valid, np.negative(np.multiply(w, gs)), np.zeros((), dtype))
    gx = np.zeros(out.shape, dtype) if wide else out
    if not wide:
        gx.fill(0)
    if gx.ndim > 1:
        np.put_along_axis(gx, np.expand_dims(safe, cdim), np.expand_dims(coef, cdim), cdim)
    else:
        gx[safe] = coef
    if wide:
        out[...] = gx


KERNELS = {"dropout": dropout, "linear": linear, "softmax": softmax, "log_softmax": log_softmax,
           "layer_norm": layer_norm, "nll_loss": nll_loss, "nll_loss_backward": nll_loss_backward}
