"""torch.distributions: PyTorch's distributions, transforms, constraints and KL
registry, written in public ops (what is absent: docs/dropin.md)."""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .laplace import Laplace
from .log_normal import LogNormal
from .normal import Normal
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F401,F403
from .uniform import Uniform
from .weibull import Weibull

__all__ = ["Bernoulli", "Binomial", "Categorical", "Cauchy", "Distribution", "Exponential",
           "ExponentialFamily", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal",
           "Independent", "Laplace", "LogNormal", "Normal", "Pareto", "Poisson",
           "TransformedDistribution", "Uniform", "Weibull", "constraints", "transforms"]
__all__ += transforms.__all__
