"""Poisson(rate): torch.poisson's samples (ATen's sampler, draw for draw)."""
from __future__ import annotations

from numbers import Number

from .. import autograd as _autograd
from .. import ops as _ops
from .._shape import Size
from ..ops.random_counts import poisson_sample
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _expanded, broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Poisson, batch_shape, _instance, ("rate",))

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with _autograd.no_grad():
            return poisson_sample(self.rate.expand(shape).contiguous())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (_ops.log(self.rate),)

    def _log_normalizer(self, x):
        return _ops.exp(x)
