"""nn.init: bounds, moments and fans against the formulas PyTorch documents."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import to_np

import dispatchtorch as dt
from dispatchtorch.nn import init


def _sample(fn, shape=(200, 300), **kw):
    dt.manual_seed(0)
    t = dt.empty(shape)
    assert fn(t, **kw) is t
    return to_np(t)


def test_calculate_gain_and_fans():
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert init.calculate_gain("selu") == 0.75 and init.calculate_gain("conv2d") == 1
    assert init._calculate_fan_in_and_fan_out(dt.empty(8, 3, 5, 2)) == (30, 80)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(dt.empty(3))
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")


@pytest.mark.parametrize("fn,kw,bound,std", [
    (init.uniform_, dict(a=-0.5, b=2.0), (-0.5, 2.0), 2.5 / math.sqrt(12)),
    (init.xavier_uniform_, dict(gain=2.0), None, 2.0 * math.sqrt(2 / 500)),
    (init.kaiming_uniform_, dict(a=0.0, nonlinearity="relu"), None, math.sqrt(2 / 300)),
    (init.kaiming_uniform_, dict(mode="fan_out", nonlinearity="relu"), None,
     math.sqrt(2 / 200)),
])
def test_uniform_initialisers(fn, kw, bound, std):
    v = _sample(fn, **kw)
    lim = bound or (-std * math.sqrt(3), std * math.sqrt(3))
    assert v.min() >= lim[0] and v.max() <= lim[1]
    assert abs(v.std() - std) < 0.02 * std


@pytest.mark.parametrize("fn,kw,mean,std", [
    (init.normal_, dict(mean=1.0, std=0.5), 1.0, 0.5),
    (init.xavier_normal_, {}, 0.0, math.sqrt(2 / 500)),
    (init.kaiming_normal_, dict(nonlinearity="relu"), 0.0, math.sqrt(2 / 300)),
])
def test_normal_initialisers(fn, kw, mean, std):
    v = _sample(fn, **kw)
    assert abs(v.mean() - mean) < 5 * std / math.sqrt(v.size)      # five standard errors
    assert abs(v.std() - std) < 0.02 * std


def test_trunc_normal_stays_in_bounds_with_the_right_moments():
    v = _sample(init.trunc_normal_, mean=0.5, std=1.0, a=-0.5, b=1.5)
    assert v.min() >= -0.5 and v.max() <= 1.5
    # a normal cut at mean +- 1 std keeps its mean; its variance is 1 - 2 phi(1) / (2 Phi(1) - 1)
    phi = math.exp(-0.5) / math.sqrt(2 * math.pi)
    z = math.erf(1 / math.sqrt(2))
    assert abs(v.mean() - 0.5) < 0.01
    assert abs(v.var() - (1 - 2 * phi / z)) < 0.01


def test_orthogonal_gives_orthonormal_rows_or_columns():
    for shape in ((30, 50), (50, 30), (6, 2, 3, 3)):
        v = _sample(init.orthogonal_, shape, gain=2.0).reshape(shape[0], -1)
        small = min(v.shape)
        gram = v @ v.T if v.shape[0] == small else v.T @ v
        np.testing.assert_allclose(gram, 4.0 * np.eye(small), atol=1e-4)


def test_constant_eye_dirac():
    assert set(np.unique(_sample(init.constant_, (3, 4), val=0.25))) == {0.25}
    assert np.array_equal(_sample(init.eye_, (3, 4)), np.eye(3, 4))
    w = _sample(init.dirac_, (4, 2, 3, 3), groups=2)
    x = dt.randn(1, 4, 5, 5)
    y = dt.nn.functional.conv2d(x, dt.tensor(w.astype(np.float32)), padding=1, groups=2)
    assert np.allclose(to_np(y), to_np(x))          # the identity convolution


def test_initialisers_do_not_record_gradients():
    p = dt.nn.Parameter(dt.empty(3, 4))
    init.kaiming_uniform_(p)
    assert p.is_leaf and p.grad_fn is None and p.requires_grad


def test_generator_makes_initialisation_reproducible():
    a, b = dt.empty(5, 5), dt.empty(5, 5)
    init.normal_(a, generator=dt.Generator().manual_seed(3))
    init.normal_(b, generator=dt.Generator().manual_seed(3))
    assert np.array_equal(to_np(a), to_np(b))
