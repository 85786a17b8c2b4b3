"""Fused CPU kernels for gelu and gelu_backward: every pass of the formula runs on one
block of BLOCK elements while it is in cache, and the blocks of a large array on the
thread pool.

The decomposition (dispatchtorch/ops/nn_ops/activation.py) makes five passes over the
whole array forward and eleven backward, each through the dispatcher and most into a
new buffer; the tiny transformer's step spent a quarter of its kernel time there.
The tanh form, float64 and small float32 arrays: each block performs the
decomposition's float operations in its order (x * 0.5 and (1 + e) * h are the same
roundings as 0.5 * x and h * (1 + e)), so the results are its bits. The erf form on
float32 arrays of ERF32_MIN elements or more (where erf would take erf32's
polynomials) evaluates x Phi(x) and its derivative directly instead (phi32.py: fewer
numpy calls, and the negative tail without 1 + erf's cancellation), as one C loop a
block where a compiler is found (c_phi32.py: the same operations, 4-5x faster); those
are within a few ulp of float64 (phi32's figures), not the decomposition's bits. float16/bfloat16 are computed
in float32 and rounded once.
"""
from __future__ import annotations

import math

import numpy as np

from . import c_phi32, parallel as P
from . import phi32
from .erf32 import _block as _erf32_block
from .kernels import ERF32_MIN, _F32, _LOWP, _erf

BLOCK = 32768                 # elements: a block's buffers stay in L2 (erf32's block)
_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_C = math.sqrt(2.0 / math.pi)   # tanh form: sqrt(2 / pi)
_K = 0.044715
_K3 = 3 * 0.044715


def _erf_for(x):
    """The erf a block of x uses: erf32's polynomials where the elementwise erf kernel
    would use them on the whole array (float32, ERF32_MIN elements or more)."""
    if x.dtype == _F32 and x.size >= ERF32_MIN:
        return _erf32_block

    def erf(t):
        return _erf(t, out=t)
    return erf


def _forward_none(o, b, erf):
    e = erf(np.multiply(b, _SQRT_HALF))
    e += 1.0
    np.multiply(np.multiply(b, 0.5), e, out=o)


def _forward_tanh(o, b, erf):
    a = np.multiply(b, _K)          # (x + 0.044715 * x * x * x) * sqrt(2 / pi)
    a *= b
    a *= b
    a += b
    a *= _C
    np.tanh(a, out=a)
    a += 1.0
    np.multiply(np.multiply(b, 0.5), a, out=o)


def _backward_none(o, gb, b, erf):
    cdf = erf(np.multiply(b, _SQRT_HALF))       # 0.5 (1 + erf(x / sqrt 2))
    cdf += 1.0
    cdf *= 0.5
    p = np.multiply(b, b)                       # x exp(-x^2 / 2) / sqrt(2 pi)
    p *= -0.5
    np.exp(p, out=p)
    p *= _INV_SQRT_2PI
    p *= b
    p += cdf
    np.multiply(p, gb, out=o)


def _backward_tanh(o, gb, b, erf):
    x2 = np.multiply(b, b)
    t = np.multiply(x2, _K)                     # tanh((x + 0.044715 x^3) sqrt(2 / pi))
    t *= b
    t += b
    t *= _C
    np.tanh(t, out=t)
    dinner = np.multiply(x2, _K3)               # (1 + 3 * 0.044715 x^2) sqrt(2 / pi)
    dinner += 1.0
    dinner *= _C
    left = np.add(t, 1.0)                       # 0.5 (1 + t)
    left *= 0.5
    np.multiply(t, t, out=t)                    # 0.5 x (1 - t^2) dinner
    np.subtract(1.0, t, out=t)
    r = np.multiply(b, 0.5)
    r *= t
    r *= dinner
    r += left
    np.multiply(gb, r, out=o)


def _phi_forward(o, b, erf):
    phi32.gelu(o, b)


def _phi_backward(o, gb, b, erf):
    phi32.gelu_backward(o, gb, b)


def _c_phi_forward(o, b, erf):
    c_phi32.gelu(o, b)


def _c_phi_backward(o, gb, b, erf):
    c_phi32.gelu_backward(o, gb, b)


_PHI = {_forward_none: _phi_forward, _backward_none: _phi_backward}
_C_PHI = {_forward_none: _c_phi_forward, _backward_none: _c_phi_backward}


def _blocks(block_fn, out, inputs):
    """block_fn(out_block, *input_blocks, erf) over flat contiguous blocks; the blocks on
    the pool for a large array. out may be non-contiguous or of a half dtype: the
    result is then made in a float32/contiguous buffer and copied once."""
    wide = out.dtype in _LOWP
    flat_in = [np.ascontiguousarray(x.astype(_F32) if wide else x).reshape(-1) for x in inputs]
    direct = not wide and out.flags.c_contiguous
    res = out.reshape(-1) if direct else np.empty(out.size, _F32 if wide else out.dtype)
    erf = _erf_for(flat_in[-1])
    block = BLOCK
    if erf is _erf32_block and block_fn in _PHI:
        block_fn, block = (_C_PHI if c_phi32.kernels() else _PHI)[block_fn], phi32.BLOCK
    size = res.size
    n = -(-size // block)

    def part(i):
        s = slice(i * block, (i + 1) * block)
        block_fn(res[s], *(x[s] for x in flat_in), erf)
    if size >= P.THRESHOLD and P.POOL.threads > 1:
        P.POOL.run(n, part)
    else:
        for i in range(n):
            part(i)
    if not direct:
        out[...] = res.reshape(out.shape)


def gelu(out, x, *, approximate):
    _blocks(_forward_tanh if approximate == "tanh" else _forward_none, out, (x,))


def gelu_backward(out, grad_output, x, *, approximate):
    _blocks(_backward_tanh if approximate == "tanh" else _backward_none, out,
            (grad_output, x))


KERNELS = {"gelu": gelu, "gelu_backward": gelu_backward}
