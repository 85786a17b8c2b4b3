"""torch.distributions: PyTorch's distributions, transforms, constraints and KL
registry, written in public ops (what is absent: docs/dropin.md)."""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .constraint_registry import biject_to, transform_to
from .cauchy import Cauchy
from .chi2 import Chi2
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F401,F403
from .uniform import Uniform
from .weibull import Weibull

__all__ = ['Bernoulli', 'Beta', 'Binomial', 'Categorical', 'Cauchy', 'Chi2', 'Dirichlet', 'Distribution', 'Exponential', 'ExponentialFamily', 'Gamma', 'Geometric', 'Gumbel', 'HalfCauchy', 'HalfNormal', 'Independent', 'Laplace', 'LogNormal', 'Multinomial', 'MultivariateNormal', 'Normal', 'OneHotCategorical', 'OneHotCategoricalStraightThrough', 'Pareto', 'Poisson', 'StudentT', 'TransformedDistribution', 'Uniform', 'Weibull', 'biject_to', 'constraints', 'kl_divergence', 'register_kl',
           'transform_to', 'transforms']
__all__ += transforms.__all__
