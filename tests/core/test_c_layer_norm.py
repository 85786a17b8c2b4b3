"""c_layer_norm.py: layer_norm's forward and backward as C row loops, on the pool's row
blocks: against float64 formulas (with and without weight and bias, every output_mask,
several trailing dims), against PyTorch through the frontend, and taken only where
it applies."""
import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch_cpu import c_layer_norm
from dispatchtorch_cpu.composites import KERNELS as COMPOSITES
from dispatchtorch_cpu.norm_backward import layer_norm_backward

pytestmark = pytest.mark.skipif(not c_layer_norm.kernels(), reason="no C compiler")
rng = np.random.default_rng(7)


@pytest.fixture(params=[1, 2])
def threads(request):
    old = dt.get_num_threads()
    dt.set_num_threads(request.param)
    yield request.param
    dt.set_num_threads(old)


def _float64(x, w, b, g, norm):
    axes = tuple(range(x.ndim - len(norm), x.ndim))
    xd, gd = x.astype(np.float64), g.astype(np.float64)
    m = xd.mean(axes, keepdims=True)
    rstd = 1 / np.sqrt(((xd - m) ** 2).mean(axes, keepdims=True) + 1e-5)
    xh = (xd - m) * rstd
    wd = np.ones(norm) if w is None else w.astype(np.float64)
    y = xh * wd + (0 if b is None else b.astype(np.float64))
    gh = gd * wd
    n = np.prod(norm)
    gx = rstd * (gh - gh.sum(axes, keepdims=True) / n - xh * (gh * xh).sum(axes, keepdims=True) / n)
    lead = tuple(range(x.ndim - len(norm)))
    return y, gx, (gd * xh).sum(lead), gd.sum(lead)


@pytest.mark.parametrize("dtype,tol", [("float32", 2e-5), ("float64", 1e-12)])
@pytest.mark.parametrize("shape,norm", [((32, 64, 64), (64,)), ((300, 4096), (4096,)),
                                        ((64, 8, 4, 16), (4, 16)), ((9000, 7), (7,))])
@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
def test_forward_and_backward_against_float64(dtype, tol, shape, norm, affine, threads):
    x = (rng.standard_normal(shape) * 2 + 1).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal(norm).astype(dtype) if affine in ("both", "weight") else None
    b = rng.standard_normal(norm).astype(dtype) if affine in ("both", "bias") else None
    assert c_layer_norm.applies(x, (g,), int(np.prod(norm)), w, b, written=np.empty_like(x))
    y, gx, gw, gb = _float64(x, w, b, g, norm)
    out = np.empty_like(x)
    COMPOSITES["layer_norm"](out, x, w, b, normalized_shape=norm, eps=1e-5)
    np.testing.assert_allclose(out, y, rtol=tol, atol=tol)
    outs = [np.empty_like(x), np.empty(norm, dtype), np.empty(norm, dtype)]
    layer_norm_backward(*outs, g, x, w, normalized_shape=norm, eps=1e-5,
                        output_mask=(True, True, True))
    rows = x.size // int(np.prod(norm))
    np.testing.assert_allclose(outs[0], gx, rtol=tol, atol=tol * 10)
    np.testing.assert_allclose(outs[1], gw, rtol=tol, atol=tol * np.sqrt(rows) * 10)
    np.testing.assert_allclose(outs[2], gb, rtol=tol, atol=tol * np.sqrt(rows) * 10)


@pytest.mark.parametrize("mask", [(True, False, False), (False, True, False), (False, False, True),
                                  (False, True, True), (True, False, True)])
def test_each_output_mask_gives_the_same_values(mask, threads):
    x = rng.standard_normal((64, 256)).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    w = rng.standard_normal(256).astype(np.float32)
    full = [np.empty_like(x), np.empty(256, np.float32), np.empty(256, np.float32)]
    layer_norm_backward(*full, g, x, w, normalized_shape=(256,), eps=1e-5,
                        output_mask=(True, True, True))
    outs = [a.copy() * np.nan for a, m in zip(full, mask) if m]
    layer_norm_backward(*outs, g, x, w, normalized_shape=(256,), eps=1e-5, output_mask=mask)
    for got, want in zip(outs, [a for a, m in zip(full, mask) if m]):
        np.testing.assert_array_equal(got, want)


def test_matches_pytorch_through_the_frontend(threads):
    torch = pytest.importorskip("torch")
    x = (rng.standard_normal((32, 64, 64)) + 2).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    w = rng.standard_normal(64).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    grads = []
    for lib in (dt, torch):
        xs, ws, bs = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        y = lib.nn.functional.layer_norm(xs, (64,), ws, bs, 1e-5)
        y.backward(lib.tensor(g))
        grads.append([y.detach().numpy(), xs.grad.numpy(), ws.grad.numpy(), bs.grad.numpy()])
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=2e-4)


def test_applies_only_to_contiguous_large_floats():
    x = np.zeros((64, 128), np.float32)
    assert c_layer_norm.applies(x, (x,), 128, None, None)
    assert not c_layer_norm.applies(x.T, (x,), 64, None, None)
    assert not c_layer_norm.applies(x, (x.T,), 128, None, None)
    assert not c_layer_norm.applies(x, (), 128, None, None, written=np.empty((128, 64), np.float32).T)
    assert not c_layer_norm.applies(x.astype(np.float16), (), 128, None, None)
    assert not c_layer_norm.applies(x, (x.astype(np.float64),), 128, None, None)
    assert not c_layer_norm.applies(x[:8, :8].copy(), (), 8, None, None)
    assert not c_layer_norm.applies(x, (), 128, np.ones(128, np.float64), None)


def test_overlapping_outputs_take_the_numpy_kernels():
    x = rng.standard_normal((64, 128)).astype(np.float32)
    assert not c_layer_norm.applies(x, (), 128, None, None, written=x)
    g = rng.standard_normal((64, 128)).astype(np.float32)
    assert not c_layer_norm.applies(x, (g,), 128, None, None, written=g)
    assert c_layer_norm.applies(x, (g,), 128, None, None, written=np.empty_like(x))
    want = np.empty_like(x)
    COMPOSITES["layer_norm"](want, x, None, None, normalized_shape=(128,), eps=1e-5)
    y = x.copy()
    COMPOSITES["layer_norm"](y, y, None, None, normalized_shape=(128,), eps=1e-5)   # in place
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
