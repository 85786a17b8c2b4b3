"""The CPU kernel of the layer_norm_backward row: layer_norm's gradients in x, weight
and bias in blocks of rows that stay in cache.

The row's decomposition (dispatchtorch/ops/nn_ops/norm.py) recomputes the statistics
and forms the gradient in about twenty frontend ops, each a pass over the whole
array: 1.1 ms for a (32, 64, 64) float32 input against PyTorch's 0.29 ms. Here each
block of rows does those passes together: the row sums by BLAS (`rows @ ones`)
or einsum (`ij,ij->i`), the column sums of the weight and bias gradients per block,
added up in block order. float16/bfloat16 compute in float32, rounded once.
Contiguous float32/float64 inputs take c_layer_norm.py's C row loops instead where a
compiler is found.
"""
from __future__ import annotations

import math

import numpy as np

from . import c_layer_norm as _c_layer_norm
from . import parallel as P
from .kernels import _F32, _LOWP

BLOCK = 131072              # elements of x per block: the tiny transformer's (32, 64, 64) in
                            # one block, 0.59 ms a call against 0.85 in blocks of 32768 (the
                            # per-block calls cost more than leaving L2; medians of 7
                            # alternations). PyTorch's form (xhat never formed, grad weight
                            # as gemvs of g xc by rstd) was tried: 25% faster a block, but
                            # its grad weight rounds differently from PyTorch's g * xhat
                            # sums and a 300-row conformance sample then differed from
                            # PyTorch by 1.1e-5 (both within 2.1e-5 of float64)


def _block(g, x, w, eps, want_x, gx):
    """One block of rows (2-d, compute dtype): writes gx (if want_x) and returns the
    block's (sum of g * xhat, sum of g) over its rows."""
    n = x.shape[1]
    ones = np.ones(n, x.dtype)
    mean = x @ ones
    mean /= n
    xhat = x - mean[:, None]
    var = np.einsum("ij,ij->i", xhat, xhat)
    var /= n
    var += eps
    rstd = np.sqrt(var, out=var)
    np.reciprocal(rstd, out=rstd)
    xhat *= rstd[:, None]
    if want_x:
        gh = g * w if w is not None else g
        a = gh @ ones                                   # n mean(gh)
        b = np.einsum("ij,ij->i", gh, xhat)             # n mean(gh xhat)
        a *= rstd / n
        b *= rstd / n
        np.multiply(gh, rstd[:, None], out=gx)          # rstd (gh - mean(gh) - xhat mean(gh xhat))
        gx -= a[:, None]
        b = xhat * b[:, None]
        gx -= b
    return xhat, g


def layer_norm_backward(*args, normalized_shape, eps, output_mask):
    """The outputs output_mask asks for (grad x, grad weight, grad bias), then
    grad_output, x, weight (None without an affine weight)."""
    count = sum(output_mask)
    outs, (g, x, weight) = args[:count], args[count:]
    it = iter(outs)
    gx_out = next(it) if output_mask[0] else None
    gw_out = next(it) if output_mask[1] else None
    gb_out = next(it) if output_mask[2] else None
    wide = x.dtype in _LOWP
    dt = _F32 if wide else x.dtype
    n = math.prod(normalized_shape)
    if _c_layer_norm.applies(x, tuple(a for a in (g, gw_out, gb_out) if a is not None),
                             n, weight, None, written=gx_out):
        return _c_layer_norm.backward(gx_out, None if gw_out is None else gw_out.reshape(-1),
                                      None if gb_out is None else gb_out.reshape(-1),
                                      g, x, None if weight is None else weight.reshape(-1), n, eps)
    rows = x.size // n if n else 0
    x2 = np.ascontiguousarray(x, dtype=dt).reshape(rows, n)
    g2 = np.ascontiguousarray(g, dtype=dt).reshape(rows, n)
    w = None if weight is None else np.ascontiguousarray(weight, dtype=dt).reshape(n)
    direct = gx_out is not None and not wide and gx_out.flags.c_contiguous
    gx2 = (gx_out.reshape(rows, n) if direct else np.empty((rows, n), dt)) \
        if gx_out is not None else None
    step = max(1, BLOCK // max(n, 1))
    starts = range(0, rows, step)
    partial = [None] * len(starts)

    def part(i):
        s = slice(starts[i], starts[i] + step)
        xhat, gb = _block(g2[s], x2[s], w, eps, gx2 is not None,
                          gx2[s] if gx2 is not None else None)
        partial[i] = (np.einsum("ij,ij->j", gb, xhat) if gw_out is not None else None,
                      np.ones(gb.shape[0], dt) @ gb if gb_out is not None else None)
    if x.size >= P.THRESHOLD and P.POOL.threads > 1 and len(starts) > 1:
        P.POOL.run(len(starts), part)
    else:
        for i in range(len(starts)):
            part(i)
    if gx_out is not None and not direct:
        np.copyto(gx_out, gx2.reshape(gx_out.shape), casting="unsafe")
    for k, out in ((0, gw_out), (1, gb_out)):
        if out is not None:
            total = np.zeros(n, dt)
            for p in partial:
                total += p[k]
            np.copyto(out, total.reshape(out.shape), casting="unsafe")


KERNELS = {"layer_norm_backward": layer_norm_backward}
