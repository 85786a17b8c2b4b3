"""torch.distributions: the part PyTorch's example programs use (the policy-gradient
agents' Categorical, Normal), with PyTorch's classes, argument checks and sampling
streams. Other distributions and transforms are absent (docs/distributions.md)."""
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .normal import Normal

__all__ = ["Categorical", "Distribution", "Normal", "constraints"]
