"""Through the public frontend: `device="opencl"` gives what `device="cpu"` gives,
for ops, in-place writes through views, indexing, and autograd."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as torch


@pytest.fixture(autouse=True)
def _needs_opencl(ocl):
    return ocl


def both(fn, *arrays, dtype=None):
    """fn on cpu tensors and on opencl tensors made from the same arrays."""
    outs = []
    for dev in ("cpu", "opencl"):
        ts = [torch.tensor(a, device=dev, dtype=dtype) for a in arrays]
        r = fn(*ts)
        outs.append(r)
    return outs


def same(c, o, rtol=1e-5, atol=1e-6):
    assert str(o.device).startswith("opencl"), o.device
    assert c.dtype == o.dtype and tuple(c.shape) == tuple(o.shape)
    np.testing.assert_allclose(o.cpu().numpy().astype(np.float64), c.numpy().astype(np.float64),
                               rtol=rtol, atol=atol, equal_nan=True)


def test_device_strings():
    x = torch.ones(3, device="opencl")
    assert str(x.device) == "opencl:0" and torch.ones(2, device="opencl:0").device == x.device


def test_arithmetic_broadcasting_and_promotion(rng):
    a = rng.standard_normal((4, 5)).astype(np.float32)
    b = rng.integers(-3, 4, (5,)).astype(np.int64)
    for fn in (lambda x, y: x + y, lambda x, y: x * y - 2, lambda x, y: x / (y.abs() + 1),
               lambda x, y: torch.maximum(x, y), lambda x, y: (x > y) & (y != 0),
               lambda x, y: torch.where(x > 0, x, y), lambda x, y: x.exp() + y.sqrt(),
               lambda x, y: x.clamp(-1, 1) ** 2, lambda x, y: y // 2 + y % 3):
        c, o = both(fn, a, b)
        same(c, o)


def test_in_place_through_views(rng):
    a = rng.standard_normal((6, 8)).astype(np.float32)
    for dev in ("cpu", "opencl"):
        x = torch.tensor(a, device=dev)
        x[:, 1::2].mul_(3)
        x.t()[2].add_(1)
        x[4:].zero_()
        x[0] = torch.arange(8, device=dev, dtype=torch.float32)
        if dev == "cpu":
            want = x.numpy().copy()
        else:
            np.testing.assert_allclose(x.cpu().numpy(), want, rtol=1e-6)


def test_reductions(rng):
    a = rng.standard_normal((5, 7, 3)).astype(np.float32)
    for fn in (lambda x: x.sum(), lambda x: x.sum(1), lambda x: x.mean((0, 2), keepdim=True),
               lambda x: x.amax(0), lambda x: x.argmax(), lambda x: x.argmin(2, keepdim=True),
               lambda x: x.max(1).values, lambda x: (x > 0).any(0), lambda x: (x > -2).all(),
               lambda x: x[:, 1].sum(0), lambda x: x.transpose(0, 2).sum((0, 1))):
        c, o = both(fn, a)
        same(c, o, rtol=1e-5, atol=1e-5)


def test_matmul_family(rng):
    a = rng.standard_normal((3, 4, 5)).astype(np.float32)
    b = rng.standard_normal((5, 6)).astype(np.float32)
    for fn in (lambda x, y: x @ y, lambda x, y: x[0] @ y, lambda x, y: x[0, 0] @ y,
               lambda x, y: x.mT @ x, lambda x, y: torch.bmm(x, x.mT)):
        c, o = both(fn, a, b)
        same(c, o, rtol=1e-5, atol=1e-5)


def test_linear_kernel_matches_its_decomposition(rng):
    """F.linear's OpenCL kernel (the bias added in the matmul's store where it can, else
    the add kernel) gives the decomposition's bits: x @ w.T + b on the same device,
    for 1-D/2-D/3-D inputs, transposed and permuted inputs, biases that are (N,), (1,),
    strided or absent; float16 rounds once from float32 like the decomposition;
    gradients. (float64 runs the same kernels: test_matmul_direct_layouts.)"""
    F = torch.nn.functional
    x = rng.standard_normal((2, 6, 20)).astype(np.float32)
    w = rng.standard_normal((37, 20)).astype(np.float32)
    b = rng.standard_normal(74).astype(np.float32)
    X, W, B = (torch.tensor(a, device="opencl") for a in (x, w, b))
    for xi in (X, X[0], X[0, 0], X[0].t().contiguous().t(), X.transpose(0, 1)):
        for bi in (B[:37], B[::2], B[:1], None):
            got = F.linear(xi, W, bi)
            want = xi @ W.t() if bi is None else xi @ W.t() + bi
            np.testing.assert_array_equal(got.cpu().numpy(), want.cpu().numpy())
    np.testing.assert_allclose(F.linear(X, W, B[:37]).cpu().numpy(),
                               x.astype(np.float64) @ w.T.astype(np.float64) + b[:37], rtol=1e-5,
                               atol=1e-5)
    h = [t.half() for t in (X[0], W, B[:37])]
    want = (h[0].float() @ h[1].float().t() + h[2].float()).half()
    np.testing.assert_array_equal(F.linear(*h).cpu().numpy(), want.cpu().numpy())
    xs, ws, bs = (torch.tensor(a, device="opencl", requires_grad=True) for a in (x, w, b[:37]))
    F.linear(xs, ws, bs).sum().backward()          # the row's own derivative rule
    np.testing.assert_allclose(bs.grad.cpu().numpy(), np.full(37, 12.0), rtol=1e-6)
    np.testing.assert_allclose(xs.grad.cpu().numpy(), np.broadcast_to(w.sum(0), x.shape), rtol=1e-5,
                               atol=1e-5)


def test_indexing(rng):
    a = rng.standard_normal((6, 5)).astype(np.float32)
    idx = np.array([[0, 2, 1, 4, 3], [5, 5, 0, 0, 1]])
    for fn in (lambda x: x[torch.tensor([4, 0, 2], device=x.device)],
               lambda x: x.gather(0, torch.tensor(idx, device=x.device)),
               lambda x: x.scatter_add(0, torch.tensor(idx, device=x.device), x[:2]),
               lambda x: x.index_select(1, torch.tensor([3, 3, 0], device=x.device)),
               lambda x: torch.nonzero(x > 0.5),
               lambda x: x.masked_fill(x < 0, 7.0),
               lambda x: x[x > 0],
               lambda x: torch.cat([x, x[:2] * 2], 0)):
        c, o = both(fn, a)
        same(c, o)


def test_setitem_with_advanced_index_accumulates_like_cpu(rng):
    for dev in ("cpu", "opencl"):
        x = torch.zeros(5, device=dev)
        x.index_put_((torch.tensor([0, 2, 2, 4, 2], device=dev),),
                     torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0], device=dev), accumulate=True)
        if dev == "cpu":
            want = x.numpy().copy()
        else:
            np.testing.assert_array_equal(x.cpu().numpy(), want)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64, torch.int8,
                                   torch.uint8, torch.int16, torch.int32, torch.bool])
def test_dtypes_round_trip_and_compute(rng, dtype):
    a = rng.integers(0, 5, (4, 6))
    c, o = both(lambda x: (x + x) * x if dtype is not torch.bool else x | ~x, a, dtype=dtype)
    same(c, o, rtol=1e-2)
    c, o = both(lambda x: x.to(torch.float32).sum(0), a, dtype=dtype)
    same(c, o)


def test_no_cpu_fallback_for_prims(rng):
    """Strict mode is on for these tests: any prim missing on opencl would raise."""
    from dispatchtorch.dispatch import get_backend
    x = torch.tensor(rng.standard_normal((8, 8)).astype(np.float32), device="opencl")
    ((x @ x).relu().sum(1).exp() - x.amax(0)).cpu()
    assert not get_backend("opencl").fallbacks


# -- autograd ------------------------------------------------------------------------------

def _mlp_grads(dev, arrays):
    w1, b1, w2, xin, y = (torch.tensor(a, device=dev) for a in arrays)
    for p in (w1, b1, w2):
        p.requires_grad_(True)
    h = (xin @ w1 + b1).tanh()
    logits = h @ w2
    loss = ((logits - y) ** 2).mean() + logits.amax(1).sum() * 0.1
    loss.backward()
    return [loss.detach()] + [p.grad for p in (w1, b1, w2)]


def test_autograd_matches_cpu(rng):
    arrays = [rng.standard_normal(s).astype(np.float32) * 0.5
              for s in [(6, 10), (10,), (10, 3), (16, 6), (16, 3)]]
    cpu_r = _mlp_grads("cpu", arrays)
    ocl_r = _mlp_grads("opencl", arrays)
    for c, o in zip(cpu_r, ocl_r):
        same(c, o, rtol=1e-4, atol=1e-5)


def test_autograd_through_views(rng):
    a = rng.standard_normal((5, 4)).astype(np.float32)
    grads = []
    for dev in ("cpu", "opencl"):
        x = torch.tensor(a, device=dev, requires_grad=True)
        y = x.t()[1:, ::2] * 3
        z = (torch.where(y > 0, y, -y) ** 2).sum() + x.amin(0).sum() + (x[1:] @ x[1:].mT).sum()
        z.backward()
        grads.append(x.grad)
    same(grads[0], grads[1])


def test_fused_relu_and_gradients(rng):
    """relu runs as one kernel on opencl (sigmoid as its decomposition), with the
    composite's own derivative rule: values and gradients equal the CPU's."""
    from dispatchtorch.dispatch import get_backend
    assert "relu" in get_backend("opencl").kernels
    a = rng.standard_normal((9, 7)).astype(np.float32)
    res = []
    for dev in ("cpu", "opencl"):
        x = torch.tensor(a, device=dev, requires_grad=True)
        y = (x.relu() * 2 + x.sigmoid()).sum()
        y.backward()
        res.append((y.detach(), x.grad))
    same(res[0][0], res[1][0], rtol=1e-5, atol=1e-5)
    same(res[0][1], res[1][1])
