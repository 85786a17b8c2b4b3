"""The log_softmax_backward row (what log_softmax's backward runs without a graph) and
its CPU kernel (backends/cpu/dispatchtorch_cpu/softmax_backward.py): the decomposition's
bits along every dim, strided, half precision, 0-d and empty, rows of -0.0 (PyTorch's
last-dim sign), close to float64 numpy; PyTorch's gradient through log_softmax."""
import numpy as np
import pytest
import torch

import dispatchtorch as dt
from dispatchtorch.ops.nn_ops.softmax import LOG_SOFTMAX_BACKWARD, _log_softmax_backward

rng = np.random.default_rng(12)


def _run(g, y, dim):
    with dt.no_grad():
        got = LOG_SOFTMAX_BACKWARD(g, y, dim=dim)
        dec = _log_softmax_backward(g, y, dim)
    return got, dec


@pytest.mark.parametrize("shape,dim", [((128, 10), 1), ((6, 7, 5), 1), ((6, 7, 5), 0),
                                       ((4, 3, 2100), -1), ((9,), 0), ((), 0), ((0, 3), 1)])
def test_kernel_is_the_decomposition_bit_for_bit(shape, dim):
    x = rng.standard_normal(shape) * 3
    y = (x - np.log(np.exp(x).sum(dim, keepdims=True))).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    got, dec = _run(dt.tensor(g), dt.tensor(y), dim)
    assert got.dtype == dec.dtype and tuple(got.shape) == shape
    np.testing.assert_array_equal(got.numpy(), dec.numpy())
    g64, y64 = g.astype(np.float64), y.astype(np.float64)
    want = g64 - np.exp(y64) * g64.sum(dim, keepdims=True)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)


def test_strided_half_and_negative_zero_rows():
    y = np.log(np.full((4, 6), 1 / 6, np.float32))
    g = rng.standard_normal((4, 6)).astype(np.float32)
    g[1] = -0.0                                     # a row of -0.0: its sum is -0.0
    g[2, :3] = -0.0
    g[2, 3:] = 0.0
    got, dec = _run(dt.tensor(g), dt.tensor(y), 1)
    np.testing.assert_array_equal(got.numpy(), dec.numpy())
    assert np.array_equal(np.signbit(got.numpy()), np.signbit(dec.numpy()))
    yt, gt = dt.tensor(y.T.copy()).t(), dt.tensor(g.T.copy()).t()       # strided views
    got, dec = _run(gt, yt, 1)
    np.testing.assert_array_equal(got.numpy(), dec.numpy())
    for half in (dt.float16, dt.bfloat16):
        gh, yh = dt.tensor(g).to(half), dt.tensor(y).to(half)
        with dt.no_grad():
            got = LOG_SOFTMAX_BACKWARD(gh, yh, dim=1)
            dec = _log_softmax_backward(gh.float(), yh.float(), 1).to(half)
        assert got.dtype is half
        np.testing.assert_array_equal(got.float().numpy(), dec.float().numpy())


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gradient_matches_pytorch(dim):
    x = rng.standard_normal((5, 8)).astype(np.float32)
    g = rng.standard_normal((5, 8)).astype(np.float32)
    ours = dt.tensor(x, requires_grad=True)
    ref = torch.tensor(x, requires_grad=True)
    ours.log_softmax(dim).backward(dt.tensor(g))
    ref.log_softmax(dim).backward(torch.tensor(g))
    np.testing.assert_allclose(ours.grad.numpy(), ref.grad.numpy(), rtol=1e-5, atol=1e-6)
