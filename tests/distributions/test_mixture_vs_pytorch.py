"""MixtureSameFamily against PyTorch: a Gaussian mixture (scalar events) and a mixture of
diagonal Gaussians (Independent, vector events): log_prob, cdf, mean, variance, the
same samples for the same seed, expand, and the constructor's errors."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as dt
from _pairs import close

torch = pytest.importorskip("torch")

W = np.array([[0.2, 0.5, 0.3], [0.6, 0.3, 0.1]])
MU = np.array([[-1.0, 0.0, 2.0], [0.5, 1.0, -3.0]])
SD = np.array([[0.5, 1.0, 0.3], [1.0, 2.0, 0.7]])


def _gmm(lib, vector=False):
    D = (dt if lib == "dt" else torch).distributions
    T = dt.tensor if lib == "dt" else torch.tensor
    mix = D.Categorical(T(W))
    if vector:
        comp = D.Independent(D.Normal(T(np.stack([MU, -MU], -1)), T(np.stack([SD, SD + 1], -1))), 1)
    else:
        comp = D.Normal(T(MU), T(SD))
    return D.MixtureSameFamily(mix, comp)


@pytest.mark.parametrize("vector", [False, True])
def test_mixture_matches_pytorch(vector):
    ours, theirs = _gmm("dt", vector), _gmm("torch", vector)
    assert ours.batch_shape == theirs.batch_shape and ours.event_shape == theirs.event_shape
    torch.manual_seed(0)
    v = theirs.sample((6,))
    close(ours.log_prob(dt.tensor(v.numpy())), theirs.log_prob(v), rtol=1e-9)
    close(ours.mean, theirs.mean, rtol=1e-12)
    close(ours.variance, theirs.variance, rtol=1e-12)
    if not vector:
        close(ours.cdf(dt.tensor(v.numpy())), theirs.cdf(v), rtol=1e-9)
    dt.manual_seed(4)
    torch.manual_seed(4)
    close(ours.sample((20,)), theirs.sample((20,)), rtol=0, atol=0)
    e_ours, e_theirs = ours.expand((4, 2)), theirs.expand((4, 2))
    assert e_ours.batch_shape == e_theirs.batch_shape
    assert e_ours.sample((3,)).shape == e_theirs.sample((3,)).shape
    assert repr(ours.support) == repr(theirs.support)
    assert repr(ours).split("(")[0] == repr(theirs).split("(")[0]


def test_mixture_gradients():
    mu = dt.tensor(MU, requires_grad=True)
    tmu = torch.tensor(MU, requires_grad=True)
    D, TD = dt.distributions, torch.distributions
    ours = D.MixtureSameFamily(D.Categorical(dt.tensor(W)), D.Normal(mu, dt.tensor(SD)))
    theirs = TD.MixtureSameFamily(TD.Categorical(torch.tensor(W)), TD.Normal(tmu, torch.tensor(SD)))
    v = np.array([[0.3, -1.0], [2.0, 0.0]])
    ours.log_prob(dt.tensor(v)).sum().backward()
    theirs.log_prob(torch.tensor(v)).sum().backward()
    close(mu.grad, tmu.grad, rtol=1e-9)


def test_mixture_errors():
    def err(lib):
        D = (dt if lib == "dt" else torch).distributions
        T = dt.tensor if lib == "dt" else torch.tensor
        out = []
        for make in (lambda: D.MixtureSameFamily(D.Normal(T(0.0), T(1.0)), D.Normal(T(MU), T(SD))),
                     lambda: D.MixtureSameFamily(D.Categorical(T(W[:, :2])),
                                                 D.Normal(T(MU), T(SD))),
                     lambda: D.MixtureSameFamily(D.Categorical(T(W)), "normal")):
            try:
                make()
            except ValueError as e:
                out.append(str(e).replace("torch.", "dispatchtorch."))
        return out
    assert err("dt") == err("torch") and len(err("torch")) == 3
