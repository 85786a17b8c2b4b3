"""gelu (x Phi(x)) and its derivative (Phi(x) + x phi(x)) of float32 blocks, with fewer
whole-block numpy passes than gelu's decomposition through erf32.

Through erf, gelu's forward took about 21 passes of the whole block and its backward
about 27 (erf, then the exp of phi, itself about three passes' time); here 19 each
(plus the gathered tail's calls in both routes). Here each is one even polynomial
in z = x**2 on |x| < sqrt(2) (84-100% of a block's elements for inputs of standard
deviation 0.5-1) and a gathered tail formula for the rest:

- |x| < sqrt(2): Phi(x) = 0.5 + x T(z), so gelu(x) = x (0.5 + x T(z)); gelu'(x) =
  0.5 + x D(z), D = T + phi in one polynomial (no exp on the whole block);
- |x| >= sqrt(2): Phi(-|x|) = 0.5 exp(-x**2 / 2) t M(t), t = 1 / (1 + p |x|) (erfc
  through erfcx, p = 0.3275911 / sqrt(2)), Phi(|x|) = 1 - Phi(-|x|). The negative tail
  is formed directly, not as 1 + erf(x / sqrt 2) = 1 - 0.99..., so gelu(-6) is
  -5.9e-9 where PyTorch's and the decomposition's cancellation give -0.0.

The tail's ~20 calls on a few hundred gathered elements cost about what the whole
block's passes do, so blocks are 4x erf32's (BLOCK). Measured on the tiny
transformer's step (benchmarks.profile_kernels, 3 alternations against the erf route):
gelu_backward 3.1-3.4 ms a step against 4.8-8.7, the forward unchanged (5.6-7.9 ms
against 5.2-8.0: fewer passes, but the tail's calls).

T, D (degree 6) and M (degree 9) are least-squares fits in float64 against scipy's
ndtr and erfcx at 3000 Chebyshev nodes (relative fit errors 1.2e-9, 1.1e-8 and
9.9e-9), rounded to float32. Against float64 (tests/nn/test_phi32.py): gelu within
11 ulp on |x| < 1.5 (cancellation of 0.5 + x T near x = -1.4), 9 on 1.5-3, 14 on 3-5,
80 on 5-14 (exp's argument -x**2 / 2 rounded), never more than 4e-7 absolute; gelu'
within 8, 12 and 80 ulp there and 2.5e-7 absolute (near its zero at x = -0.75 only the
absolute bound means anything). The erf route: 104 ulp on 1.5-3 and every digit lost
beyond -5. NaN stays NaN, gelu(inf) = inf, gelu(-inf) = nan, gelu'(+-inf) = nan,
gelu(-0.0) = -0.0: the decomposition's values (PyTorch's vectorised loop gives nan
for gelu(inf)).
"""
from __future__ import annotations

import numpy as np

_f = np.float32
_T = [_f(c) for c in (4.3388402559685346e-07, -8.850197446008679e-06, 0.00011464718409115449,
                      -0.0011867823777720332, 0.0099733741953969, -0.06649035960435867,
                      0.3989422917366028)]
_D = [_f(c) for c in (5.68110908716335e-06, -0.00010400183964520693, 0.001141875865869224,
                      -0.009489856660366058, 0.05983835458755493, -0.2659611403942108,
                      0.7978845238685608)]
_M = [_f(c) for c in (-0.011420994065701962, -0.02596641331911087, 0.08353736251592636,
                      0.0220977570861578, 0.10782535374164581, 0.123841293156147,
                      0.1554405838251114, 0.17488431930541992, 0.18482397496700287,
                      0.18482348322868347)]
_P = _f(0.23164188861846924)           # 0.3275911 / sqrt(2)
_ONE, _TWO, _HALF, _MHALF = _f(1), _f(2), _f(0.5), _f(-0.5)
_INV_SQRT_2PI = _f(0.3989422804014327)
BLOCK = 131072         # elements a block: the tail's ~20 numpy calls on a few hundred gathered
                       # elements cost the same on 4x the block


def _poly(z, coeffs):
    r = np.multiply(z, coeffs[0])
    r += coeffs[1]
    for c in coeffs[2:]:
        r *= z
        r += c
    return r


def _tail(xl):
    """(Phi(xl), exp(-xl**2 / 2)) for the gathered |xl| >= sqrt(2)."""
    t = np.abs(xl)
    t *= _P
    t += _ONE
    np.divide(_ONE, t, out=t)              # numpy's divide is SIMD, reciprocal is not
    m = _poly(t, _M)
    m *= t                                  # erfcx(|x| / sqrt 2)
    ex = np.multiply(xl, xl)
    ex *= _MHALF
    np.exp(ex, out=ex)
    m *= ex
    m *= _HALF                              # Phi(-|x|), no cancellation
    return np.where(xl < 0, m, _ONE - m), ex


def gelu(o, x):
    """o = x Phi(x) for the 1-d float32 block x (o may be x)."""
    z = np.multiply(x, x)
    large = np.flatnonzero(z >= _TWO)
    xl = x[large] if large.size else None   # gathered before o (maybe x) is written
    r = _poly(z, _T)
    r *= x
    r += _HALF
    np.multiply(r, x, out=o)                # x (0.5 + x T): -0.0 stays -0.0
    if xl is not None:
        phi, _ = _tail(xl)
        o[large] = np.multiply(phi, xl, out=phi)


def gelu_backward(o, g, x):
    """o = g (Phi(x) + x phi(x)) for 1-d float32 blocks (o may be g or x)."""
    z = np.multiply(x, x)
    large = np.flatnonzero(z >= _TWO)
    r = _poly(z, _D)
    r *= x
    r += _HALF
    if large.size:
        xl = x[large]
        phi, ex = _tail(xl)
        ex *= _INV_SQRT_2PI
        ex *= xl
        ex += phi
        r[large] = ex
    np.multiply(r, g, out=o)
