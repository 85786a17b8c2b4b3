"""GeneralizedPareto(loc, scale, concentration): rsample by inversion of torch.rand,
PyTorch's log_prob / cdf / icdf with the concentration == 0 (exponential) limit."""
from __future__ import annotations

import math
from numbers import Number, Real

from .. import ops as _ops
from .._shape import Size
from . import constraints
from .distribution import Distribution
from .utils import _expanded, broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, Number) for v in (loc, scale, concentration))
        super().__init__(Size() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, GeneralizedPareto, batch_shape, _instance,
                         ("loc", "scale", "concentration"))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(_ops.rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def _safe(self):
        eq_zero = _ops.isclose(self.concentration, _ops.zeros_like(self.concentration))
        return eq_zero, _ops.where(eq_zero, _ops.ones_like(self.concentration),
                                   self.concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe()
        y = 1 / safe_conc + _ops.ones_like(z)
        where_nonzero = _ops.where(y == 0, y, y * _ops.log1p(safe_conc * z))
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -log_scale - _ops.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe()
        return _ops.where(eq_zero, -z, -_ops.log1p(safe_conc * z) / safe_conc)

    def log_cdf(self, value):
        return _ops.log1p(-_ops.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return _ops.exp(self.log_cdf(value))

    def icdf(self, value):
        eq_zero, safe_conc = self._safe()
        logu = _ops.log1p(-value)
        where_nonzero = self.loc + self.scale / safe_conc * _ops.expm1(-safe_conc * logu)
        return _ops.where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        valid = self.concentration < 1
        safe_conc = _ops.where(valid, self.concentration, 0.5)
        return _ops.where(valid, self.loc + self.scale / (1 - safe_conc), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe_conc = _ops.where(valid, self.concentration, 0.25)
        result = self.scale ** 2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return _ops.where(valid, result, math.nan)

    def entropy(self):
        ans = _ops.log(self.scale) + self.concentration + 1
        return _ops.broadcast_to(ans, tuple(self._batch_shape))

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = _ops.where(self.concentration < 0, lower - self.scale / self.concentration,
                           math.inf)
        return constraints.interval(lower, upper)
