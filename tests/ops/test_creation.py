"""Deterministic factories against numpy float64, PyTorch (dev-only) and finite differences."""
import pytest

from op_cases import creation
from op_harness import make_tests

test_forward, test_grad = make_tests(creation.CASES)


# -- random factories: reproducible streams with the right distribution ---------------------------
import numpy as np  # noqa: E402

import dispatchtorch as dt  # noqa: E402

N = 20000


def _np(t):
    return np.asarray(t.double().numpy() if t.dtype.is_floating_point else t.numpy())


def test_seeded_streams_repeat():
    dt.manual_seed(123)
    a = dt.rand(5), dt.randn(3), dt.randint(0, 10, (4,))
    dt.manual_seed(123)
    b = dt.rand(5), dt.randn(3), dt.randint(0, 10, (4,))
    for x, y in zip(a, b):
        np.testing.assert_array_equal(_np(x), _np(y))
    g = dt.Generator().manual_seed(7)
    first = dt.rand(3, generator=g)
    g.manual_seed(7)
    np.testing.assert_array_equal(_np(first), _np(dt.rand(3, generator=g)))


def test_rand_randn_randint_distributions():
    dt.manual_seed(0)
    u = _np(dt.rand(N))
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    n = _np(dt.randn(N, dtype=dt.float64))
    assert abs(n.mean()) < 0.03 and abs(n.std() - 1) < 0.03
    r = dt.randint(-3, 4, (N,))
    assert r.dtype is dt.int64 and set(np.unique(_np(r))) == set(range(-3, 4))
    assert dt.randint(5, (2, 3), dtype=dt.int8).dtype is dt.int8
    p = _np(dt.randperm(50))
    assert sorted(p) == list(range(50))


def test_normal_forms():
    dt.manual_seed(1)
    x = _np(dt.normal(2.0, 3.0, (N,)))
    assert abs(x.mean() - 2) < 0.1 and abs(x.std() - 3) < 0.1
    mean = dt.tensor([0.0, 100.0])
    y = dt.normal(mean, 0.5)
    assert y.shape == (2,) and abs(_np(y)[1] - 100) < 5
    z = dt.normal(mean.reshape(2, 1).expand(2, N), dt.tensor(2.0))
    assert abs(_np(z)[1].mean() - 100) < 0.1 and abs(_np(z)[0].std() - 2) < 0.1
    with pytest.raises(RuntimeError):
        dt.normal(0.0, -1.0, (3,))


def test_bernoulli():
    dt.manual_seed(2)
    p = dt.full((N,), 0.3, dtype=dt.float64)
    b = dt.bernoulli(p)
    assert b.dtype is dt.float64 and set(np.unique(_np(b))) <= {0.0, 1.0}
    assert abs(_np(b).mean() - 0.3) < 0.02
    assert abs(_np(dt.bernoulli(dt.zeros(N), 0.8)).mean() - 0.8) < 0.02
    with pytest.raises(RuntimeError):
        dt.bernoulli(dt.tensor([1.5]))


def test_multinomial():
    dt.manual_seed(3)
    probs = dt.tensor([0.1, 0.0, 0.6, 0.3])
    s = _np(dt.multinomial(probs, N, replacement=True))
    counts = np.bincount(s, minlength=4) / N
    np.testing.assert_allclose(counts, [0.1, 0.0, 0.6, 0.3], atol=0.02)
    rows = dt.multinomial(dt.ones(3, 5), 5)          # without replacement: a permutation
    assert rows.shape == (3, 5) and all(sorted(r) == list(range(5)) for r in _np(rows))
    with pytest.raises(RuntimeError):
        dt.multinomial(probs, 5)                     # more than the non-zero categories allow
    with pytest.raises(RuntimeError):
        dt.multinomial(dt.tensor([-1.0, 2.0]), 1)


def test_in_place_fills():
    dt.manual_seed(4)
    x = dt.empty(N, dtype=dt.float64)
    assert x.uniform_(-2, 3) is x
    v = _np(x)
    assert -2 <= v.min() and v.max() < 3 and abs(v.mean() - 0.5) < 0.05
    x.normal_(5, 2)
    assert abs(_np(x).mean() - 5) < 0.1 and abs(_np(x).std() - 2) < 0.1
    with pytest.raises(RuntimeError):
        x.uniform_(3, 2)
    leaf = dt.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError):
        leaf.uniform_()
    with dt.no_grad():
        leaf.uniform_()                               # allowed outside autograd, as PyTorch
