"""Laplace(loc, scale): rsample by inversion of uniform_(eps - 1, 1), PyTorch's draw."""
from __future__ import annotations

from numbers import Number

from .. import _dtype as D
from .. import ops as _ops
from .._shape import Size
from . import constraints
from .distribution import Distribution
from .utils import _expanded, broadcast_all

__all__ = ["Laplace"]


class Laplace(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = Size() if isinstance(loc, Number) and isinstance(scale, Number) \
            else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Laplace, batch_shape, _instance, ("loc", "scale"))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        finfo = D.finfo(self.loc.dtype)
        u = self.loc.new_empty(shape).uniform_(finfo.eps - 1, 1)
        return self.loc - self.scale * u.sign() * _ops.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -_ops.log(2 * self.scale) - _ops.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * _ops.expm1(
            -(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * _ops.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + _ops.log(2 * self.scale)


