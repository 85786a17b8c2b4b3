"""The distributions under test with parameters (float64 numpy arrays; batch shape 3
unless said), shared by the value, gradient and sampling tests."""
import numpy as np

A = np.array
R = np.random.RandomState(0)
_L = np.tril(R.randn(3, 2, 2)) + 2 * np.eye(2)
_COV = _L @ np.swapaxes(_L, -1, -2)

CASES = {
    "Normal": dict(loc=A([0.0, 1.0, -2.0]), scale=A([1.0, 0.5, 3.0])),
    "Bernoulli": dict(probs=A([0.1, 0.5, 0.9])),
    "BernoulliLogits": dict(logits=A([-2.0, 0.0, 3.0])),
    "Uniform": dict(low=A([0.0, -1.0, 2.0]), high=A([1.0, 3.0, 2.5])),
    "Exponential": dict(rate=A([0.5, 1.0, 4.0])),
    "Laplace": dict(loc=A([0.0, 1.0, -2.0]), scale=A([1.0, 0.5, 3.0])),
    "Cauchy": dict(loc=A([0.0, 1.0, -2.0]), scale=A([1.0, 0.5, 3.0])),
    "LogNormal": dict(loc=A([0.0, 1.0, -0.5]), scale=A([1.0, 0.5, 0.3])),
    "HalfNormal": dict(scale=A([1.0, 0.5, 3.0])),
    "HalfCauchy": dict(scale=A([1.0, 0.5, 3.0])),
    "Gumbel": dict(loc=A([0.0, 1.0, -2.0]), scale=A([1.0, 0.5, 3.0])),
    "Pareto": dict(scale=A([1.0, 0.5, 3.0]), alpha=A([0.8, 2.5, 4.0])),
    "Weibull": dict(scale=A([1.0, 0.5, 3.0]), concentration=A([0.8, 1.5, 4.0])),
    "Gamma": dict(concentration=A([0.3, 1.0, 5.0]), rate=A([1.0, 2.0, 0.5])),
    "Chi2": dict(df=A([1.0, 3.0, 10.0])),
    "Beta": dict(concentration1=A([0.5, 2.0, 5.0]), concentration0=A([0.7, 3.0, 1.0])),
    "Dirichlet": dict(concentration=A([[0.5, 1.0, 2.0], [3.0, 3.0, 3.0], [0.2, 5.0, 1.0]])),
    "StudentT": dict(df=A([0.8, 3.0, 10.0]), loc=A([0.0, 1.0, -2.0]), scale=A([1.0, 0.5, 3.0])),
    "Poisson": dict(rate=A([0.5, 3.0, 20.0])),
    "Geometric": dict(probs=A([0.1, 0.5, 0.9])),
    "Binomial": dict(total_count=A([10.0, 10.0, 10.0]), probs=A([0.1, 0.5, 0.9])),
    "Categorical": dict(probs=A([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8], [0.6, 0.2, 0.2]])),
    "OneHotCategorical": dict(logits=A([[0.2, -1.0, 0.5], [2.0, 0.1, 0.8], [0.6, 0.2, -3.0]])),
    "Multinomial": dict(total_count=7, probs=A([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8],
                                                [0.6, 0.2, 0.2]])),
    "MultivariateNormal": dict(loc=A([[0.0, 1.0], [1.0, -1.0], [2.0, 0.5]]),
                               covariance_matrix=_COV),
    "MultivariateNormalTril": dict(loc=A([[0.0, 1.0], [1.0, -1.0], [2.0, 0.5]]),
                                   scale_tril=_L),
    "MultivariateNormalPrecision": dict(loc=A([[0.0, 1.0], [1.0, -1.0], [2.0, 0.5]]),
                                        precision_matrix=np.linalg.inv(_COV)),
    "InverseGamma": dict(concentration=A([0.5, 2.5, 5.0]), rate=A([1.0, 2.0, 0.5])),
    "LogisticNormal": dict(loc=A([[0.0, 1.0], [1.0, -1.0], [2.0, 0.5]]),
                           scale=A([[1.0, 0.5], [0.3, 2.0], [1.0, 1.0]])),
    "Kumaraswamy": dict(concentration1=A([0.5, 2.0, 5.0]), concentration0=A([0.7, 3.0, 1.0])),
    "RelaxedBernoulli": dict(temperature=A(0.7), probs=A([0.1, 0.5, 0.9])),
    "RelaxedOneHotCategorical": dict(temperature=A(0.7),
                                     probs=A([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8],
                                              [0.6, 0.2, 0.2]])),
    "FisherSnedecor": dict(df1=A([1.0, 3.0, 10.0]), df2=A([3.0, 5.0, 12.0])),
    "NegativeBinomial": dict(total_count=A([2.0, 5.0, 1.5]), probs=A([0.1, 0.5, 0.8])),
    "ContinuousBernoulli": dict(probs=A([0.1, 0.5, 0.8])),
    # float32: PyTorch's GeneralizedPareto compares with a float32 zero (float64 fails there)
    "GeneralizedPareto": dict(loc=A([0.0, 1.0, -1.0], dtype=np.float32),
                              scale=A([1.0, 2.0, 0.5], dtype=np.float32),
                              concentration=A([0.2, 0.0, -0.3], dtype=np.float32)),
    "VonMises": dict(loc=A([0.0, 1.0, -2.0]), concentration=A([0.5, 2.0, 8.0])),
    "LowRankMultivariateNormal": dict(loc=A([[0.0, 1.0, 2.0], [1.0, -1.0, 0.0],
                                             [2.0, 0.5, 0.1]]),
                                      cov_factor=R.randn(3, 3, 2),
                                      cov_diag=A([[1.0, 0.5, 2.0], [0.3, 1.0, 1.0],
                                                  [2.0, 2.0, 0.2]])),
    "LKJCholesky": dict(dim=3, concentration=A([0.5, 1.0, 4.0])),
    "Wishart": dict(df=A([3.0, 4.5, 8.0]), covariance_matrix=_COV),
    "WishartTril": dict(df=A([3.0, 4.5, 8.0]), scale_tril=_L),
    "WishartPrecision": dict(df=A([3.0, 4.5, 8.0]), precision_matrix=np.linalg.inv(_COV)),
}

ALIASES = {"BernoulliLogits": "Bernoulli", "MultivariateNormalTril": "MultivariateNormal",
           "MultivariateNormalPrecision": "MultivariateNormal", "WishartTril": "Wishart",
           "WishartPrecision": "Wishart"}


def cls_name(case):
    return ALIASES.get(case, case)
