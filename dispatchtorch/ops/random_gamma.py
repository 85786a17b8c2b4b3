"""The samples of torch._standard_gamma and torch._sample_dirichlet: ATen's CPU sampler
(aten/src/ATen/native/Distributions.h's sample_gamma, Marsaglia and Tsang with the alpha
< 1 boost, over uniform_real_distribution<double> and normal_distribution<double>, whose
spare Box-Muller value stays on the engine), element by element in the tensor's order as
ATen's cpu_serial_kernel, so a seed gives PyTorch's numbers. float32 parameters are
rounded where ATen computes in `scalar_t`; the rest is double, as its `accscalar_t`.

Samples only, outside autograd: dispatchtorch.distributions differentiates them."""
from __future__ import annotations

import math

import numpy as np

from . import random as R
from .creation import empty
from .random_counts import _Uniforms, _host_values, _sampled

_THIRD_F = float(np.float32(1.0) / np.float32(3.0))      # 1.0f / 3.0f
_C_F = float(np.float32(0.0331))                          # 0.0331f


class _Normals:
    """normal_distribution<double>(0, 1) on the engine: pairs from two uniforms, the spare
    (r sin theta) kept for the next draw, and left on the engine at the end."""

    def __init__(self, eng, uniforms):
        self.eng, self.u = eng, uniforms
        self.spare, eng.next_double_normal = eng.next_double_normal, None

    def __call__(self):
        if self.spare is not None:
            x, self.spare = self.spare, None
            return x
        u1, u2 = self.u(), self.u()
        r = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        self.spare = r * math.sin(theta)
        return r * math.cos(theta)

    def finish(self):
        self.eng.next_double_normal = self.spare


def _gamma_one(alpha, u, n, single):
    """sample_gamma for one alpha (`single`: float32 scalar_t arithmetic on alpha)."""
    f = (lambda v: float(np.float32(v))) if single else (lambda v: v)
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        scale *= math.pow(1 - u(), f(1.0 / alpha))
        alpha = f(alpha + 1.0)
    d = f(alpha - _THIRD_F)
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            x = n()
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        uu = 1 - u()
        xx = x * x
        if uu < 1.0 - _C_F * xx * xx:
            return scale * d * v
        if math.log(uu) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def _gammas(eng, alphas, single):
    u = _Uniforms(eng)
    n = _Normals(eng, u)
    try:
        return [_gamma_one(a, u, n, single) for a in alphas]
    finally:
        u.finish()          # (restoring the engine's state first: it holds the spare too)
        n.finish()


def standard_gamma_sample(alpha, generator=None):
    """Gamma(alpha, 1) draws of alpha's shape and dtype (float32 or float64), each at
    least the dtype's smallest normal number, as ATen's _s_gamma_cpu."""
    if alpha._place.type == "meta":
        return empty(alpha._shape, dtype=alpha.dtype, device=alpha.device)
    single = alpha.dtype.name != "float64"
    tiny = float(np.finfo(np.float32 if single else np.float64).tiny)
    values = R.draw(generator, _gammas, _host_values(alpha), single)
    if single:
        values = [float(np.float32(v)) for v in values]
    return _sampled([max(tiny, v) for v in values], alpha)


def dirichlet_sample(alpha, generator=None):
    """Dirichlet draws over alpha's last dim, as ATen's _s_dirichlet_cpu: double Gammas,
    normalised, clamped to [smallest normal, the float below 1] of alpha's dtype."""
    if alpha._place.type == "meta":
        return empty(alpha._shape, dtype=alpha.dtype, device=alpha.device)
    np_dtype = np.float64 if alpha.dtype.name == "float64" else np.float32
    g = np.asarray(R.draw(generator, _gammas, _host_values(alpha), False), np.float64)
    g = np.maximum(g, np.finfo(np.float64).tiny).reshape(tuple(alpha._shape))
    x = (g / g.sum(-1, keepdims=True)).astype(np_dtype)
    hi = np.nextafter(np_dtype(1.0), np_dtype(0.0))
    return _sampled(np.clip(x, np.finfo(np_dtype).tiny, hi).ravel().tolist(), alpha)
