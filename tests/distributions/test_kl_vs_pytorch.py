"""kl_divergence against PyTorch's for every registered pair here (values and
gradients), the registry's dispatch, and its errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import dispatchtorch as dt
from _pairs import build, close

torch = pytest.importorskip("torch")

A = np.array
P = {
    "Normal": dict(loc=A([0.0, 1.0, 0.3]), scale=A([1.0, 0.5, 2.0])),
    "Normal2": dict(loc=A([0.5, -1.0, 0.0]), scale=A([2.0, 1.5, 0.7])),
    "Bernoulli": dict(probs=A([0.1, 0.5, 0.9])),
    "Bernoulli2": dict(probs=A([0.3, 0.2, 0.6])),
    "Beta": dict(concentration1=A([0.5, 2.0, 5.0]), concentration0=A([0.7, 3.0, 1.0])),
    "Beta2": dict(concentration1=A([1.5, 1.0, 2.0]), concentration0=A([2.0, 0.5, 1.0])),
    "Binomial": dict(total_count=A([10.0, 10.0, 10.0]), probs=A([0.1, 0.5, 0.9])),
    "Binomial2": dict(total_count=A([10.0, 10.0, 10.0]), probs=A([0.3, 0.2, 0.6])),
    "Categorical": dict(probs=A([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8], [0.6, 0.2, 0.2]])),
    "Categorical2": dict(probs=A([[0.4, 0.4, 0.2], [0.3, 0.3, 0.4], [0.1, 0.2, 0.7]])),
    "OneHotCategorical": dict(probs=A([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8], [0.6, 0.2, 0.2]])),
    "OneHotCategorical2": dict(probs=A([[0.4, 0.4, 0.2], [0.3, 0.3, 0.4], [0.1, 0.2, 0.7]])),
    "Dirichlet": dict(concentration=A([[0.5, 1.0, 2.0], [3.0, 3.0, 3.0], [0.2, 5.0, 1.0]])),
    "Dirichlet2": dict(concentration=A([[1.0, 1.0, 1.0], [2.0, 0.5, 3.0], [1.0, 2.0, 0.4]])),
    "Exponential": dict(rate=A([0.5, 1.0, 4.0])),
    "Exponential2": dict(rate=A([2.0, 0.3, 1.0])),
    "Gamma": dict(concentration=A([0.3, 1.0, 5.0]), rate=A([1.0, 2.0, 0.5])),
    "Gamma2": dict(concentration=A([1.0, 2.0, 3.0]), rate=A([0.5, 1.0, 1.5])),
    "Gumbel": dict(loc=A([0.0, 1.0, -2.0]), scale=A([1.0, 0.5, 3.0])),
    "Gumbel2": dict(loc=A([1.0, 0.0, -1.0]), scale=A([2.0, 1.0, 1.0])),
    "Geometric": dict(probs=A([0.1, 0.5, 0.9])),
    "Geometric2": dict(probs=A([0.3, 0.2, 0.6])),
    "HalfNormal": dict(scale=A([1.0, 0.5, 3.0])),
    "HalfNormal2": dict(scale=A([2.0, 1.0, 1.0])),
    "Laplace": dict(loc=A([0.0, 1.0, -2.0]), scale=A([1.0, 0.5, 3.0])),
    "Laplace2": dict(loc=A([1.0, 0.0, -1.0]), scale=A([2.0, 1.0, 1.0])),
    "Cauchy": dict(loc=A([0.0, 1.0, -2.0]), scale=A([1.0, 0.5, 3.0])),
    "Cauchy2": dict(loc=A([1.0, 0.0, -1.0]), scale=A([2.0, 1.0, 1.0])),
    "Pareto": dict(scale=A([1.0, 0.5, 3.0]), alpha=A([0.8, 2.5, 4.0])),
    "Pareto2": dict(scale=A([0.5, 1.0, 2.0]), alpha=A([1.0, 2.0, 3.0])),
    "Poisson": dict(rate=A([0.5, 3.0, 20.0])),
    "Poisson2": dict(rate=A([1.0, 2.0, 15.0])),
    "Uniform": dict(low=A([0.1, -1.0, 0.2]), high=A([0.9, 3.0, 0.5])),
    "Uniform2": dict(low=A([0.0, -2.0, 0.3]), high=A([1.0, 3.0, 0.9])),
    "LogNormal": dict(loc=A([0.0, 1.0, -0.5]), scale=A([1.0, 0.5, 0.3])),
    "LogNormal2": dict(loc=A([0.5, 0.0, 0.5]), scale=A([0.5, 1.0, 0.6])),
    "MultivariateNormal": dict(loc=A([[0.0, 1.0], [1.0, -1.0], [2.0, 0.5]]),
                               scale_tril=np.tril(np.random.RandomState(0).randn(3, 2, 2))
                               + 2 * np.eye(2)),
    "MultivariateNormal2": dict(loc=A([[1.0, 0.0], [0.0, 0.0], [1.0, 0.5]]),
                                covariance_matrix=np.eye(2) * A([1.0, 2.0, 0.5])[:, None, None]),
    "ContinuousBernoulli": dict(probs=A([0.1, 0.5, 0.8])),
    "ContinuousBernoulli2": dict(probs=A([0.3, 0.7, 0.4999])),
    "LowRankMultivariateNormal": dict(loc=A([[0.0, 1.0], [1.0, -1.0], [2.0, 0.5]]),
                                      cov_factor=np.random.RandomState(2).randn(3, 2, 1),
                                      cov_diag=A([[1.0, 0.5], [0.3, 1.0], [2.0, 2.0]])),
    "LowRankMultivariateNormal2": dict(loc=A([[1.0, 0.0], [0.0, 0.0], [1.0, 0.5]]),
                                       cov_factor=np.random.RandomState(3).randn(3, 2, 2),
                                       cov_diag=A([[2.0, 1.0], [1.0, 1.0], [0.5, 0.5]])),
}


def _registered_pairs():
    """Every pair in PyTorch's KL registry that P has parameters for (same family: the
    distribution and its "2" variant)."""
    out = []
    for tp, tq in sorted(torch.distributions.kl._KL_REGISTRY, key=lambda t: (t[0].__name__,
                                                                              t[1].__name__)):
        a, b = tp.__name__, tq.__name__
        if a == "TransformedDistribution":
            a = b = "LogNormal"
        if a not in P or b not in P:
            continue
        out.append((a, b + "2") if a == b else (a, b))
    return out


PAIRS = _registered_pairs() + [("Beta", "Uniform2"), ("Pareto2", "Pareto"),
                               ("Uniform", "Beta"), ("ContinuousBernoulli2", "Uniform")]


def test_every_registered_pair_is_registered_here():
    ours = {(a.__name__, b.__name__) for a, b in dt.distributions.kl._KL_REGISTRY}
    theirs = {(a.__name__, b.__name__) for a, b in torch.distributions.kl._KL_REGISTRY}
    assert ours == theirs
    assert len(PAIRS) >= 80


def _name(key):
    return key[:-1] if key.endswith("2") else key


@pytest.mark.parametrize("pk,qk", PAIRS, ids=[f"{p}-{q}" for p, q in PAIRS])
def test_kl_matches_pytorch(pk, qk):
    p, pl = build("dt", _name(pk), P[pk], grad=True)
    q, ql = build("dt", _name(qk), P[qk], grad=True)
    tp, tpl = build("torch", _name(pk), P[pk], grad=True)
    tq, tql = build("torch", _name(qk), P[qk], grad=True)
    ours = dt.distributions.kl_divergence(p, q)
    theirs = torch.distributions.kl_divergence(tp, tq)
    close(ours, theirs, rtol=1e-9)
    finite = torch.isfinite(theirs)
    if bool(finite.any()):
        theirs[finite].sum().backward()
        ours[dt.tensor(finite.numpy())].sum().backward()
        for mine, leaf in list(zip(pl.values(), tpl.values())) + list(zip(ql.values(),
                                                                          tql.values())):
            if getattr(leaf, "grad", None) is not None:
                close(mine.grad, leaf.grad, rtol=1e-7, atol=1e-10)


def test_independent_kl_sums_over_event_dims():
    p = dt.distributions.Independent(dt.distributions.Normal(dt.zeros(3, 2), dt.ones(3, 2)), 1)
    q = dt.distributions.Independent(dt.distributions.Normal(dt.ones(3, 2), 2 * dt.ones(3, 2)), 1)
    tp = torch.distributions.Independent(torch.distributions.Normal(torch.zeros(3, 2),
                                                                    torch.ones(3, 2)), 1)
    tq = torch.distributions.Independent(torch.distributions.Normal(torch.ones(3, 2),
                                                                    2 * torch.ones(3, 2)), 1)
    close(dt.distributions.kl_divergence(p, q), torch.distributions.kl_divergence(tp, tq),
          rtol=1e-6)


def _error(fn):
    try:
        fn()
    except Exception as e:            # noqa: BLE001
        return type(e), str(e)


def test_errors_match():
    for make in (lambda D, T: D.kl_divergence(D.Poisson(T.tensor(1.0)),
                                              D.Exponential(T.tensor(1.0))),
                 lambda D, T: D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(0.3)),
                 lambda D, T: D.kl_divergence(D.Cauchy(0.0, 1.0), D.Normal(0.0, 1.0)),
                 lambda D, T: D.kl_divergence(D.MultivariateNormal(T.zeros(2), T.eye(2)),
                                              D.MultivariateNormal(T.zeros(3), T.eye(3)))):
        ours, theirs = _error(lambda: make(dt.distributions, dt)), \
            _error(lambda: make(torch.distributions, torch))
        assert ours == theirs


def test_register_kl_most_specific_and_ambiguity_warning():
    D = dt.distributions

    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _mine(p, q):
        return dt.tensor(42.0)

    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 42.0
    assert D.kl_divergence(D.Normal(0.0, 1.0), MyNormal(0.0, 1.0)).item() == 0.0

    class A(D.Normal):
        pass

    class B(D.Normal):
        pass

    D.register_kl(A, D.Normal)(lambda p, q: dt.tensor(1.0))
    D.register_kl(D.Normal, B)(lambda p, q: dt.tensor(2.0))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        D.kl_divergence(A(0.0, 1.0), B(0.0, 1.0))
    assert any("Ambiguous kl_divergence(A, B)" in str(x.message) for x in w)
