"""Independent, OneHotCategoricalStraightThrough, the submodule layout
(torch.distributions.<module>.<Class>), set_default_validate_args and the constraints'
reprs and checks, against PyTorch."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

import dispatchtorch as dt
from _pairs import close

torch = pytest.importorskip("torch")

LOC = np.random.RandomState(0).randn(3, 2)
SCALE = np.exp(np.random.RandomState(1).randn(3, 2))


def _ind(lib, n=1):
    D = (dt if lib == "dt" else torch).distributions
    T = dt.tensor if lib == "dt" else torch.tensor
    return D.Independent(D.Normal(T(LOC), T(SCALE)), n)


@pytest.mark.parametrize("n", [0, 1, 2])
def test_independent(n):
    ours, theirs = _ind("dt", n), _ind("torch", n)
    assert ours.batch_shape == theirs.batch_shape and ours.event_shape == theirs.event_shape
    torch.manual_seed(0)
    v = theirs.sample((4,))
    close(ours.log_prob(dt.tensor(v.numpy())), theirs.log_prob(v), rtol=1e-12)
    close(ours.entropy(), theirs.entropy(), rtol=1e-12)
    close(ours.mean, theirs.mean)
    close(ours.variance, theirs.variance)
    assert repr(ours.support) == repr(theirs.support)
    assert repr(ours) == repr(theirs).replace("torch.", "dispatchtorch.")
    e_ours = ours.expand((5,) + tuple(ours.batch_shape))
    e_theirs = theirs.expand((5,) + tuple(theirs.batch_shape))
    assert e_ours.batch_shape == e_theirs.batch_shape
    assert e_ours.event_shape == e_theirs.event_shape
    dt.manual_seed(2)
    torch.manual_seed(2)
    close(ours.rsample((3,)), theirs.rsample((3,)), rtol=0, atol=0)


def test_straight_through_gradient():
    p = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    lo = dt.tensor(np.log(p), requires_grad=True)
    lt = torch.tensor(np.log(p), requires_grad=True)
    dt.manual_seed(3)
    torch.manual_seed(3)
    so = dt.distributions.OneHotCategoricalStraightThrough(logits=lo).rsample((5,))
    st = torch.distributions.OneHotCategoricalStraightThrough(logits=lt).rsample((5,))
    close(so, st)
    w = np.arange(30.0).reshape(5, 2, 3)
    (so * dt.tensor(w)).sum().backward()
    (st * torch.tensor(w)).sum().backward()
    close(lo.grad, lt.grad, rtol=1e-12)


MODULES = ["bernoulli", "beta", "binomial", "categorical", "cauchy", "chi2",
           "constraint_registry", "constraints", "continuous_bernoulli", "dirichlet",
           "distribution", "exp_family", "exponential", "fishersnedecor", "gamma",
           "generalized_pareto", "geometric", "gumbel", "half_cauchy", "half_normal",
           "independent", "inverse_gamma", "kl", "kumaraswamy", "laplace", "lkj_cholesky",
           "log_normal", "logistic_normal", "lowrank_multivariate_normal",
           "mixture_same_family", "multinomial", "multivariate_normal", "negative_binomial",
           "normal", "one_hot_categorical", "pareto", "poisson", "relaxed_bernoulli",
           "relaxed_categorical", "studentT", "transformed_distribution", "transforms",
           "uniform", "utils", "von_mises", "weibull", "wishart"]


@pytest.mark.parametrize("mod", MODULES)
def test_submodules_hold_pytorchs_classes(mod):
    theirs = importlib.import_module(f"torch.distributions.{mod}")
    ours = importlib.import_module(f"dispatchtorch.distributions.{mod}")
    for name in getattr(theirs, "__all__", []):
        assert hasattr(ours, name), f"{mod}.{name}"


def test_set_default_validate_args():
    D = dt.distributions
    try:
        D.Distribution.set_default_validate_args(False)
        D.Normal(dt.tensor([0.0]), dt.tensor([-1.0]))          # no check
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(dt.tensor([0.0]), dt.tensor([-1.0]))
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")


CONSTRAINT_VALUES = [
    ("boolean", [0.0, 1.0, 0.5]), ("nonnegative_integer", [0.0, 2.0, -1.0, 1.5]),
    ("positive_integer", [1.0, 0.0, 3.0]), ("real", [1.0, float("nan")]),
    ("positive", [1.0, 0.0]), ("nonnegative", [0.0, -1e-9]), ("unit_interval", [0.0, 1.0, 1.1]),
    ("simplex", [[0.5, 0.5], [0.6, 0.6]]), ("one_hot", [[0.0, 1.0], [1.0, 1.0]]),
    ("lower_triangular", [[[1.0, 0.0], [2.0, 3.0]], [[1.0, 1.0], [0.0, 1.0]]]),
    ("lower_cholesky", [[[1.0, 0.0], [2.0, 3.0]], [[-1.0, 0.0], [0.0, 1.0]]]),
    ("positive_definite", [[[2.0, 0.5], [0.5, 1.0]], [[1.0, 2.0], [2.0, 1.0]]]),
    ("positive_semidefinite", [[[1.0, 1.0], [1.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]]),
    ("symmetric", [[[1.0, 2.0], [2.0, 1.0]], [[1.0, 2.0], [0.0, 1.0]]]),
    ("corr_cholesky", [[[1.0, 0.0], [0.6, 0.8]], [[1.0, 0.0], [0.5, 0.5]]]),
    ("square", [[[1.0, 2.0], [2.0, 1.0]]]),
]


@pytest.mark.parametrize("name,value", CONSTRAINT_VALUES, ids=[c[0] for c in CONSTRAINT_VALUES])
def test_constraint_checks(name, value):
    ours = getattr(dt.distributions.constraints, name)
    theirs = getattr(torch.distributions.constraints, name)
    close(ours.check(dt.tensor(value)), theirs.check(torch.tensor(value)))
    assert repr(ours) == repr(theirs)
    assert ours.event_dim == theirs.event_dim and ours.is_discrete == theirs.is_discrete


def test_parameterised_constraints():
    C, TC = dt.distributions.constraints, torch.distributions.constraints
    v = [-1.0, 0.0, 0.5, 1.0, 2.0]
    for ours, theirs in [(C.greater_than(0.5), TC.greater_than(0.5)),
                         (C.greater_than_eq(0.5), TC.greater_than_eq(0.5)),
                         (C.less_than(0.5), TC.less_than(0.5)),
                         (C.interval(0.0, 1.0), TC.interval(0.0, 1.0)),
                         (C.half_open_interval(0.0, 1.0), TC.half_open_interval(0.0, 1.0)),
                         (C.integer_interval(0, 1), TC.integer_interval(0, 1)),
                         (C.independent(C.positive, 1), TC.independent(TC.positive, 1)),
                         (C.multinomial(2), TC.multinomial(2))]:
        close(ours.check(dt.tensor(v)), theirs.check(torch.tensor(v)))
        assert repr(ours) == repr(theirs)
    cat, tcat = C.cat([C.positive, C.real], 0, [2, 3]), TC.cat([TC.positive, TC.real], 0, [2, 3])
    close(cat.check(dt.tensor(v)), tcat.check(torch.tensor(v)))
    st, tst = C.stack([C.positive, C.real], 0), TC.stack([TC.positive, TC.real], 0)
    close(st.check(dt.tensor([v, v])), tst.check(torch.tensor([v, v])))
    m = C.MixtureSameFamilyConstraint(C.positive)
    tm = TC.MixtureSameFamilyConstraint(TC.positive)
    close(m.check(dt.tensor(v)), tm.check(torch.tensor(v)))
    assert repr(m) == repr(tm)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        C.dependent.check(dt.tensor(v))
