"""Dirichlet(concentration): rsample as ATen's _sample_dirichlet draws them (normalised
double Gammas, PyTorch's numbers), differentiated through the Gammas' implicit gradient
(PyTorch's _dirichlet_grad differs per sample, not in expectation); PyTorch's log_prob,
entropy, moments and mode."""
from __future__ import annotations

from .. import _dtype as D
from .. import ops as _ops
from . import constraints
from ._standard_gamma import standard_gamma
from .exp_family import ExponentialFamily
from .utils import _expanded

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Dirichlet, batch_shape, _instance, ("concentration",))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        alpha = self.concentration.expand(shape)
        # ATen's _s_dirichlet_cpu: double Gammas, normalised, clamped to
        # [smallest normal, the float below 1]; differentiated through the Gammas
        gammas = standard_gamma(alpha.to(D.float64))
        x = (gammas / gammas.sum(-1, True)).to(alpha.dtype)
        finfo = D.finfo(alpha.dtype)
        return x.clamp(min=finfo.tiny, max=1.0 - finfo.eps / 2)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (_ops.xlogy(self.concentration - 1.0, value).sum(-1)
                + _ops.lgamma(self.concentration.sum(-1))
                - _ops.lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        mask = (self.concentration < 1).all(-1, keepdim=True)
        k = concentrationm1.shape[-1]
        hot = (mode.argmax(-1, keepdim=True)
               == _ops.arange(k, device=mode.device)).to(mode.dtype)
        return _ops.where(mask, hot, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (_ops.lgamma(self.concentration).sum(-1) - _ops.lgamma(a0)
                - (k - a0) * _ops.digamma(a0)
                - ((self.concentration - 1.0) * _ops.digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - _ops.lgamma(x.sum(-1))


