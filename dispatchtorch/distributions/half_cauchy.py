"""HalfCauchy(scale): |Cauchy(0, scale)|, as PyTorch's TransformedDistribution."""
from __future__ import annotations

import math

from .. import ops as _ops
from . import constraints
from ._half import _HalfOf
from .cauchy import Cauchy

__all__ = ["HalfCauchy"]


class HalfCauchy(_HalfOf):
    arg_constraints = {"scale": constraints.positive}
    _base = Cauchy

    @property
    def mean(self):
        return _ops.full(self._extended_shape(), math.inf, dtype=self.scale.dtype,
                         device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance

    def _as_value(self, value):
        # PyTorch's HalfCauchy.log_prob takes a number too (HalfNormal's does not convert)
        return _ops.as_tensor(value, dtype=self.base_dist.scale.dtype,
                              device=self.base_dist.scale.device)
