"""Dropout layers: zero elements (or channels) with probability p in training mode and
scale the rest."""
from __future__ import annotations

from .. import functional as F
from .module import Module


class Dropout(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(Dropout):
    """Zeroes whole channels of (N, C, L) or (C, L) inputs."""

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(Dropout):
    """Zeroes whole channels of (N, C, H, W) or (C, H, W) inputs."""

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(Dropout):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) inputs."""

    def forward(self, input):
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(Dropout):
    """Dropout that keeps SELU's self-normalising mean and variance."""

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(Dropout):
    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)
