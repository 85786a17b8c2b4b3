"""torch.hann_window and its siblings against their defining formulas in float64 (and
PyTorch's results where it is installed); factories refuse a layout they cannot make
instead of silently returning a dense tensor."""
from __future__ import annotations

import math

import numpy as np
import pytest

import dispatchtorch as dt


def _cosine_sum(n, periodic, coeffs):
    if n == 0:
        return np.zeros(0)
    if n == 1:
        return np.ones(1)
    m = n if periodic else n - 1
    k = np.arange(n)
    return sum((-1) ** i * a * np.cos(2 * math.pi * i * k / m) for i, a in enumerate(coeffs))


def _bartlett(n, periodic):
    if n <= 1:
        return np.ones(n)
    m = n if periodic else n - 1
    return 1 - np.abs(2 * np.arange(n) / m - 1)


def _kaiser(n, periodic, beta):
    if n <= 1:
        return np.ones(n)
    m = n if periodic else n - 1
    return np.i0(beta * np.sqrt(1 - (2 * np.arange(n) / m - 1) ** 2)) / np.i0(beta)


CASES = {
    "hann_window": lambda n, p: _cosine_sum(n, p, [0.5, 0.5]),
    "hamming_window": lambda n, p: _cosine_sum(n, p, [0.54, 0.46]),
    "blackman_window": lambda n, p: _cosine_sum(n, p, [0.42, 0.5, 0.08]),
    "bartlett_window": _bartlett,
    "kaiser_window": lambda n, p: _kaiser(n, p, 12.0),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("n", [0, 1, 2, 7, 16])
@pytest.mark.parametrize("periodic", [True, False])
def test_window_matches_its_formula(name, n, periodic):
    w = getattr(dt, name)(n, periodic, dtype=dt.float64)
    assert w.dtype is dt.float64 and tuple(w.shape) == (n,)
    np.testing.assert_allclose(w.numpy(), CASES[name](n, periodic), rtol=1e-12, atol=1e-12)


def test_default_is_periodic_default_dtype_and_half_types_round_once():
    np.testing.assert_allclose(dt.hann_window(8).numpy(), _cosine_sum(8, True, [0.5, 0.5]),
                               atol=1e-7)
    assert dt.hann_window(8).dtype is dt.get_default_dtype()
    w = dt.hann_window(8, dtype=dt.float16)
    assert w.dtype is dt.float16
    np.testing.assert_array_equal(w.numpy(), _cosine_sum(8, True, [0.5, 0.5])
                                  .astype(np.float32).astype(np.float16))
    assert dt.hann_window(4, requires_grad=True).requires_grad


def test_hamming_alpha_beta_and_kaiser_beta():
    np.testing.assert_allclose(dt.hamming_window(6, True, 0.6, 0.3, dtype=dt.float64).numpy(),
                               _cosine_sum(6, True, [0.6, 0.3]), atol=1e-12)
    np.testing.assert_allclose(dt.kaiser_window(6, False, 5.0, dtype=dt.float64).numpy(),
                               _kaiser(6, False, 5.0), rtol=1e-12)


def test_window_errors_are_pytorchs():
    with pytest.raises(RuntimeError, match="hann_window requires non-negative window_length"):
        dt.hann_window(-1)
    with pytest.raises(RuntimeError, match="hann_window expects floating point dtypes"):
        dt.hann_window(4, dtype=dt.int64)
    with pytest.raises(TypeError, match="window_length"):
        dt.hann_window(2.0)


def test_windows_equal_pytorchs():
    torch = pytest.importorskip("torch")
    for name in CASES:
        for periodic in (True, False):
            ours = getattr(dt, name)(9, periodic).numpy()
            theirs = getattr(torch, name)(9, periodic).numpy()
            np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("make", [
    lambda **k: dt.zeros(2, 3, **k), lambda **k: dt.ones(2, **k), lambda **k: dt.empty(2, **k),
    lambda **k: dt.full((2,), 1.0, **k), lambda **k: dt.randn(2, **k),
    lambda **k: dt.arange(3, **k), lambda **k: dt.eye(2, **k),
    lambda **k: dt.zeros_like(dt.ones(2), **k), lambda **k: dt.hann_window(4, **k),
    lambda **k: dt.signal.windows.hann(4, **k)])
def test_factories_refuse_a_layout_they_cannot_make(make):
    assert make(layout=dt.strided).layout is dt.strided
    with pytest.raises(NotImplementedError, match="layout=dispatchtorch.sparse_coo"):
        make(layout=dt.sparse_coo)
    with pytest.raises(TypeError, match="argument 'layout' must be torch.layout, not str"):
        make(layout="sparse")
