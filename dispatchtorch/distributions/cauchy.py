"""Cauchy(loc, scale): rsample loc + cauchy_() * scale, PyTorch's draw; mean and
variance are nan / inf, as PyTorch's."""
from __future__ import annotations

import math
from numbers import Number

from .. import ops as _ops
from .._shape import Size
from . import constraints
from .distribution import Distribution
from .utils import _expanded, broadcast_all

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = Size() if isinstance(loc, Number) and isinstance(scale, Number) \
            else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Cauchy, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return _ops.full(self._extended_shape(), math.nan, dtype=self.loc.dtype,
                         device=self.loc.device)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return _ops.full(self._extended_shape(), math.inf, dtype=self.loc.dtype,
                         device=self.loc.device)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = self.loc.new_empty(shape).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - self.scale.log() - (z ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _ops.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return _ops.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
