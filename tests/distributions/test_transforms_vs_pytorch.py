"""Transforms, TransformedDistribution, biject_to / transform_to and ExponentialFamily's
Bregman entropy against PyTorch: forward, inverse, log |det J|, shapes, domains,
caching, and the entropy of each exponential family from its log-normalizer."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as dt
from _pairs import as_np, build, close
from cases import CASES, cls_name

torch = pytest.importorskip("torch")
R = np.random.RandomState(1)
X1 = R.randn(4, 3)


def _mk(lib, name, *args, **kw):
    T = (dt if lib == "dt" else torch).distributions.transforms
    conv = (lambda a: dt.tensor(a)) if lib == "dt" else (lambda a: torch.tensor(a))
    args = [conv(a) if isinstance(a, np.ndarray) else a for a in args]
    return getattr(T, name)(*args, **kw)


TRANSFORMS = [
    ("ExpTransform", (), X1),
    ("SigmoidTransform", (), X1),
    ("TanhTransform", (), X1 * 0.5),
    ("SoftplusTransform", (), X1),
    ("AffineTransform", (np.array([1.0, -2.0, 0.5]), np.array([2.0, -0.5, 3.0])), X1),
    ("PowerTransform", (np.array([2.0, 0.5, -1.5]),), np.abs(X1) + 0.1),
    ("StickBreakingTransform", (), X1),
    ("CorrCholeskyTransform", (), X1),
    ("LowerCholeskyTransform", (), R.randn(4, 3, 3)),
    ("SoftmaxTransform", (), X1),
    ("AbsTransform", (), X1),
]


@pytest.mark.parametrize("name,args,x", TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
def test_transform_forward_inverse_logdet(name, args, x):
    ours, theirs = _mk("dt", name, *args), _mk("torch", name, *args)
    xo, xt = dt.tensor(x), torch.tensor(x)
    yo, yt = ours(xo), theirs(xt)
    close(yo, yt, rtol=1e-10, atol=1e-12)
    close(ours.inv(yo), theirs.inv(yt), rtol=1e-8, atol=1e-10)
    try:
        ld = theirs.log_abs_det_jacobian(xt, yt)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            ours.log_abs_det_jacobian(xo, yo)
    else:
        close(ours.log_abs_det_jacobian(xo, yo), ld, rtol=1e-9, atol=1e-10)
    assert ours.bijective == theirs.bijective
    assert repr(ours.domain).split("(")[0] == repr(theirs.domain).split("(")[0]
    assert repr(ours.codomain).split("(")[0] == repr(theirs.codomain).split("(")[0]
    assert ours.domain.event_dim == theirs.domain.event_dim
    assert ours.codomain.event_dim == theirs.codomain.event_dim
    assert tuple(ours.forward_shape(tuple(x.shape))) == tuple(theirs.forward_shape(x.shape))
    assert tuple(ours.inverse_shape(tuple(yo.shape))) == tuple(theirs.inverse_shape(yt.shape))
    assert repr(ours) == repr(theirs)


def test_compose_independent_reshape_cat_stack():
    T, TT = dt.distributions.transforms, torch.distributions.transforms
    x = R.randn(2, 6)
    pairs = [
        (T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)]),
         TT.ComposeTransform([TT.ExpTransform(), TT.AffineTransform(1.0, 2.0)])),
        (T.IndependentTransform(T.SigmoidTransform(), 1),
         TT.IndependentTransform(TT.SigmoidTransform(), 1)),
        (T.ReshapeTransform((6,), (2, 3)), TT.ReshapeTransform((6,), (2, 3))),
        (T.CatTransform([T.ExpTransform(), T.identity_transform], dim=-1, lengths=[2, 4]),
         TT.CatTransform([TT.ExpTransform(), TT.identity_transform], dim=-1, lengths=[2, 4])),
        (T.ComposeTransform([T.ExpTransform(), T.StickBreakingTransform()]),
         TT.ComposeTransform([TT.ExpTransform(), TT.StickBreakingTransform()])),
    ]
    for ours, theirs in pairs:
        yo, yt = ours(dt.tensor(x)), theirs(torch.tensor(x))
        close(yo, yt, rtol=1e-10)
        close(ours.inv(yo), theirs.inv(yt), rtol=1e-8, atol=1e-10)
        close(ours.log_abs_det_jacobian(dt.tensor(x), yo),
              theirs.log_abs_det_jacobian(torch.tensor(x), yt), rtol=1e-9, atol=1e-12)
        assert ours.domain.event_dim == theirs.domain.event_dim
        assert ours.codomain.event_dim == theirs.codomain.event_dim
    st = T.StackTransform([T.ExpTransform(), T.SigmoidTransform()], dim=0)
    tst = TT.StackTransform([TT.ExpTransform(), TT.SigmoidTransform()], dim=0)
    x2 = R.randn(2, 3)
    close(st(dt.tensor(x2)), tst(torch.tensor(x2)), rtol=1e-10)
    close(st.log_abs_det_jacobian(dt.tensor(x2), st(dt.tensor(x2))),
          tst.log_abs_det_jacobian(torch.tensor(x2), tst(torch.tensor(x2))), rtol=1e-10)


def test_cache_inverse_and_equality():
    T = dt.distributions.transforms
    t = T.ExpTransform(cache_size=1)
    x = dt.tensor([1000.0])          # exp overflows float32; the cache still inverts it
    y = t(x)
    assert t.inv(y) is x
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform().inv.inv == T.ExpTransform()
    assert T.ExpTransform().inv != T.ExpTransform()
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)


CONSTRAINTS = ["real", "positive", "nonnegative", "unit_interval", "simplex", "real_vector",
               "lower_cholesky", "positive_definite", "corr_cholesky"]


@pytest.mark.parametrize("cname", CONSTRAINTS)
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_biject_to_transform_to(cname, registry):
    C, TC = dt.distributions.constraints, torch.distributions.constraints
    ours_reg, theirs_reg = getattr(dt.distributions, registry), \
        getattr(torch.distributions, registry)
    try:
        theirs = theirs_reg(getattr(TC, cname))
    except NotImplementedError as e:
        with pytest.raises(NotImplementedError, match=str(e)):
            ours_reg(getattr(C, cname))
        return
    ours = ours_reg(getattr(C, cname))
    assert repr(ours) == repr(theirs)
    n = {"lower_cholesky": (2, 3, 3), "positive_definite": (2, 3, 3),
         "corr_cholesky": (2, 3)}.get(cname, (2, 3))
    x = R.randn(*n)
    y = ours(dt.tensor(x))
    close(y, theirs(torch.tensor(x)), rtol=1e-9, atol=1e-12)
    assert bool(getattr(C, cname).check(y).all())


def test_interval_and_greater_than_registry():
    C, TC = dt.distributions.constraints, torch.distributions.constraints
    for ours_c, theirs_c in [(C.interval(-1.0, 3.0), TC.interval(-1.0, 3.0)),
                             (C.greater_than(2.0), TC.greater_than(2.0)),
                             (C.less_than(-1.0), TC.less_than(-1.0))]:
        o, t = dt.distributions.biject_to(ours_c), torch.distributions.biject_to(theirs_c)
        close(o(dt.tensor(X1)), t(torch.tensor(X1)), rtol=1e-10)


def test_transformed_distribution_vs_pytorch():
    D, TD = dt.distributions, torch.distributions
    loc, scale = np.array([0.0, 1.0]), np.array([1.0, 0.5])
    ours = D.TransformedDistribution(D.Normal(dt.tensor(loc), dt.tensor(scale)),
                                     [D.transforms.TanhTransform(),
                                      D.transforms.AffineTransform(2.0, -3.0)])
    theirs = TD.TransformedDistribution(TD.Normal(torch.tensor(loc), torch.tensor(scale)),
                                        [TD.transforms.TanhTransform(),
                                         TD.transforms.AffineTransform(2.0, -3.0)])
    torch.manual_seed(0)
    v = theirs.sample((5,))
    close(ours.log_prob(dt.tensor(v.numpy())), theirs.log_prob(v), rtol=1e-7)
    close(ours.cdf(dt.tensor(v.numpy())), theirs.cdf(v), rtol=1e-9)
    q = np.array([[0.2], [0.7]])
    close(ours.icdf(dt.tensor(q)), theirs.icdf(torch.tensor(q)), rtol=1e-9)
    dt.manual_seed(3)
    torch.manual_seed(3)
    close(ours.rsample((4,)), theirs.rsample((4,)), rtol=1e-12)
    e = ours.expand((3, 2))
    assert e.batch_shape == (3, 2) and e.sample().shape == (3, 2)
    # a vector-valued one: Normal through StickBreaking (event dim grows 0 -> 1)
    o2 = D.TransformedDistribution(D.Normal(dt.zeros(4, dtype=dt.float64),
                                            dt.ones(4, dtype=dt.float64)),
                                   D.transforms.StickBreakingTransform())
    t2 = TD.TransformedDistribution(TD.Normal(torch.zeros(4, dtype=torch.float64),
                                              torch.ones(4, dtype=torch.float64)),
                                    TD.transforms.StickBreakingTransform())
    assert o2.batch_shape == t2.batch_shape and o2.event_shape == t2.event_shape
    v2 = t2.sample((3,))
    close(o2.log_prob(dt.tensor(v2.numpy())), t2.log_prob(v2), rtol=1e-8)


EXPFAM = [c for c in CASES if cls_name(c) in ("Normal", "Bernoulli", "Exponential", "Gamma",
                                              "Chi2", "Beta", "Dirichlet", "Poisson")]


@pytest.mark.parametrize("case", EXPFAM)
def test_exponential_family_bregman_entropy(case):
    ours, _ = build("dt", cls_name(case), CASES[case])
    theirs, _ = build("torch", cls_name(case), CASES[case])
    assert isinstance(ours, dt.distributions.ExponentialFamily)
    try:
        want = torch.distributions.ExponentialFamily.entropy(theirs)
    except NotImplementedError:              # no _mean_carrier_measure in PyTorch either
        with pytest.raises(NotImplementedError):
            dt.distributions.ExponentialFamily.entropy(ours)
    else:
        got = dt.distributions.ExponentialFamily.entropy(ours)
        close(got, want, rtol=1e-9)
        close(got, ours.entropy(), rtol=1e-7, atol=1e-9)
    p, _ = build("dt", cls_name(case), CASES[case])
    kl = as_np(dt.distributions.kl._kl_expfamily_expfamily(ours, p))
    np.testing.assert_allclose(kl, 0.0, atol=1e-9)
