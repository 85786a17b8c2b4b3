"""HalfNormal(scale): |Normal(0, scale)|, as PyTorch's TransformedDistribution."""
from __future__ import annotations

import math

from . import constraints
from ._half import _HalfOf
from .normal import Normal

__all__ = ["HalfNormal"]


class HalfNormal(_HalfOf):
    arg_constraints = {"scale": constraints.positive}
    _base = Normal

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)
