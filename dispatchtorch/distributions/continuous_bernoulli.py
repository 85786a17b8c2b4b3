"""ContinuousBernoulli(probs | logits) on [0, 1] (Loaiza-Ganem & Cunningham, 2019):
PyTorch's formulas, with its Taylor expansions near probs = 1/2 (`lims`)."""
from __future__ import annotations

import math
from numbers import Number

from .. import autograd as _autograd
from .. import ops as _ops
from .._shape import Size
from . import constraints
from .bernoulli import _bce_with_logits
from .exp_family import ExponentialFamily
from .utils import (_expanded, broadcast_all, clamp_probs, lazy_property, logits_to_probs,
                    probs_to_logits)

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None:
                if not bool(self.arg_constraints["probs"].check(self.probs).all()):
                    raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        super().__init__(Size() if is_scalar else self._param.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expanded(self, ContinuousBernoulli, batch_shape, _instance, ("probs", "logits"))
        new._lims = self._lims
        return new

    def _outside_unstable_region(self):
        return _ops.le(self.probs, self._lims[0]) | _ops.gt(self.probs, self._lims[1])

    def _cut_probs(self):
        return _ops.where(self._outside_unstable_region(), self.probs,
                          self._lims[0] * _ops.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        cut = self._cut_probs()
        below = _ops.where(_ops.le(cut, 0.5), cut, _ops.zeros_like(cut))
        above = _ops.where(_ops.ge(cut, 0.5), cut, _ops.ones_like(cut))
        log_norm = _ops.log(_ops.abs(_ops.log1p(-cut) - _ops.log(cut))) - _ops.where(
            _ops.le(cut, 0.5), _ops.log1p(-2.0 * below), _ops.log(2.0 * above - 1.0))
        x = _ops.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return _ops.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (_ops.log1p(-cut) - _ops.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * _ops.pow(x, 2)) * x
        return _ops.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return _ops.sqrt(self.variance)

    @property
    def variance(self):
        cut = self._cut_probs()
        vars_ = cut * (cut - 1.0) / _ops.pow(1.0 - 2.0 * cut, 2) \
            + 1.0 / _ops.pow(_ops.log1p(-cut) - _ops.log(cut), 2)
        x = _ops.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return _ops.where(self._outside_unstable_region(), vars_, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        u = _ops.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        with _autograd.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(_ops.rand(shape, dtype=self.probs.dtype, device=self.probs.device))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_with_logits(logits, value) + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (_ops.pow(cut, value) * _ops.pow(1.0 - cut, 1.0 - value) + cut - 1.0) \
            / (2.0 * cut - 1.0)
        unbounded = _ops.where(self._outside_unstable_region(), cdfs, value)
        return _ops.where(_ops.le(value, 0.0), _ops.zeros_like(value),
                          _ops.where(_ops.ge(value, 1.0), _ops.ones_like(value), unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        return _ops.where(self._outside_unstable_region(),
                          (_ops.log1p(-cut + value * (2.0 * cut - 1.0)) - _ops.log1p(-cut))
                          / (_ops.log(cut) - _ops.log1p(-cut)),
                          value)

    def entropy(self):
        log_probs0 = _ops.log1p(-self.probs)
        log_probs1 = _ops.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        out = _ops.le(x, self._lims[0] - 0.5) | _ops.gt(x, self._lims[1] - 0.5)
        cut = _ops.where(out, x, (self._lims[0] - 0.5) * _ops.ones_like(x))
        log_norm = _ops.log(_ops.abs(_ops.expm1(cut))) - _ops.log(_ops.abs(cut))
        taylor = 0.5 * x + _ops.pow(x, 2) / 24.0 - _ops.pow(x, 4) / 2880.0
        return _ops.where(out, log_norm, taylor)
