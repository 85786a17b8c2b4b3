"""The softmax_backward row (what softmax's backward runs without a graph) and its CPU
kernel (backends/cpu/dispatchtorch_cpu/softmax_backward.py): against float64 numpy
and PyTorch, along every dim, strided, half precision, empty; double backward keeps
the differentiable formula."""
import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch.ops.nn_ops.softmax import SOFTMAX_BACKWARD, _softmax_backward

rng = np.random.default_rng(11)


def _want(g, y, dim):
    g, y = g.astype(np.float64), y.astype(np.float64)
    return (g - (g * y).sum(dim, keepdims=True)) * y


def _softmax64(x, dim):
    e = np.exp(x - x.max(dim, keepdims=True))
    return e / e.sum(dim, keepdims=True)


@pytest.mark.parametrize("shape,dim", [((32, 4, 64, 64), -1), ((6, 7, 5), 1), ((6, 7, 5), 0),
                                       ((9,), 0), ((), 0)])
def test_kernel_matches_float64(shape, dim):
    y = _softmax64(rng.standard_normal(shape) * 3, dim).astype(np.float32) if shape else \
        np.float32(1.0)
    g = rng.standard_normal(shape).astype(np.float32)
    with dt.no_grad():
        got = SOFTMAX_BACKWARD(dt.tensor(g), dt.tensor(y), dim=dim).numpy()
        dec = _softmax_backward(dt.tensor(g), dt.tensor(y), dim).numpy()
    g64, y64 = np.asarray(g, np.float64), np.asarray(y, np.float64)
    want = _want(g64, y64, dim)
    # float32's g - s cancels: the bound is in ulps of |y| |g| and of the dot product's
    # sum |g y| (a float32 dot product of n terms: n ulp at most), not of the result
    n = g64.shape[dim] if g64.ndim else 1
    bound = 2.0 ** -24 * np.abs(y64) * (4 * np.abs(g64) +
                                        n * np.abs(g64 * y64).sum(dim, keepdims=True))
    assert (np.abs(got - want) <= bound + 1e-30).all()
    assert (np.abs(dec - want) <= bound + 1e-30).all()


def test_strided_inputs_and_output_dtype():
    y = _softmax64(rng.standard_normal((8, 10)), 0).astype(np.float32)
    g = rng.standard_normal((10, 8)).astype(np.float32)
    with dt.no_grad():
        got = SOFTMAX_BACKWARD(dt.tensor(g).t(), dt.tensor(y), dim=0)
    assert got.dtype == dt.float32 and got.shape == (8, 10)
    np.testing.assert_allclose(got.numpy(), _want(g.T, y, 0), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("dtype,tol", [("float32", 2e-6), ("float64", 1e-12), ("float16", 2e-3),
                                       ("bfloat16", 2e-2)])
@pytest.mark.parametrize("dim", [-1, 1])
def test_softmax_gradient_matches_pytorch(dtype, tol, dim, threads):
    torch = pytest.importorskip("torch")
    xn = (rng.standard_normal((16, 4, 33)) * 2).astype(np.float32)
    gn = rng.standard_normal(xn.shape).astype(np.float32)
    x = dt.from_numpy(xn).to(getattr(dt, dtype)).requires_grad_()
    y = dt.nn.functional.softmax(x, dim=dim)
    y.backward(dt.from_numpy(gn).to(getattr(dt, dtype)))
    xt = torch.from_numpy(xn).to(getattr(torch, dtype)).requires_grad_()
    yt = torch.nn.functional.softmax(xt, dim=dim)
    yt.backward(torch.from_numpy(gn).to(getattr(torch, dtype)))
    np.testing.assert_allclose(x.grad.float().numpy(), xt.grad.float().numpy(), rtol=tol, atol=tol)


def test_double_backward_matches_pytorch():
    torch = pytest.importorskip("torch")
    xn = rng.standard_normal((3, 5))
    wn = rng.standard_normal((3, 5))
    x = dt.from_numpy(xn).requires_grad_()
    (gx,) = dt.autograd.grad((dt.nn.functional.softmax(x, dim=1) * dt.from_numpy(wn)).sum(), x,
                             create_graph=True)
    (gx * gx).sum().backward()
    xt = torch.from_numpy(xn).requires_grad_()
    (gxt,) = torch.autograd.grad((torch.nn.functional.softmax(xt, dim=1) * torch.from_numpy(wn)).sum(),
                                 xt, create_graph=True)
    (gxt * gxt).sum().backward()
    np.testing.assert_allclose(gx.detach().numpy(), gxt.detach().numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-13)


def test_empty_and_special_values():
    with dt.no_grad():
        e = SOFTMAX_BACKWARD(dt.zeros(0, 4), dt.zeros(0, 4), dim=1)
        assert e.shape == (0, 4)
        y = dt.tensor([[0.5, 0.5, 0.0]])
        g = dt.tensor([[1.0, float("nan"), 2.0]])
        got = SOFTMAX_BACKWARD(g, y, dim=1).numpy()
    assert np.isnan(got).all()          # the row's dot product is nan, as in PyTorch
