"""Small programs written against torch, run on both libraries: fitting a Gaussian
mixture by Adam on MixtureSameFamily.log_prob, a VAE-style KL plus reparameterized
sample, and a tanh-squashed Gaussian policy: the same numbers for the same seed."""
from __future__ import annotations

import pytest

import dispatchtorch as dt
from _pairs import close

torch = pytest.importorskip("torch")


def _gmm_fit(lib):
    D = lib.distributions
    lib.manual_seed(0)
    data = lib.cat([lib.randn(200) * 0.5 - 2, lib.randn(200) * 0.7 + 1.5])
    logits = lib.zeros(2, requires_grad=True)
    loc = lib.tensor([-0.5, 0.5], requires_grad=True)
    log_scale = lib.zeros(2, requires_grad=True)
    opt = lib.optim.Adam([logits, loc, log_scale], lr=0.05)
    for _ in range(60):
        gmm = D.MixtureSameFamily(D.Categorical(logits=logits), D.Normal(loc, log_scale.exp()))
        loss = -gmm.log_prob(data).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.detach(), loc.detach(), log_scale.detach()


def test_gaussian_mixture_fit():
    for a, b in zip(_gmm_fit(dt), _gmm_fit(torch)):
        close(a, b, rtol=1e-5, atol=1e-6)


def _vae_and_policy(lib):
    D = lib.distributions
    lib.manual_seed(1)
    mu = lib.randn(4, 3).requires_grad_()
    ls = (0.1 * lib.randn(4, 3)).requires_grad_()
    q = D.Independent(D.Normal(mu, ls.exp()), 1)
    p = D.Independent(D.Normal(lib.zeros(4, 3), lib.ones(4, 3)), 1)
    z = q.rsample()
    pi = D.TransformedDistribution(D.Normal(mu[0], ls[0].exp()),
                                   [D.transforms.TanhTransform(cache_size=1)])
    act = pi.rsample((5,))
    loss = D.kl_divergence(q, p).sum() + z.pow(2).sum() - pi.log_prob(act).sum()
    loss.backward()
    return loss.detach(), mu.grad, ls.grad


def test_vae_kl_and_squashed_policy():
    for a, b in zip(_vae_and_policy(dt), _vae_and_policy(torch)):
        close(a, b, rtol=1e-5, atol=1e-5)
