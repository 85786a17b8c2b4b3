"""What HalfCauchy and HalfNormal share: |base(0, scale)| through an AbsTransform (they
differ only in their base distribution and its closed-form mean and variance)."""
from __future__ import annotations

import math

from .. import ops as _ops
from . import constraints
from .transformed_distribution import _SharedTransformed
from .transforms import AbsTransform


class _HalfOf(_SharedTransformed):
    """A subclass names its base in `_base` (a location-scale family: `_base(0, scale)`)."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _base = None

    def __init__(self, scale, validate_args=None):
        base_dist = self._base(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return _ops.zeros_like(self.scale)

    def _as_value(self, value):
        return value

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = self._as_value(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return _ops.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
