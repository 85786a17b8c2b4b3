"""Fusion of in-place writes: a bias added in place to a matmul's output and the relu
after it, a region's result copied into a view of a padded buffer, accumulation into
disjoint strided views (max-pool's backward) run as one kernel; writes into views that
may overlap stay separate. Every case compares the compiled run with eager (and numpy)."""
import numpy as np
import pytest

import dispatchtorch as torch
from dispatchtorch._compile.passes import may_overlap
from dispatchtorch._capture.graph import Value

from tests.compile.compile_helpers import DEVICES, _close, _entries, _np


def _run(f, *args, dev):
    cf = torch.compile(f)
    cf(*args)
    got = cf(*args)
    want = f(*args)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        _close(g, w, dev)
    entry, = _entries(cf)
    return got, entry


@pytest.mark.parametrize("dev", DEVICES)
def test_bias_added_in_place_and_relu_fuse_after_a_matmul(dev):
    def f(x, w, b):
        h = x @ w
        h.add_(b)                  # as linear/conv decompose: in place on a fresh result
        return torch.relu(h) * 2.0

    x, w, b = torch.randn(8, 16, device=dev), torch.randn(16, 4, device=dev), \
        torch.randn(4, device=dev)
    got, entry = _run(f, x, w, b, dev=dev)
    want = np.maximum(_np(x) @ _np(w) + _np(b), 0) * 2
    np.testing.assert_allclose(_np(got), want, rtol=1e-5, atol=1e-5)
    assert entry.launches() == (4, 2)          # matmul, then add_ + relu + mul in one


@pytest.mark.parametrize("dev", DEVICES)
def test_a_result_copied_into_a_padded_view_is_written_by_the_region(dev):
    def f(x):
        pad = torch.zeros(x.shape[0], x.shape[1] + 2, device=x.device)
        pad[:, 1:-1] = torch.relu(x) + 1.0
        return pad

    x = torch.randn(5, 7, device=dev)
    got, entry = _run(f, x, dev=dev)
    want = np.zeros((5, 9), np.float32)
    want[:, 1:-1] = np.maximum(_np(x), 0) + 1
    np.testing.assert_array_equal(_np(got), want)
    eager, compiled = entry.launches()
    assert compiled == 2 and entry.forward.n_regions == 1     # the zero fill, the region


@pytest.mark.parametrize("dev", DEVICES)
def test_accumulation_into_disjoint_strided_views_is_one_kernel(dev):
    def f(a, b):
        g = torch.zeros(4, 8, device=a.device)
        g[:, 0::2] += a * 2.0                  # even columns
        g[:, 1::2] += torch.exp(b) * a         # odd columns: disjoint from the even ones
        return g

    a, b = torch.randn(4, 4, device=dev), torch.randn(4, 4, device=dev)
    got, entry = _run(f, a, b, dev=dev)
    want = np.zeros((4, 8), np.float32)
    want[:, 0::2] = _np(a) * 2
    want[:, 1::2] = np.exp(_np(b)) * _np(a)
    np.testing.assert_allclose(_np(got), want, rtol=1e-5, atol=1e-6)
    assert entry.forward.n_regions == 1 and entry.launches()[1] == 2


@pytest.mark.parametrize("dev", DEVICES)
def test_writes_into_overlapping_windows_are_not_fused(dev):
    def f(a, b):
        y = torch.zeros(9, device=a.device)
        y[0:8] += a * 2.0
        y[1:9] += b * 3.0                      # overlaps the first window: runs after it
        return y

    a, b = torch.randn(8, device=dev), torch.randn(8, device=dev)
    got, entry = _run(f, a, b, dev=dev)
    want = np.zeros(9, np.float32)
    want[0:8] += _np(a) * 2
    want[1:9] += _np(b) * 3
    np.testing.assert_allclose(_np(got), want, rtol=1e-6, atol=1e-6)
    # eager: fill, mul, add_, copy_ back (a no-op), mul, add_, copy_ back; compiled:
    # fill, (a * 2, its add_, b * 3) fused, the second add_ on its own after them
    assert entry.forward.n_regions == 1 and entry.launches() == (7, 3)


def test_a_view_read_and_another_view_written_in_place_are_not_fused():
    def f(a):
        z = a[1:] * 2.0
        a[:-1].add_(z)              # writes what another lane of a fused kernel would read
        return a

    x = torch.randn(6)
    want = _np(x).copy()
    cf = torch.compile(f)
    cf(x.clone())
    got = cf(x.clone())
    want[:-1] += want[1:] * 2
    np.testing.assert_allclose(_np(got), want, rtol=1e-6)
    entry, = _entries(cf)
    assert entry.forward.n_regions == 0 and entry.launches() == (2, 2)


def test_batchnorm_running_statistics_updated_in_place_as_eager():
    bn = torch.nn.BatchNorm1d(6)
    twin = torch.nn.BatchNorm1d(6)
    cm = torch.compile(twin)
    x = torch.randn(16, 6)
    for _ in range(3):
        _close(cm(x), bn(x), "cpu")
    _close(twin.running_mean, bn.running_mean, "cpu")
    _close(twin.running_var, bn.running_var, "cpu")


def test_may_overlap_is_exact_for_views_of_one_layout():
    import itertools
    rng = np.random.default_rng(0)

    def elems(v):
        return {v.offset + sum(i * s for i, s in zip(ix, v.strides))
                for ix in itertools.product(*map(range, v.shape))}
    for _ in range(400):
        nd = int(rng.integers(1, 4))
        shape = tuple(int(n) for n in rng.integers(1, 5, nd))
        strides = tuple(int(s) for s in rng.integers(0, 13, nd))
        a = Value(0, shape, "float32", strides, int(rng.integers(0, 20)), "cpu")
        b = Value(1, shape, "float32", strides, int(rng.integers(0, 20)), "cpu")
        assert may_overlap(a, b) == (a.offset != b.offset and bool(elems(a) & elems(b)))
    # other layouts: assumed to overlap
    assert may_overlap(Value(0, (4,), "f", (1,), 0, "cpu"), Value(1, (2,), "f", (2,), 9, "cpu"))
