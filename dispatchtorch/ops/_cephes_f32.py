"""float32 log and sincos exactly as PyTorch's randn computes them.

`torch.randn` on a contiguous float32 tensor of 16+ elements runs Box-Muller through
`log256_ps` / `sincos256_ps` (ATen's avx_mathfun.h: Cephes polynomials, not libm),
compiled with every multiply that feeds an add fused into an FMA. Replaying those
steps lane-wise in numpy float32 reproduces PyTorch's numbers bit for bit; libm's
logf/cosf differ in the last bit for about a third of the values. An FMA of float32
operands is exact in float64 up to the final rounding, which is how `_fma` gets it.
"""
from __future__ import annotations

import numpy as np

f32 = np.float32
_u32 = np.uint32


def _fma(a, b, c):
    return (np.asarray(a, np.float64) * np.asarray(b, np.float64)
            + np.asarray(c, np.float64)).astype(f32)


_LOG_POLY = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
             1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
             3.3333331174e-1)


def log(x):
    x = np.maximum(x, np.array(0x00800000, _u32).view(f32))
    bits = x.view(_u32)
    e = ((bits >> _u32(23)).astype(np.int32) - 0x7F).astype(f32) + f32(1)
    x = ((bits & ~_u32(0x7F800000)) | np.array(0.5, f32).view(_u32)).view(f32)
    small = x < f32(0.707106781186547524)
    tmp = np.where(small, x, f32(0))
    x = x - f32(1)
    e = np.where(small, e - f32(1), e)
    x = x + tmp
    z = x * x
    y = np.full_like(x, f32(_LOG_POLY[0]))
    for c in _LOG_POLY[1:]:
        y = _fma(y, x, f32(c))
    y = y * x
    y = _fma(y, z, e * f32(-2.12194440e-4))
    y = _fma(z, f32(-0.5), y)
    return _fma(e, f32(0.693359375), x + y)


def sincos(theta):
    bits = theta.view(_u32)
    sign_sin = bits & _u32(0x80000000)
    x = (bits & _u32(0x7FFFFFFF)).view(f32)
    quadrant = (x * f32(1.27323954473516)).astype(np.int32)
    quadrant = (quadrant + 1) & ~np.int32(1)
    q = quadrant.astype(f32)
    sign_sin = sign_sin ^ ((quadrant & 4).astype(_u32) << _u32(29))
    sign_cos = ((~(quadrant - 2) & 4).astype(_u32)) << _u32(29)
    use_sine_poly = (quadrant & 2) == 0
    for c in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8):
        x = _fma(q, f32(c), x)
    z = x * x
    yc = _fma(f32(2.443315711809948e-5), z, f32(-1.388731625493765e-3))
    yc = _fma(yc, z, f32(4.166664568298827e-2))
    yc = _fma(yc * z, z, -(z * f32(0.5))) + f32(1)
    ys = _fma(f32(-1.9515295891e-4), z, f32(8.3321608736e-3))
    ys = _fma(ys, z, f32(-1.6666654611e-1))
    ys = _fma(ys * z, x, x)
    s = np.where(use_sine_poly, ys, yc)
    c = np.where(use_sine_poly, yc, ys)
    return (s.view(_u32) ^ sign_sin).view(f32), (c.view(_u32) ^ sign_cos).view(f32)
