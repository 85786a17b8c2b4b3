"""Binomial(total_count, probs | logits): torch.binomial's samples (ATen's sampler),
PyTorch's overflow-safe log_prob, entropy by enumeration."""
from __future__ import annotations

from .. import autograd as _autograd
from .. import ops as _ops
from .._shape import Size
from ..ops.random_counts import binomial_sample
from . import constraints
from .distribution import Distribution
from .utils import _BinaryParam, _expanded, _softplus, broadcast_all

__all__ = ["Binomial"]


class Binomial(_BinaryParam, Distribution):
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
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
        return _expanded(self, Binomial, batch_shape, _instance,
                         ("total_count", "probs", "logits"))

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with _autograd.no_grad():
            return binomial_sample(self.total_count.expand(shape).contiguous(),
                                   self.probs.expand(shape).contiguous())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        # k log p + (n - k) log(1 - p) = k logit - n max(logit, 0) - n log1p(e^-|logit|)
        normalize_term = n * _softplus(self.logits) - _ops.lgamma(n + 1)
        return (value * self.logits - _ops.lgamma(value + 1) - _ops.lgamma(n - value + 1)
                - normalize_term)

    def entropy(self):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(_ops.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`.")
        values = _ops.arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
