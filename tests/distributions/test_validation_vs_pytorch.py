"""validate_args: the same ValueError (class and message, float32 so the tensor reprs
agree) for bad parameters and for values outside the support, as PyTorch's."""
from __future__ import annotations

import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")


def _err(fn):
    try:
        fn()
    except Exception as e:         # noqa: BLE001 - the class is what is compared
        return type(e), str(e)
    return None


BAD_PARAMS = [
    ("Normal", ([0.0, 1.0], [1.0, -1.0])),
    ("Bernoulli", ([0.2, 1.5],)),
    ("Exponential", ([-1.0],)),
    ("Laplace", ([0.0], [0.0])),
    ("Gamma", ([1.0, -2.0], [1.0, 1.0])),
    ("Beta", ([1.0], [-1.0])),
    ("Poisson", ([-0.5],)),
    ("Geometric", ([0.0, 0.5],)),
    ("Uniform", ([1.0], [0.0])),
    ("Dirichlet", ([[1.0, -1.0]],)),
    ("Cauchy", ([0.0], [-1.0])),
    ("Gumbel", ([0.0], [-1.0])),
    ("HalfNormal", ([-1.0],)),
    ("LogNormal", ([0.0], [-1.0])),
    ("Pareto", ([1.0], [-1.0])),
    ("Chi2", ([-1.0],)),
    ("StudentT", ([-1.0],)),
    ("Binomial", ([3.5], [0.5])),
    ("Categorical", ([[0.5, -0.5]],)),
    ("MultivariateNormal", ([0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]])),
    ("LowRankMultivariateNormal", ([0.0, 0.0], [[1.0], [0.5]], [1.0, -1.0])),
    ("Wishart", ([0.5], [[1.0, 0.0], [0.0, 1.0]])),
    ("VonMises", ([0.0], [-1.0])),
    ("Kumaraswamy", ([1.0], [-1.0])),
    ("Weibull", ([1.0], [-1.0])),
    ("NegativeBinomial", ([2.0], [1.0])),
    ("FisherSnedecor", ([1.0], [-2.0])),
    ("InverseGamma", ([-1.0], [1.0])),
    ("GeneralizedPareto", ([0.0], [-1.0], [0.1])),
    ("OneHotCategorical", ([[0.5, -0.5]],)),
    ("Multinomial", (3, [[0.5, -0.5]])),
]


@pytest.mark.parametrize("name,args", BAD_PARAMS, ids=[b[0] for b in BAD_PARAMS])
def test_bad_parameters(name, args):
    def conv(lib, a):
        return a if isinstance(a, int) else lib.tensor(a)
    ours = _err(lambda: getattr(dt.distributions, name)(*[conv(dt, a) for a in args]))
    theirs = _err(lambda: getattr(torch.distributions, name)(*[conv(torch, a) for a in args]))
    assert theirs is not None
    assert ours[0] is theirs[0]
    assert ours[1] == theirs[1].replace("torch.", "dispatchtorch.")


OUT_OF_SUPPORT = [
    ("Normal", ([0.0], [1.0]), [float("nan")]),
    ("Exponential", ([1.0],), [-1.0]),
    ("Bernoulli", ([0.3],), [0.5]),
    ("Poisson", ([2.0],), [1.5]),
    ("Gamma", ([2.0], [1.0]), [-0.1]),
    ("Beta", ([2.0], [1.0]), [1.5]),
    ("Uniform", ([0.0], [1.0]), [2.0]),
    ("Dirichlet", ([[1.0, 2.0]],), [[0.7, 0.7]]),
    ("Binomial", ([3.0], [0.5]), [4.0]),
    ("HalfNormal", ([1.0],), [-1.0]),
    ("Categorical", ([[0.5, 0.5]],), [2]),
    ("MultivariateNormal", ([0.0, 0.0], [[1.0, 0.0], [0.0, 1.0]]), [0.0, 0.0, 0.0]),
    ("Pareto", ([1.0], [2.0]), [0.5]),
    ("Geometric", ([0.3],), [-1.0]),
    ("OneHotCategorical", ([[0.5, 0.5]],), [[1.0, 1.0]]),
    ("Kumaraswamy", ([1.0], [2.0]), [1.5]),
    ("LKJCholesky", (2, [1.0]), [[[1.0, 0.0], [1.0, 1.0]]]),
]


@pytest.mark.parametrize("name,args,value", OUT_OF_SUPPORT, ids=[o[0] for o in OUT_OF_SUPPORT])
def test_value_outside_support(name, args, value):
    def conv(lib, a):
        return a if isinstance(a, int) else lib.tensor(a)
    d_ours = getattr(dt.distributions, name)(*[conv(dt, a) for a in args])
    d_theirs = getattr(torch.distributions, name)(*[conv(torch, a) for a in args])
    ours = _err(lambda: d_ours.log_prob(dt.tensor(value)))
    theirs = _err(lambda: d_theirs.log_prob(torch.tensor(value)))
    assert theirs is not None and ours[0] is theirs[0]
    assert ours[1] == theirs[1].replace("torch.", "dispatchtorch.")


def test_shape_errors_and_either_or():
    for fn in (lambda D, T: D.Bernoulli(T.tensor([0.5]), T.tensor([0.0])),
               lambda D, T: D.Binomial(3),
               lambda D, T: D.Dirichlet(T.tensor(1.0)),
               lambda D, T: D.MultivariateNormal(T.zeros(2)),
               lambda D, T: D.MultivariateNormal(T.zeros(2), T.eye(2), scale_tril=T.eye(2)),
               lambda D, T: D.Normal(T.zeros(2), T.ones(2)).log_prob(T.zeros(3)),
               lambda D, T: D.Independent(D.Normal(T.zeros(2), T.ones(2)), 2),
               lambda D, T: D.Multinomial(T.tensor(3), T.tensor([0.5, 0.5])),
               lambda D, T: D.LKJCholesky(1),
               lambda D, T: D.Wishart(T.tensor([1.0]), T.eye(3)),
               lambda D, T: D.LowRankMultivariateNormal(T.zeros(2), T.ones(3, 1), T.ones(2)),
               lambda D, T: D.TransformedDistribution(D.Normal(0.0, 1.0), "exp"),
               lambda D, T: D.Beta(T.tensor([1.0]), T.tensor([1.0])).log_prob(T.tensor([1.0, 2.0, 3.0]))):
        ours, theirs = _err(lambda: fn(dt.distributions, dt)), _err(lambda: fn(torch.distributions,
                                                                               torch))
        assert theirs is not None and ours[0] is theirs[0], (ours, theirs)
        assert ours[1] == theirs[1].replace("torch.", "dispatchtorch.")


def test_validation_can_be_turned_off():
    d = dt.distributions.Normal(dt.tensor([0.0]), dt.tensor([-1.0]), validate_args=False)
    assert d.scale.item() == -1.0
    dt.distributions.Exponential(dt.tensor([1.0]), validate_args=False).log_prob(dt.tensor([-1.0]))
