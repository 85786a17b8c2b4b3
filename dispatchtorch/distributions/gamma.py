"""Gamma(concentration, rate): rsample through ATen's sampler with the implicit
reparameterization gradient (_standard_gamma.py), PyTorch's log_prob, entropy and cdf."""
from __future__ import annotations

from numbers import Number

from .. import _dtype as D
from .. import ops as _ops
from .._shape import Size
from . import constraints
from ._standard_gamma import standard_gamma
from .exp_family import ExponentialFamily
from .utils import _expanded, broadcast_all

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        batch_shape = Size() if isinstance(concentration, Number) and isinstance(rate, Number) \
            else self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Gamma, batch_shape, _instance, ("concentration", "rate"))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        # PyTorch clamps the values in place outside autograd: the gradient is unchanged
        return value + (value.detach().clamp(min=D.finfo(value.dtype).tiny) - value.detach())

    def log_prob(self, value):
        value = _ops.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (_ops.xlogy(self.concentration, self.rate)
                + _ops.xlogy(self.concentration - 1, value)
                - self.rate * value - _ops.lgamma(self.concentration))

    def entropy(self):
        return (self.concentration - _ops.log(self.rate) + _ops.lgamma(self.concentration)
                + (1.0 - self.concentration) * _ops.digamma(self.concentration))

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return _ops.lgamma(x + 1) + (x + 1) * _ops.log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _ops.igamma(self.concentration, self.rate * value)
