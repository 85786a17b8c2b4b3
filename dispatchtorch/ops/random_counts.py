"""The samplers of torch.poisson and torch.binomial: ATen's CPU ones (aten/src/ATen/native/
Distributions.cpp's sample_poisson, Distributions.h's sample_binomial, btrs and
binomial_inversion), draw for draw on the mt19937 stream, so a seed gives PyTorch's
counts. Element by element in the tensor's order, as ATen's cpu_serial_kernel; each
draw is uniform_real_distribution<double>(0, 1). binomial's float32 arithmetic is
rounded to float32 where ATen's is (its `scalar_t`), poisson's is all double.

These make the samples only, outside autograd; dispatchtorch._torch_level.random_counts
holds torch.poisson / torch.binomial, with their arguments' checks and PyTorch's
derivatives (zero for poisson, an error for binomial)."""
from __future__ import annotations

import math

import numpy as np

from . import random as R
from .creation import _from_host, empty

_MASK53 = np.uint64((1 << 53) - 1)
_BLOCK = 256


class _Uniforms:
    """The engine's doubles in [0, 1), read in blocks; finish() leaves the engine as if
    exactly the doubles used had been drawn (it replays them from the saved state)."""

    def __init__(self, eng):
        self.eng, self.saved = eng, eng.state_bytes()
        self.buf, self.i, self.drawn = [], 0, 0

    def __call__(self):
        if self.i == len(self.buf):
            n = min(_BLOCK << min(self.drawn // _BLOCK, 8), 1 << 16)
            self.buf = ((self.eng.random64(n) & _MASK53).astype(np.float64) * 2.0 ** -53).tolist()
            self.i, self.drawn = 0, self.drawn + n
        self.i += 1
        return self.buf[self.i - 1]

    def finish(self):
        used = self.drawn - (len(self.buf) - self.i)
        if used != self.drawn:
            self.eng.load_state_bytes(self.saved)
            if used:
                self.eng.random64(used)


def _log(x):
    """C's log: -inf at 0 (Python's raises)."""
    return math.log(x) if x > 0 else -math.inf


def _poisson_one(lam, u):
    """sample_poisson: Hoermann's transformed rejection for lambda >= 10, else the
    product of uniforms."""
    if lam >= 10:
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            U = u() - 0.5
            V = u()
            us = 0.5 - abs(U)
            if us == 0:                 # C: floor(-inf), so k < 0: rejected
                continue
            k = math.floor((2 * a / us + b) * U + lam + 0.43)
            if us >= 0.07 and V <= vr:
                return k
            if k < 0 or (us < 0.013 and V > us):
                continue
            if (_log(V) + math.log(invalpha) - math.log(a / (us * us) + b)
                    <= -lam + k * loglam - math.lgamma(k + 1.0)):
                return k
    if lam == 0:
        return 0
    enlam, x, prod = math.exp(-lam), 0, 1.0
    while True:
        prod *= u()
        if prod > enlam:
            x += 1
        else:
            return x


_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
         0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
         0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k):
    if k <= 9:
        return _TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _inversion(count, prob, u, S):
    logprob = S(math.log1p(S(-prob)))
    geom_sum, num = 0.0, 0.0
    while True:
        U = u()
        geom = math.inf if U == 0 else float(math.ceil(math.log(U) / logprob))
        geom_sum += geom
        if geom_sum > count:
            return num
        num = S(num + 1)


def _btrs(count, prob, u, S):
    """Hoermann's BTRS, with ATen's scalar_t (S) and double operations."""
    stddev = S(math.sqrt(S(S(count * prob) * S(1 - prob))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = S(count * prob) + 0.5
    v_r = 0.92 - 4.2 / b
    r = S(prob / S(1 - prob))
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor(S(S(count + 1) * prob))
    while True:
        U = u() - 0.5
        V = u()
        us = 0.5 - abs(U)
        if us == 0:                     # C: floor(-inf), so k < 0: rejected
            continue
        k = S(math.floor((2 * a / us + b) * U + c))
        if k < 0 or k > count:
            continue
        if us >= 0.07 and V <= v_r:
            return k
        V = _log(V * alpha / (a / (us * us) + b))
        cmk1 = S(S(count - k) + 1)
        upperbound = ((m + 0.5) * math.log((m + 1) / (r * (count - m + 1)))
                      + S(count + 1) * math.log((count - m + 1) / cmk1)
                      + (k + 0.5) * math.log(r * cmk1 / S(k + 1))
                      + _stirling_tail(m) + _stirling_tail(count - m)
                      - _stirling_tail(k) - _stirling_tail(S(count - k)))
        if V <= upperbound:
            return k


def _binomial_one(count, prob, u, S):
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return count
    if prob <= 0.5:
        if S(count * prob) >= 10.0:
            return _btrs(count, prob, u, S)
        return _inversion(count, prob, u, S)
    if prob > 0.5:
        q = S(1.0 - prob)
        k = _btrs(count, q, u, S) if S(count * q) >= 10.0 else _inversion(count, q, u, S)
        return S(count - k)
    return math.nan


def _float32(x):
    return float(np.float32(x))


def _identity(x):
    return x


def _draw_all(eng, fn, *columns):
    u = _Uniforms(eng)
    try:
        return [fn(*values, u) for values in zip(*columns)]
    finally:
        u.finish()


def _host_values(t):
    return np.asarray(t.detach()._host(), dtype=np.float64).ravel().tolist()


def _sampled(values, like):
    return _from_host(np.asarray(values, np.float64).reshape(like._shape), like.dtype,
                      like.device, op="sample")


def poisson_sample(rates, generator=None):
    """Counts drawn with the (non-negative, floating) `rates`; checked by the caller."""
    if rates._place.type == "meta":
        return empty(rates._shape, dtype=rates.dtype, device=rates.device)
    return _sampled(R.draw(generator, _draw_all, _poisson_one, _host_values(rates)), rates)


def binomial_sample(count, prob, generator=None):
    """Counts of `count` trials with success probability `prob` (float32 or float64, one
    dtype, prob of count's shape); checked by the caller."""
    if count._place.type == "meta":
        return empty(count._shape, dtype=count.dtype, device=count.device)
    S = _identity if count.dtype.name == "float64" else _float32
    values = R.draw(generator, _draw_all, lambda n, p, u: _binomial_one(n, p, u, S),
                    _host_values(count), _host_values(prob))
    return _sampled(values, count)
