"""What RelaxedBernoulli and RelaxedOneHotCategorical share: a transform of a base
distribution (LogitRelaxedBernoulli, ExpRelaxedCategorical) that holds the temperature and
the logits / probs, which the relaxed distribution reads through."""
from __future__ import annotations

from .transformed_distribution import _SharedTransformed


class _RelaxedOf(_SharedTransformed):
    has_rsample = True

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
