"""Each distribution against torch.distributions with the same float64 parameters:
log_prob at PyTorch's samples, entropy, mean / mode / variance / stddev, cdf / icdf
(or the same NotImplementedError), shapes, support and arg_constraints, expand, and the
gradient of log_prob with respect to the parameters."""
from __future__ import annotations

import numpy as np
import pytest

from _pairs import as_np, build, close, to_dt
from cases import CASES, cls_name

torch = pytest.importorskip("torch")

NAMES = sorted(CASES)


def _pair(case, grad=False):
    ours, ol = build("dt", cls_name(case), CASES[case], grad)
    theirs, tl = build("torch", cls_name(case), CASES[case], grad)
    return ours, theirs, ol, tl


def _values(theirs):
    torch.manual_seed(0)
    return theirs.sample((4,))


def _both(fn_ours, fn_theirs):
    """Both results, or both raise the same error class."""
    try:
        t = fn_theirs()
    except (NotImplementedError, ValueError) as e:
        with pytest.raises(type(e)):
            fn_ours()
        return None, None
    return fn_ours(), t


@pytest.mark.parametrize("case", NAMES)
def test_shapes_support_constraints(case):
    ours, theirs, _, _ = _pair(case)
    assert ours.batch_shape == theirs.batch_shape
    assert ours.event_shape == theirs.event_shape
    assert ours.has_rsample == theirs.has_rsample
    assert ours.has_enumerate_support == theirs.has_enumerate_support
    assert repr(ours.support).split("(")[0] == repr(theirs.support).split("(")[0]
    assert ours.support.event_dim == theirs.support.event_dim
    assert ours.support.is_discrete == theirs.support.is_discrete
    assert sorted(ours.arg_constraints) == sorted(theirs.arg_constraints)
    assert type(ours).__name__ == type(theirs).__name__
    assert ours.sample((5, 2)).shape == theirs.sample((5, 2)).shape


@pytest.mark.parametrize("case", NAMES)
def test_log_prob_at_pytorch_samples(case):
    ours, theirs, _, _ = _pair(case)
    v = _values(theirs)
    close(ours.log_prob(to_dt(v.numpy())), theirs.log_prob(v), rtol=1e-9)


@pytest.mark.parametrize("case", NAMES)
@pytest.mark.parametrize("what", ["mean", "mode", "variance", "stddev", "entropy"])
def test_moments_and_entropy(case, what):
    ours, theirs, _, _ = _pair(case)

    def get(d):
        return d.entropy() if what == "entropy" else getattr(d, what)
    a, b = _both(lambda: get(ours), lambda: get(theirs))
    if b is not None:
        close(a, b, rtol=1e-9)


@pytest.mark.parametrize("case", NAMES)
def test_cdf_and_icdf(case):
    ours, theirs, _, _ = _pair(case)
    v = _values(theirs)
    a, b = _both(lambda: ours.cdf(to_dt(v.numpy())), lambda: theirs.cdf(v))
    if b is not None:
        close(a, b, rtol=1e-9)
    q = np.array([[0.1], [0.5], [0.93]]) * np.ones(tuple(theirs.batch_shape))
    a, b = _both(lambda: ours.icdf(to_dt(q)), lambda: theirs.icdf(torch.tensor(q)))
    if b is not None:
        close(a, b, rtol=1e-9)


@pytest.mark.parametrize("case", NAMES)
def test_expand(case):
    ours, theirs, _, _ = _pair(case)
    e_ours, e_theirs = ours.expand((2,) + tuple(ours.batch_shape)), \
        theirs.expand((2,) + tuple(theirs.batch_shape))
    assert e_ours.batch_shape == e_theirs.batch_shape
    assert type(e_ours) is type(ours)
    v = _values(e_theirs)
    close(e_ours.log_prob(to_dt(v.numpy())), e_theirs.log_prob(v), rtol=1e-9)
    assert e_ours.sample((3,)).shape == e_theirs.sample((3,)).shape


@pytest.mark.parametrize("case", NAMES)
def test_log_prob_gradients(case):
    ours, theirs, ol, tl = _pair(case, grad=True)
    v = _values(theirs).detach()
    theirs.log_prob(v).sum().backward()
    ours.log_prob(to_dt(v.numpy())).sum().backward()
    for k, leaf in tl.items():
        if getattr(leaf, "requires_grad", False):
            assert ol[k].grad is not None, k
            close(ol[k].grad, leaf.grad, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("case", [c for c in NAMES if CASES[c] and
                                  cls_name(c) not in ("Categorical", "OneHotCategorical")])
def test_entropy_gradients(case):
    ours, theirs, ol, tl = _pair(case, grad=True)
    try:
        theirs.entropy().sum().backward()
    except NotImplementedError:
        pytest.skip("PyTorch has no entropy here")
    ours.entropy().sum().backward()
    for k, leaf in tl.items():
        if getattr(leaf, "requires_grad", False) and leaf.grad is not None:
            close(ol[k].grad, leaf.grad, rtol=1e-7, atol=1e-10)


def test_enumerate_support():
    for case in ("Bernoulli", "Binomial", "Categorical", "OneHotCategorical"):
        ours, theirs, _, _ = _pair(case)
        for expand in (True, False):
            close(ours.enumerate_support(expand), theirs.enumerate_support(expand))


def test_scalar_parameters_give_scalar_batch():
    import dispatchtorch as dt
    for name, args in [("Normal", (0.0, 1.0)), ("Exponential", (2.0,)), ("Gamma", (2.0, 3.0)),
                       ("Beta", (2.0, 3.0)), ("Laplace", (0.0, 1.0)), ("Uniform", (0.0, 1.0)),
                       ("Gumbel", (0.0, 1.0)), ("Bernoulli", (0.3,)), ("Poisson", (2.0,))]:
        ours = getattr(dt.distributions, name)(*args)
        theirs = getattr(torch.distributions, name)(*args)
        assert ours.batch_shape == theirs.batch_shape, name
        assert ours.sample().shape == theirs.sample().shape, name


def test_perplexity_and_repr():
    ours, theirs, _, _ = _pair("Exponential")
    close(ours.perplexity(), theirs.perplexity(), rtol=1e-9)
    assert as_np(ours.rate).shape == (3,)


def _as32(params):
    return {k: (v.astype(np.float32) if isinstance(v, np.ndarray) else v)
            for k, v in params.items()}


@pytest.mark.parametrize("case", NAMES)
def test_float32_parameters_stay_float32(case):
    """Single-precision parameters: the same dtype out as PyTorch's, values to float32
    rounding (constants must not promote to float64)."""
    params = _as32(CASES[case])
    ours, _ = build("dt", cls_name(case), params)
    theirs, _ = build("torch", cls_name(case), params)
    torch.manual_seed(0)
    v = theirs.sample((4,))
    lo, lt = ours.log_prob(to_dt(v.numpy())), theirs.log_prob(v)
    assert str(lo.dtype).split(".")[-1] == str(lt.dtype).split(".")[-1]
    close(lo, lt, rtol=2e-5, atol=2e-5)
    s = ours.sample((3,))
    assert str(s.dtype).split(".")[-1] == str(theirs.sample((3,)).dtype).split(".")[-1]
    for what in ("mean", "variance", "entropy"):
        try:
            t = theirs.entropy() if what == "entropy" else getattr(theirs, what)
        except NotImplementedError:
            continue
        o = ours.entropy() if what == "entropy" else getattr(ours, what)
        assert str(o.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], what
        close(o, t, rtol=2e-5, atol=2e-5)
