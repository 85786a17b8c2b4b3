"""c_softmax.py: softmax, log_softmax and softmax_backward over the last axis as one C
loop a row, on the pool's row blocks: against float64 formulas, PyTorch's values,
special rows (NaN, +-inf, all -inf; zero row sums' signs) as numpy's passes give them,
and taken only where it applies."""
import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch_cpu import c_softmax
from dispatchtorch_cpu.composites import KERNELS
from dispatchtorch_cpu.softmax_backward import softmax_backward

pytestmark = pytest.mark.skipif(not c_softmax.kernels(),
                                reason="no C compiler or no vector exp: numpy's passes run")


def _want(x, log):
    xd = x.astype(np.float64)
    d = xd - xd.max(-1, keepdims=True)
    lse = np.log(np.exp(d).sum(-1, keepdims=True))
    return d - lse if log else np.exp(d - lse)


@pytest.fixture(params=[1, 2])
def threads(request):
    old = dt.get_num_threads()
    dt.set_num_threads(request.param)
    yield request.param
    dt.set_num_threads(old)


@pytest.mark.parametrize("dtype,rtol", [("float32", 2e-6), ("float64", 1e-13)])
@pytest.mark.parametrize("shape", [(32, 4, 64, 64), (2048, 65), (3, 5000), (70000,)])
@pytest.mark.parametrize("log", [0, 1])
def test_against_float64(dtype, rtol, shape, log, threads):
    x = (np.random.default_rng(0).standard_normal(shape) * 3).astype(dtype)
    out = np.empty_like(x)
    assert c_softmax.applies(out, x, -1)
    KERNELS["log_softmax" if log else "softmax"](out, x, dim=-1)
    want = _want(x, log)
    atol = 1e-6 if dtype == "float32" else 1e-14
    np.testing.assert_allclose(out, want, rtol=rtol, atol=atol * (1 + np.abs(want).max()))


def test_special_rows_as_numpys_passes():
    x = np.random.default_rng(1).standard_normal((64, 128)).astype(np.float32)
    x[0, 3] = np.nan
    x[1, 5] = np.inf
    x[2, :] = -np.inf
    x[3, 7] = -np.inf
    x[4, :] = 1e30
    for name, numpy_form in (("softmax", KERNELS["softmax"]), ("log_softmax", KERNELS["log_softmax"])):
        got = np.empty_like(x)
        numpy_form(got, x, dim=-1)
        c_softmax.MIN_ELEMENTS, saved = 1 << 40, c_softmax.MIN_ELEMENTS
        try:
            want = np.empty_like(x)
            numpy_form(want, x, dim=-1)          # numpy's passes
        finally:
            c_softmax.MIN_ELEMENTS = saved
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)
        assert np.isnan(got[:3]).all() and not np.isnan(got[3:]).any(), name


def test_matches_pytorch_through_the_frontend(threads):
    torch = pytest.importorskip("torch")
    x = (np.random.default_rng(2).standard_normal((16, 4, 64, 64)) * 2).astype(np.float32)
    for name in ("softmax", "log_softmax"):
        got = getattr(dt.from_numpy(x), name)(-1).numpy()
        want = getattr(torch.from_numpy(x), name)(-1).numpy()
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-7)


def test_applies_only_to_the_last_axis_of_contiguous_large_floats():
    x = np.zeros((64, 128), np.float32)
    out = np.empty_like(x)
    assert c_softmax.applies(out, x, 1) and c_softmax.applies(out, x, -1)
    assert not c_softmax.applies(out, x, 0)
    assert not c_softmax.applies(out.T, x.T, -1)
    assert not c_softmax.applies(np.empty((64, 128), np.float16), x.astype(np.float16), -1)
    small = np.zeros((4, 8), np.float32)
    assert not c_softmax.applies(np.empty_like(small), small, -1)


@pytest.mark.parametrize("dtype,rtol", [("float32", 1e-5), ("float64", 1e-12)])
@pytest.mark.parametrize("shape", [(32, 4, 64, 64), (2048, 65), (70000,)])
def test_backward_against_float64(dtype, rtol, shape, threads):
    rng = np.random.default_rng(3)
    y = _want(rng.standard_normal(shape).astype(dtype), 0).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    out = np.empty_like(y)
    assert c_softmax.applies_backward(out, g, y, -1)
    softmax_backward(out, g, y, dim=-1)
    gd, yd = g.astype(np.float64), y.astype(np.float64)
    want = (gd - (gd * yd).sum(-1, keepdims=True)) * yd
    np.testing.assert_allclose(out, want, rtol=rtol, atol=rtol * np.abs(want).max())


def test_backward_zero_row_sum_keeps_pytorchs_sign():
    """A row whose products all have the sign bit set sums to -0.0 (PyTorch's kernel starts
    from the first product, not +0.0): the C loop gives the numpy route's bits and
    PyTorch's signs there."""
    y = np.full((64, 128), 0.5, np.float32)
    g = np.zeros((64, 128), np.float32)
    g[0] = -0.0                          # products -0.0: the row sum is -0.0
    g[1, :64] = -0.0                     # mixed signs: +0.0
    y[2] = -0.0
    g[2] = 1.0                           # products -0.0 again
    got = np.empty_like(y)
    softmax_backward(got, g, y, dim=-1)
    c_softmax.MIN_ELEMENTS, saved = 1 << 40, c_softmax.MIN_ELEMENTS
    try:
        want = np.empty_like(y)
        softmax_backward(want, g, y, dim=-1)        # the numpy route
    finally:
        c_softmax.MIN_ELEMENTS = saved
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    torch = pytest.importorskip("torch")
    tw = torch._softmax_backward_data(torch.from_numpy(g), torch.from_numpy(y), -1, torch.float32)
    np.testing.assert_array_equal(np.signbit(got[:3]), np.signbit(tw.numpy()[:3]))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_in_place_and_masked_rows(name):
    """out = x (in place) takes numpy's passes (the loops reread x after writing out);
    rows masked with -inf (a causal mask) give exp's exact zeros."""
    x = (np.random.default_rng(4).standard_normal((32, 64, 64)) * 2).astype(np.float32)
    x[:, np.triu_indices(64, 1)[0], np.triu_indices(64, 1)[1]] = -np.inf
    assert not c_softmax.applies(x, x, -1)
    want = _want(np.where(np.isinf(x), -1e30, x), name == "log_softmax")
    got = np.empty_like(x)
    KERNELS[name](got, x, dim=-1)
    finite = ~np.isinf(x)
    np.testing.assert_allclose(got[finite], want[finite], rtol=2e-6, atol=1e-6)
    if name == "softmax":
        assert (got[~finite] == 0).all() and not np.signbit(got[~finite]).any()
    else:
        assert (got[~finite] == -np.inf).all()
    y = x.copy()
    KERNELS[name](y, y, dim=-1)
    np.testing.assert_allclose(y, got, rtol=2e-6, atol=1e-6)
