"""torch.gradient, histogram, histogramdd and nonzero_static against PyTorch, on the cases
OpInfo's first samples (the CI test runs 8 per entry) may leave out: coordinate spacing with
edge_order=2, integer input, weights with density, edges out of order, empty input."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")
rng = np.random.default_rng(2)


def _same(ours, theirs):
    ours, theirs = (ours, theirs) if isinstance(theirs, tuple) else ((ours,), (theirs,))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if isinstance(b, tuple):
            _same(a, b)
            continue
        assert a.dtype.name == str(b.dtype)[6:]
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kw", [
    {"spacing": 2.0, "edge_order": 2}, {"dim": (1, 0), "spacing": [0.5, 3.0]},
    {"dim": 1, "spacing": "coordinates", "edge_order": 2}, {"dim": -1}])
def test_gradient_matches_pytorch(kw):
    x = rng.standard_normal((4, 6))
    if kw.get("spacing") == "coordinates":
        c = np.cumsum(rng.uniform(0.1, 1, 6))
        mine, theirs = dict(kw, spacing=(dt.tensor(c),)), dict(kw, spacing=(torch.tensor(c),))
    else:
        mine = theirs = kw
    _same(dt.gradient(dt.tensor(x), **mine), torch.gradient(torch.tensor(x), **theirs))
    _same(dt.gradient(dt.tensor([1, 4, 9, 16])), torch.gradient(torch.tensor([1, 4, 9, 16])))


def test_gradient_errors_match_pytorch():
    for lib in (dt, torch):
        with pytest.raises(RuntimeError, match="at least edge_order"):
            lib.gradient(lib.zeros(2, 3), edge_order=2)
        with pytest.raises(RuntimeError, match="appears multiple times"):
            lib.gradient(lib.zeros(3, 3), dim=(1, -1))


def test_histogram_matches_pytorch():
    x, w = rng.standard_normal(50), rng.uniform(0, 2, 50)
    for kw in ({}, {"range": (-1.0, 1.0), "density": True}, {"weight": True, "density": True}):
        mine = {k: dt.tensor(w) if k == "weight" else v for k, v in kw.items()}
        theirs = {k: torch.tensor(w) if k == "weight" else v for k, v in kw.items()}
        _same(tuple(dt.histogram(dt.tensor(x), 7, **mine)),
              tuple(torch.histogram(torch.tensor(x), 7, **theirs)))
    edges = np.array([-2.0, -0.5, 0.0, 3.0])
    _same(tuple(dt.histogram(dt.tensor(x), dt.tensor(edges))),
          tuple(torch.histogram(torch.tensor(x), torch.tensor(edges))))
    _same(tuple(dt.histogram(dt.zeros(0, dtype=dt.float64), 3)),
          tuple(torch.histogram(torch.zeros(0, dtype=torch.float64), 3)))


def test_histogramdd_matches_pytorch_with_edges_out_of_order():
    x = rng.standard_normal((40, 2)) * 3
    edges = [np.array([-4.0, 1.0, -1.0, 4.0]), np.array([-3.0, 0.0, 3.0])]
    _same(tuple(dt.histogramdd(dt.tensor(x), [dt.tensor(e) for e in edges])),
          tuple(torch.histogramdd(torch.tensor(x), [torch.tensor(e) for e in edges])))
    _same(tuple(dt.histogramdd(dt.tensor(x), [3, 5], density=True)),
          tuple(torch.histogramdd(torch.tensor(x), [3, 5], density=True)))


def test_nonzero_static_pads_and_truncates_as_pytorch():
    x = rng.integers(0, 2, (3, 4))
    for kw in ({"size": 0}, {"size": 3}, {"size": 20}, {"size": 20, "fill_value": 7}):
        _same(dt.nonzero_static(dt.tensor(x), **kw), torch.nonzero_static(torch.tensor(x), **kw))
    for lib in (dt, torch):
        with pytest.raises(RuntimeError, match="non-negative"):
            lib.nonzero_static(lib.tensor(x), size=-1)
