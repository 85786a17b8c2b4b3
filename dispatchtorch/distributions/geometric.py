"""Geometric(probs | logits): failures before the first success; samples by inversion
of uniform_(tiny, 1), PyTorch's draw."""
from __future__ import annotations

from numbers import Number

from .. import _dtype as D
from .. import autograd as _autograd
from .. import ops as _ops
from .._shape import Size
from . import constraints
from .bernoulli import _bce_with_logits
from .distribution import Distribution
from .utils import _BinaryLogits, _expanded, broadcast_all

__all__ = ["Geometric"]


class Geometric(_BinaryLogits, Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        batch_shape = Size() if isinstance(given, Number) else given.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to be positive but "
                    f"found invalid values:\n{value.detach()[~valid]}")

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Geometric, batch_shape, _instance, ("probs", "logits"))

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return _ops.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        tiny = D.finfo(self.probs.dtype).tiny
        with _autograd.no_grad():
            u = self.probs.new_empty(shape).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        probs[(probs == 1) & (value == 0)] = 0
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs) / self.probs
