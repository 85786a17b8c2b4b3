"""StudentT(df, loc, scale): rsample loc + scale * N / sqrt(Chi2(df) / df), PyTorch's
construction; log_prob and entropy as PyTorch's."""
from __future__ import annotations

import math

from .. import ops as _ops
from .._shape import Size
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        return _ops.where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / _ops.where(df > 2, df - 2, _ops.ones_like(df))
        return _ops.where(df > 2, finite, _ops.where(df > 1, math.inf, math.nan))

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        super(StudentT, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        X = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        Z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (X * _ops.rsqrt(Z / self.df))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + _ops.lgamma(0.5 * self.df) - _ops.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * _ops.log1p(y ** 2.0 / self.df) - Z

    def entropy(self):
        lbeta = _ops.lgamma(0.5 * self.df) + math.lgamma(0.5) - _ops.lgamma(0.5 * (self.df + 1))
        return (self.scale.log()
                + 0.5 * (self.df + 1) * (_ops.digamma(0.5 * (self.df + 1))
                                         - _ops.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
