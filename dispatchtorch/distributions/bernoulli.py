"""Bernoulli(probs | logits): torch.bernoulli samples, log_prob and entropy as
binary cross-entropy with logits (PyTorch's torch/distributions/bernoulli.py)."""
from __future__ import annotations

import math
from numbers import Number

from .. import autograd as _autograd
from .. import ops as _ops
from .._shape import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _BinaryParam, _expanded, _softplus, broadcast_all

__all__ = ["Bernoulli"]


def _bce_with_logits(logits, target):
    """binary_cross_entropy_with_logits(reduction='none'), in public ops."""
    return _softplus(logits) - logits * target


class Bernoulli(_BinaryParam, ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Bernoulli, batch_shape, _instance, ("probs", "logits"))

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs)
        mode[self.probs == 0.5] = math.nan
        return mode

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with _autograd.no_grad():
            return _ops.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_with_logits(logits, value)

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand=True):
        values = _ops.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    @property
    def _natural_params(self):
        return (_ops.logit(self.probs),)

    def _log_normalizer(self, x):
        return _softplus(x)
