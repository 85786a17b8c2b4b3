"""layer_norm's backward without a graph runs the layer_norm_backward row, whose CPU
kernel (backends/cpu/dispatchtorch_cpu/norm_backward.py) works in blocks of rows. Its
gradients match PyTorch's (the independent answer) and float64 numpy's, on one thread
and on the pool, for every output_mask, strided inputs, no weight, a multi-dim shape
and half precision; the decomposition gives the same values; double backward keeps the
differentiable formulas."""
import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch.ops.nn_ops.norm import LAYER_NORM_BACKWARD, _layer_norm_backward

torch = pytest.importorskip("torch")
rng = np.random.default_rng(3)


def _grads(tl, x, g, shape, w, b, eps=1e-5, layout=None):
    X = tl.tensor(x)
    if layout == "T":
        X = tl.tensor(np.ascontiguousarray(x.T)).t()
    X.requires_grad_()
    W = None if w is None else tl.tensor(w).requires_grad_()
    B = None if b is None else tl.tensor(b).requires_grad_()
    tl.nn.functional.layer_norm(X, shape, W, B, eps).backward(tl.tensor(g))
    return [None if t is None else t.grad.detach().numpy() for t in (X, W, B)]


def _numpy64(x, g, shape, w, eps=1e-5):
    """float64 gradients by the textbook formulas (x, weight, bias)."""
    k = len(shape)
    axes = tuple(range(x.ndim - k, x.ndim))
    lead = tuple(range(x.ndim - k))
    x, g = x.astype(np.float64), g.astype(np.float64)
    mu = x.mean(axes, keepdims=True)
    rstd = 1 / np.sqrt(((x - mu) ** 2).mean(axes, keepdims=True) + eps)
    xhat = (x - mu) * rstd
    gh = g * (w.astype(np.float64) if w is not None else 1.0)
    gx = rstd * (gh - gh.mean(axes, keepdims=True) - xhat * (gh * xhat).mean(axes, keepdims=True))
    return gx, (g * xhat).sum(lead), g.sum(lead)


CASES = [((300, 64), (64,), True, True, None),          # several blocks of rows
         ((4, 6, 8), (6, 8), True, True, None),
         ((5, 7), (7,), False, False, None),
         ((9, 5), (5,), False, True, None),               # bias without weight
         ((6, 40), (40,), True, True, "T"),               # a transposed view
         ((1100, 256), (256,), True, True, None)]         # the pool's size


@pytest.mark.parametrize("shape,norm,weight,bias,layout", CASES)
def test_gradients_match_pytorch_and_float64(shape, norm, weight, bias, layout, threads):
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal(norm).astype(np.float32) if weight else None
    b = rng.standard_normal(norm).astype(np.float32) if bias else None
    ours = _grads(dt, x, g, norm, w, b, layout=layout)
    ref = _grads(torch, x, g, norm, w, b, layout=layout)
    exact = _numpy64(x, g, norm, w)
    for o, r, e, present in zip(ours, ref, exact, (True, weight, bias)):
        if not present:
            assert o is None
            continue
        scale = np.abs(e).max()
        np.testing.assert_allclose(o, e, rtol=0, atol=2e-6 * scale * np.sqrt(shape[0]))
        np.testing.assert_allclose(o, r, rtol=0, atol=2e-6 * scale * np.sqrt(shape[0]))


@pytest.mark.parametrize("mask", [(True, True, True), (True, False, False), (False, True, False),
                                  (False, False, True), (False, True, True)])
def test_each_output_mask_equals_the_decomposition(mask):
    x = dt.from_numpy(rng.standard_normal((70, 33)).astype(np.float32))
    g = dt.from_numpy(rng.standard_normal((70, 33)).astype(np.float32))
    w = dt.from_numpy(rng.standard_normal(33).astype(np.float32))
    with dt.no_grad():
        fused = LAYER_NORM_BACKWARD(g, x, w, normalized_shape=(33,), eps=1e-5, output_mask=mask)
        plain = _layer_norm_backward(g, x, w, (33,), 1e-5, mask)
    fused = fused if isinstance(fused, tuple) else (fused,)
    assert len(fused) == len(plain) == sum(mask)
    for f, p in zip(fused, plain):
        assert f.shape == p.shape and f.dtype == p.dtype
        np.testing.assert_allclose(f.numpy(), p.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype,tol", [("float16", 2e-2), ("bfloat16", 1e-1)])
def test_half_precision_computes_in_float32(dtype, tol):
    xn = rng.standard_normal((50, 16)).astype(np.float32)
    gn = rng.standard_normal((50, 16)).astype(np.float32)
    wn = rng.standard_normal(16).astype(np.float32)
    ours = _grads(dt, xn, gn, (16,), wn, wn)
    x = dt.from_numpy(xn).to(getattr(dt, dtype)).requires_grad_()
    w = dt.from_numpy(wn).to(getattr(dt, dtype)).requires_grad_()
    dt.nn.functional.layer_norm(x, (16,), w, w.detach().clone(), 1e-5).backward(
        dt.from_numpy(gn).to(getattr(dt, dtype)))
    assert x.grad.dtype == getattr(dt, dtype)
    np.testing.assert_allclose(x.grad.float().numpy(), ours[0], rtol=tol, atol=tol)
    np.testing.assert_allclose(w.grad.float().numpy(), ours[1], rtol=tol, atol=tol * 10)


def test_empty_rows_and_double_backward():
    x = dt.zeros(0, 8, requires_grad=True)
    w = dt.ones(8, requires_grad=True)
    dt.nn.functional.layer_norm(x, (8,), w, None).sum().backward()
    assert x.grad.shape == (0, 8) and np.array_equal(w.grad.numpy(), np.zeros(8, np.float32))
    xn = rng.standard_normal((3, 6))
    wn = rng.standard_normal(6)
    got, want = [], []
    for tl, out in ((dt, got), (torch, want)):
        x = tl.tensor(xn, requires_grad=True)
        w = tl.tensor(wn, requires_grad=True)
        (gx,) = tl.autograd.grad((tl.nn.functional.layer_norm(x, (6,), w) ** 2).sum(), x,
                                 create_graph=True)
        gx.sum().backward()
        out += [x.grad.detach().numpy(), w.grad.detach().numpy()]
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)
