"""NegativeBinomial(total_count, probs | logits): failures before total_count successes;
samples as PyTorch's, Poisson of a Gamma(total_count, exp(-logits)) rate."""
from __future__ import annotations

from .. import autograd as _autograd
from .. import ops as _ops
from .._shape import Size
from ..ops.random_counts import poisson_sample
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import _BinaryParam, _expanded, _softplus, broadcast_all, lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(_BinaryParam, Distribution):
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, NegativeBinomial, batch_shape, _instance,
                         ("total_count", "probs", "logits"))

    @property
    def mean(self):
        return self.total_count * _ops.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / _ops.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=_ops.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape=Size()):
        with _autograd.no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return poisson_sample(rate.contiguous())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # logsigmoid(x) = -softplus(-x)
        log_unnormalized_prob = (-self.total_count * _softplus(self.logits)
                                 - value * _softplus(-self.logits))
        log_normalization = (-_ops.lgamma(self.total_count + value) + _ops.lgamma(1.0 + value)
                             + _ops.lgamma(self.total_count))
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization
