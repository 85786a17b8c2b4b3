"""Sampling: where PyTorch's sampler is drawn from the generator the same way here, the
same seed gives PyTorch's samples and the same reparameterized gradients; everywhere,
sample means and variances sit within a few standard errors of the distribution's
(fixed seed), and the implicit Gamma gradient is checked against PyTorch's and mpmath."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as dt
from _pairs import as_np, build, close
from cases import CASES, cls_name

torch = pytest.importorskip("torch")

# PyTorch draws these from the same generator calls as dispatchtorch
SAME_STREAM = ["Normal", "Bernoulli", "Uniform", "Exponential", "Laplace", "Cauchy",
               "LogNormal", "HalfNormal", "HalfCauchy", "Gumbel", "Pareto", "Weibull",
               "Geometric", "Poisson", "Binomial", "Categorical", "OneHotCategorical",
               "Multinomial", "MultivariateNormal", "MultivariateNormalTril",
               "MultivariateNormalPrecision", "LogisticNormal", "Kumaraswamy",
               "RelaxedBernoulli", "RelaxedOneHotCategorical", "ContinuousBernoulli",
               "GeneralizedPareto", "VonMises", "LowRankMultivariateNormal",
               # through ATen's Gamma sampler (ops/random_gamma.py)
               "Gamma", "Chi2", "Beta", "Dirichlet", "StudentT", "InverseGamma",
               "FisherSnedecor", "NegativeBinomial", "LKJCholesky"]
# their rsample gradients: PyTorch's approximation of the implicit Gamma gradient (within
# about 5e-4 of the exact one here), or per-sample different ones (Dirichlet, Beta)
IMPLICIT = {"Gamma", "Chi2", "StudentT", "InverseGamma", "FisherSnedecor"}
PER_SAMPLE = {"Beta", "Dirichlet"}


@pytest.mark.parametrize("case", SAME_STREAM)
def test_same_seed_same_samples(case):
    ours, _ = build("dt", cls_name(case), CASES[case])
    theirs, _ = build("torch", cls_name(case), CASES[case])
    dt.manual_seed(7)
    torch.manual_seed(7)
    a, b = ours.sample((50,)), theirs.sample((50,))
    close(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", [c for c in SAME_STREAM if c not in PER_SAMPLE
                                  and build("torch", cls_name(c), CASES[c])[0].has_rsample])
def test_rsample_gradients_match(case):
    ours, ol = build("dt", cls_name(case), CASES[case], grad=True)
    theirs, tl = build("torch", cls_name(case), CASES[case], grad=True)
    dt.manual_seed(11)
    torch.manual_seed(11)
    xs, ys = ours.rsample((20,)), theirs.rsample((20,))
    close(xs, ys, rtol=1e-12, atol=1e-12)
    (xs.sin() * xs.abs().clamp(max=50)).sum().backward()
    (ys.sin() * ys.abs().clamp(max=50)).sum().backward()
    rtol, atol = (2e-3, 1e-6) if case in IMPLICIT else (1e-9, 1e-10)
    for k, leaf in tl.items():
        if getattr(leaf, "requires_grad", False):
            close(ol[k].grad, leaf.grad, rtol=rtol, atol=atol)


def test_gamma_draws_leave_the_generator_as_pytorch():
    """The normal spare of ATen's normal_distribution<double> carries across calls."""
    D, TD = dt.distributions, torch.distributions
    for dtype in ("float64", "float32"):
        a = np.array([0.05, 0.3, 1.0, 2.5, 100.0], dtype=dtype)
        dt.manual_seed(9)
        torch.manual_seed(9)
        outs = [dt.randn(3), D.Gamma(dt.tensor(a), 1.0).sample((3,)), dt.randn(1),
                D.Dirichlet(dt.tensor(a)).sample(), dt.rand(2),
                D.Gamma(dt.tensor(a[:3]), 2.0).sample()]
        theirs = [torch.randn(3), TD.Gamma(torch.tensor(a), 1.0).sample((3,)), torch.randn(1),
                  TD.Dirichlet(torch.tensor(a)).sample(), torch.rand(2),
                  TD.Gamma(torch.tensor(a[:3]), 2.0).sample()]
        for i, (o, t) in enumerate(zip(outs, theirs)):
            # the Dirichlet's normalising sum may round in another order (an ulp)
            close(o, t, rtol=1e-15 if i == 3 else 0, atol=0)


STAT_CASES = [c for c in CASES if cls_name(c) not in ("Cauchy", "HalfCauchy", "VonMises")]


def test_von_mises_circular_moments():
    """Circular mean ~ loc; 1 - |mean resultant| ~ the (circular) variance."""
    d, _ = build("dt", "VonMises", CASES["VonMises"])
    dt.manual_seed(8)
    s = as_np(d.sample((40000,)))
    c, si = np.cos(s).mean(0), np.sin(s).mean(0)
    np.testing.assert_allclose(np.arctan2(si, c), CASES["VonMises"]["loc"], atol=0.03)
    np.testing.assert_allclose(1 - np.hypot(c, si), as_np(d.variance), atol=0.01)
    assert s.min() >= -np.pi and s.max() <= np.pi


@pytest.mark.parametrize("case", STAT_CASES)
def test_sample_moments(case):
    d, _ = build("dt", cls_name(case), CASES[case])
    dt.manual_seed(123)
    n = 40000
    s = as_np(d.sample((n,)))
    try:
        mean, var = as_np(d.mean), as_np(d.variance)
    except NotImplementedError:                     # no closed form (as PyTorch's)
        pytest.skip(f"{case} has no mean / variance")
    ok = np.isfinite(mean) & np.isfinite(var)
    m4_free = ok & np.isfinite(var)
    se = np.sqrt(np.where(ok, var, 1.0) / n)
    z = np.abs(s.mean(0) - mean) / se
    assert np.all(z[ok] < 5), (case, z)
    # variance: a loose relative bound (heavy tails make its standard error large)
    if cls_name(case) not in ("Pareto", "StudentT", "Weibull", "LogNormal", "InverseGamma",
                              "FisherSnedecor", "GeneralizedPareto", "NegativeBinomial"):
        rel = np.abs(s.var(0) - var) / np.where(var > 0, var, 1.0)
        assert np.all(rel[m4_free] < 0.08), (case, rel)


def test_gamma_family_samples_are_in_support_and_positive():
    dt.manual_seed(0)
    g = dt.distributions.Gamma(dt.tensor([1e-3, 0.1, 1.0, 50.0], dtype=dt.float64), 1.0)
    s = g.sample((2000,))
    assert bool((s > 0).all()) and bool(s.isfinite().all())
    b = dt.distributions.Beta(dt.tensor([0.1, 2.0]), dt.tensor([0.1, 3.0])).sample((1000,))
    assert bool(((b >= 0) & (b <= 1)).all())
    d = dt.distributions.Dirichlet(dt.tensor([0.2, 1.0, 4.0])).sample((1000,))
    assert np.allclose(as_np(d.sum(-1)), 1, atol=1e-5)


def test_standard_gamma_gradient_against_pytorch_and_mpmath():
    from dispatchtorch.distributions._standard_gamma import standard_gamma_grad
    alpha = np.array([0.05, 0.3, 1.0, 2.5, 10.0, 100.0, 7.0])
    x = np.array([1e-8, 0.1, 0.7, 3.0, 8.0, 110.0, 20.0])
    ours = as_np(standard_gamma_grad(dt.tensor(alpha), dt.tensor(x)))
    theirs = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=5e-4)    # PyTorch's approximates
    tiny = as_np(standard_gamma_grad(dt.tensor([1e-9, 1e-6, 1e5]),
                                     dt.tensor([1e-30, 1e-12, 1e5])))
    assert np.all(np.isfinite(tiny))
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    for a, xx, got in zip(alpha[1:], x[1:], ours[1:]):
        dF = mpmath.diff(lambda s: mpmath.gammainc(s, 0, xx, regularized=True), a)
        pdf = mpmath.exp((a - 1) * mpmath.log(xx) - xx - mpmath.loggamma(a))
        assert abs(float(-dF / pdf) - got) <= 1e-7 * abs(got) + 1e-12


@pytest.mark.parametrize("name,params,dmean", [
    ("Gamma", dict(concentration=[0.4, 3.0], rate=[2.0, 0.5]), lambda c, r: (1 / r, -c / r**2)),
    ("Beta", dict(concentration1=[0.5, 2.0], concentration0=[1.5, 3.0]),
     lambda a, b: (b / (a + b) ** 2, -a / (a + b) ** 2)),
    ("Chi2", dict(df=[1.0, 6.0]), lambda k: (np.ones_like(k),)),
])
def test_implicit_reparameterization_gradient_of_the_mean(name, params, dmean):
    """d/dtheta of the sample mean of rsample converges to d E[x] / d theta."""
    ours, leaves = build("dt", name, {k: np.array(v) for k, v in params.items()}, grad=True)
    dt.manual_seed(5)
    n = 40000
    ours.rsample((n,)).mean(0).sum().backward()
    want = dmean(*[np.array(v) for v in params.values()])
    for (k, leaf), w in zip(leaves.items(), want):
        got = as_np(leaf.grad)
        np.testing.assert_allclose(got, w, rtol=0.05, atol=0.01, err_msg=f"{name}.{k}")


def test_dirichlet_rsample_gradient_of_the_mean():
    c = dt.tensor([0.5, 1.0, 3.0], dtype=dt.float64, requires_grad=True)
    dt.manual_seed(9)
    x = dt.distributions.Dirichlet(c).rsample((40000,)).mean(0)
    x[0].backward()
    a = np.array([0.5, 1.0, 3.0])
    s = a.sum()
    want = -a[0] / s**2 * np.ones(3)
    want[0] += 1 / s
    np.testing.assert_allclose(as_np(c.grad), want, rtol=0.05, atol=0.005)


def test_studentt_rsample_shape_and_grad():
    df = dt.tensor([3.0, 8.0], dtype=dt.float64, requires_grad=True)
    loc = dt.tensor([0.0, 1.0], dtype=dt.float64, requires_grad=True)
    s = dt.distributions.StudentT(df, loc, 2.0).rsample((7,))
    assert s.shape == (7, 2)
    s.sum().backward()
    assert np.allclose(as_np(loc.grad), 7.0) and df.grad is not None


def test_lkj_cholesky_samples():
    """Samples are correlation Cholesky factors; an off-diagonal correlation of LKJ(eta)
    in dimension d is 2 Beta(b, b) - 1 with b = eta - 1 + d / 2, variance 1 / (2 b + 1)."""
    eta = np.array([0.5, 1.0, 4.0])
    d = dt.distributions.LKJCholesky(3, dt.tensor(eta))
    dt.manual_seed(2)
    L = d.sample((20000,))
    assert bool(dt.distributions.constraints.corr_cholesky.check(L).all())
    C = as_np(L @ L.mT)
    r = C[..., 0, 1]
    b = eta - 1 + 1.5
    np.testing.assert_allclose(r.mean(0), 0.0, atol=0.03)
    np.testing.assert_allclose(r.var(0), 1 / (2 * b + 1), rtol=0.05)


def test_wishart_rsample_gradient_of_the_mean():
    """d/d df of the sample mean of rsample converges to d (df V) / d df = V."""
    V = np.array([[2.0, 0.3], [0.3, 1.0]])
    df = dt.tensor(5.0, dtype=dt.float64, requires_grad=True)
    dt.manual_seed(1)
    s = dt.distributions.Wishart(df, covariance_matrix=dt.tensor(V)).rsample((20000,))
    np.testing.assert_allclose(as_np(s.mean(0)), 5 * V, rtol=0.05, atol=0.05)
    s.mean(0).sum().backward()
    np.testing.assert_allclose(as_np(df.grad), V.sum(), rtol=0.05)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_standard_gamma_sampler_is_atens(dtype):
    from dispatchtorch.ops.random_gamma import dirichlet_sample, standard_gamma_sample
    a = np.array([0.0, 1e-4, 0.05, 0.3, 0.999, 1.0, 2.5, 10.0, 1e3, 1e6] * 7, dtype=dtype)
    dt.manual_seed(21)
    torch.manual_seed(21)
    close(standard_gamma_sample(dt.tensor(a)), torch._standard_gamma(torch.tensor(a)),
          rtol=0, atol=0)
    c = a.reshape(7, 10)[:, 1:]
    close(dirichlet_sample(dt.tensor(c)), torch._sample_dirichlet(torch.tensor(c)),
          rtol=1e-15, atol=0)
    close(dt.randn(5), torch.randn(5), rtol=0, atol=0)
