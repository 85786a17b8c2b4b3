"""HalfCauchy / HalfNormal (one private base, _half._HalfOf) and RelaxedBernoulli /
RelaxedOneHotCategorical (one private base, _relaxed._RelaxedOf) keep PyTorch's API:
class attributes, expand (also its refusal for a subclass with its own __init__), and the
values read through the base distribution."""
import pytest
import torch
import torch.distributions as TD

import dispatchtorch as dt
import dispatchtorch.distributions as DD

MAKE = {
    "HalfCauchy": lambda lib, D: D.HalfCauchy(lib.tensor([0.5, 2.0])),
    "HalfNormal": lambda lib, D: D.HalfNormal(lib.tensor([0.5, 2.0])),
    "RelaxedBernoulli": lambda lib, D: D.RelaxedBernoulli(lib.tensor(0.7),
                                                          logits=lib.tensor([0.3, -1.0])),
    "RelaxedOneHotCategorical": lambda lib, D: D.RelaxedOneHotCategorical(
        lib.tensor(0.7), probs=lib.tensor([[0.2, 0.8], [0.5, 0.5]])),
}


def _values(d, names):
    return {n: getattr(d, n).tolist() for n in names}


@pytest.mark.parametrize("name", MAKE)
def test_api_and_expand(name):
    ours, theirs = MAKE[name](dt, DD), MAKE[name](torch, TD)
    cls_o, cls_t = type(ours), type(theirs)
    assert sorted(cls_o.arg_constraints) == sorted(cls_t.arg_constraints)
    assert repr(cls_o.support) == repr(cls_t.support)
    assert cls_o.has_rsample == cls_t.has_rsample
    names = ["scale", "mode", "mean", "variance"] if name.startswith("Half") \
        else ["temperature", "logits", "probs"]
    got, want = _values(ours, names), _values(theirs, names)
    for n in names:
        assert torch.allclose(torch.tensor(got[n]), torch.tensor(want[n]), equal_nan=True), n
    shape = (3,) + tuple(ours.batch_shape)
    eo, et = ours.expand(shape), theirs.expand(shape)
    assert type(eo).__name__ == type(et).__name__ == name
    assert tuple(eo.batch_shape) == tuple(et.batch_shape)
    assert tuple(eo.event_shape) == tuple(et.event_shape)


@pytest.mark.parametrize("name", MAKE)
def test_a_subclass_with_its_own_init_must_define_expand(name):
    for lib, D in ((torch, TD), (dt, DD)):
        base = MAKE[name](lib, D)

        class Sub(type(base)):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)

        sub = Sub.__new__(Sub)
        sub.__dict__.update(base.__dict__)
        with pytest.raises(NotImplementedError, match="custom __init__"):
            sub.expand((3,) + tuple(base.batch_shape))


@pytest.mark.parametrize("name", ["HalfCauchy", "HalfNormal"])
def test_half_log_prob_cdf_icdf(name):
    value = [0.25, 3.0]
    ours, theirs = MAKE[name](dt, DD), MAKE[name](torch, TD)
    for m in ("log_prob", "cdf"):
        got = getattr(ours, m)(dt.tensor(value)).tolist()
        want = getattr(theirs, m)(torch.tensor(value)).tolist()
        assert got == pytest.approx(want), m
    assert ours.icdf(dt.tensor([0.1, 0.9])).tolist() == \
        pytest.approx(theirs.icdf(torch.tensor([0.1, 0.9])).tolist())
    assert ours.entropy().tolist() == pytest.approx(theirs.entropy().tolist())


BINARY = {
    "Bernoulli": lambda D, **kw: D.Bernoulli(**kw),
    "Binomial": lambda D, **kw: D.Binomial(5, **kw),
    "NegativeBinomial": lambda D, **kw: D.NegativeBinomial(5, **kw),
    "LogitRelaxedBernoulli": lambda D, **kw: D.relaxed_bernoulli.LogitRelaxedBernoulli(0.5, **kw),
    "Geometric": lambda D, **kw: D.Geometric(**kw),
}


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("given", ["probs", "logits"])
def test_binary_logits_and_probs_derive_each_other(name, given):
    value = [[0.2, 0.7, 0.5]] if given == "probs" else [[-1.5, 0.0, 2.0]]
    ours = BINARY[name](DD, **{given: dt.tensor(value)})
    theirs = BINARY[name](TD, **{given: torch.tensor(value)})
    assert hasattr(ours, "param_shape") == hasattr(theirs, "param_shape")
    if hasattr(theirs, "param_shape"):
        assert tuple(ours.param_shape) == tuple(theirs.param_shape) == (1, 3)
    for attr in ("probs", "logits"):
        assert torch.allclose(torch.tensor(getattr(ours, attr).tolist()), getattr(theirs, attr))
    assert "probs" in vars(ours) and "logits" in vars(ours)     # derived once, then stored
