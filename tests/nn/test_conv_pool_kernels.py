"""The CPU backend's conv2d / conv2d_backward and max_pool2d / max_pool2d_backward kernels
(backends/cpu/dispatchtorch_cpu/conv_kernels.py, pool_kernels.py): PyTorch in float64
(and finite differences) as the independent answer over strides, padding, dilation,
groups, strided inputs and batch 1; the rows' decompositions (what every other backend
runs) agree; thread counts give the same bits; double backward keeps the graph."""
import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch.ops.nn_ops.conv import CONV2D, CONV2D_BACKWARD, _conv2d, _conv2d_backward
from dispatchtorch.ops.nn_ops.pool import (MAX_POOL2D, MAX_POOL2D_BACKWARD, _max_pool2d,
                                           _max_pool2d_backward)

F = dt.nn.functional
rng = np.random.default_rng(11)

# (x shape, weight shape, conv2d keywords)
CONVS = [
    ((2, 3, 9, 11), (4, 3, 3, 3), {}),
    ((2, 3, 9, 11), (4, 3, 3, 2), dict(stride=2, padding=1)),
    ((2, 3, 9, 11), (2, 3, 2, 3), dict(dilation=2, padding=(0, 2))),
    ((1, 4, 7, 7), (6, 2, 3, 3), dict(groups=2, stride=(2, 3), padding=(2, 1), dilation=(1, 2))),
    ((2, 6, 10, 9), (6, 1, 3, 3), dict(groups=6, padding=1, stride=2)),       # depthwise
    ((3, 2, 5, 6), (3, 2, 1, 1), dict(padding=2)),            # padding past the kernel's reach
    ((3, 2, 5, 6), (3, 2, 1, 1), dict(padding=2, stride=2)),
    ((2, 3, 8, 8), (4, 3, 3, 3), dict(padding=3, stride=3)),
    ((1, 1, 5, 5), (1, 1, 5, 5), {}),
    ((1, 16, 8, 8), (32, 16, 3, 3), dict(padding=1)),         # the digits CNN's layer, batch 1
]


def _conv_grads(lib, x, w, b, g, layout, **kw):
    X = lib.tensor(x)
    if layout == "T":                    # a non-contiguous input: the same values, strided
        X = lib.tensor(np.ascontiguousarray(x.transpose(0, 1, 3, 2))).transpose(2, 3)
    X.requires_grad_()
    W = lib.tensor(w, requires_grad=True)
    B = lib.tensor(b, requires_grad=True)
    y = lib.nn.functional.conv2d(X, W, B, **kw)
    y.backward(lib.tensor(g))
    return [t.detach().numpy() for t in (y, X.grad, W.grad, B.grad)]


@pytest.mark.parametrize("xs,ws,kw,layout", [c + ("C",) for c in CONVS] +
                         [c + ("T",) for c in CONVS[1:4]], ids=[str(i) for i in range(13)])
def test_conv2d_and_its_gradients_match_pytorch(xs, ws, kw, layout):
    torch = pytest.importorskip("torch")
    x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[0])
    shape = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), **kw).shape
    g = rng.standard_normal(tuple(shape))
    ours = _conv_grads(dt, x, w, b, g, layout, **kw)
    theirs = _conv_grads(torch, x, w, b, g, "C", **kw)
    for a, e in zip(ours, theirs):
        np.testing.assert_allclose(a, e, rtol=1e-11, atol=1e-11)


def test_conv2d_gradients_match_finite_differences():
    x, w = rng.standard_normal((2, 2, 5, 6)), rng.standard_normal((3, 2, 3, 2))
    kw = dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2))
    y = F.conv2d(dt.tensor(x), dt.tensor(w), **kw)
    g = rng.standard_normal(tuple(y.shape))
    X, W = dt.tensor(x, requires_grad=True), dt.tensor(w, requires_grad=True)
    F.conv2d(X, W, **kw).backward(dt.tensor(g))

    def loss(xv, wv):
        return float((F.conv2d(dt.tensor(xv), dt.tensor(wv), **kw).numpy() * g).sum())
    eps = 1e-6
    for arr, grad, which in ((x, X.grad.numpy(), 0), (w, W.grad.numpy(), 1)):
        for idx in [tuple(rng.integers(0, n) for n in arr.shape) for _ in range(6)]:
            up, down = arr.copy(), arr.copy()
            up[idx] += eps
            down[idx] -= eps
            args_up = (up, w) if which == 0 else (x, up)
            args_down = (down, w) if which == 0 else (x, down)
            numeric = (loss(*args_up) - loss(*args_down)) / (2 * eps)
            assert abs(numeric - grad[idx]) < 1e-6


@pytest.mark.parametrize("xs,ws,kw", CONVS[:5], ids=[str(i) for i in range(5)])
def test_conv_kernels_agree_with_the_decompositions(xs, ws, kw, threads):
    x = dt.tensor(rng.standard_normal(xs).astype(np.float32))
    w = dt.tensor(rng.standard_normal(ws).astype(np.float32))
    b = dt.tensor(rng.standard_normal(ws[0]).astype(np.float32))
    p = dict(stride=kw.get("stride", 1), padding=kw.get("padding", 0),
             dilation=kw.get("dilation", 1))
    p = {k: v if isinstance(v, tuple) else (v, v) for k, v in p.items()}
    p["groups"] = kw.get("groups", 1)
    with dt.no_grad():
        y = CONV2D(x, w, b, **p)
        np.testing.assert_allclose(y.numpy(), _conv2d(x, w, b, **p).numpy(), rtol=1e-5,
                                   atol=1e-5)
        g = dt.tensor(rng.standard_normal(tuple(y.shape)).astype(np.float32))
        for mask in [(True, True, True), (False, True, False), (True, False, False)]:
            fast = CONV2D_BACKWARD(g, x, w, **p, output_mask=mask)
            fast = fast if isinstance(fast, tuple) else (fast,)
            slow = _conv2d_backward(g, x, w, **p, output_mask=mask)
            assert len(fast) == len(slow) == sum(mask)
            for a, e in zip(fast, slow):
                np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-4, atol=1e-4)


def test_threaded_conv_and_pool_give_the_bits_of_one_thread():
    """Sizes past the kernels' thresholds, so that 2 and 3 threads cut the work."""
    from dispatchtorch_cpu import parallel as P
    x = dt.tensor(rng.standard_normal((64, 16, 8, 8)).astype(np.float32), requires_grad=True)
    w = dt.tensor(rng.standard_normal((32, 16, 3, 3)).astype(np.float32), requires_grad=True)
    b = dt.tensor(rng.standard_normal(32).astype(np.float32), requires_grad=True)
    g = dt.tensor(rng.standard_normal((64, 32, 8, 8)).astype(np.float32))
    big = dt.tensor(np.round(rng.standard_normal((16, 64, 18, 18))).astype(np.float32),
                    requires_grad=True)
    gp = dt.tensor(rng.standard_normal((16, 64, 9, 9)).astype(np.float32))
    results, old = [], P.POOL.threads
    try:
        for n in (1, 2, 3):
            P.POOL.resize(n)
            x.grad = w.grad = b.grad = big.grad = None
            y = F.conv2d(x, w, b, padding=1)
            y.backward(g)
            p = F.max_pool2d(big, 3, 2, 1)
            p.backward(gp)
            results.append([t.detach().numpy() for t in (y, x.grad, w.grad, b.grad, p,
                                                         big.grad)])
    finally:
        P.POOL.resize(old)
    for other in results[1:]:
        for a, e in zip(results[0], other):
            assert np.array_equal(a, e)


def test_float16_conv_rounds_the_float32_result_once():
    x = dt.tensor(rng.standard_normal((2, 3, 6, 6)).astype(np.float32)).half()
    w = dt.tensor(rng.standard_normal((4, 3, 3, 3)).astype(np.float32)).half()
    y = F.conv2d(x, w, padding=1)
    assert y.dtype is dt.float16
    expect = F.conv2d(x.float(), w.float(), padding=1).half()
    np.testing.assert_array_equal(y.numpy(), expect.numpy())


def test_double_backward_through_conv2d_matches_pytorch():
    torch = pytest.importorskip("torch")
    x, w = rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((4, 3, 3, 3))
    out = []
    for lib in (dt, torch):
        X, W = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        y = lib.nn.functional.conv2d(X, W, padding=1, stride=2)
        (gx,) = lib.autograd.grad((y * y).sum(), X, create_graph=True)
        (gx * gx).sum().backward()
        out.append([gx.detach().numpy(), W.grad.numpy()])
    for a, e in zip(*out):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-10)


# -- max_pool2d -------------------------------------------------------------------------------

POOLS = [
    ((64, 32, 8, 8), dict(kernel_size=2)),                      # the digits CNN's pool
    ((2, 3, 8, 9), dict(kernel_size=(2, 3))),                   # windows tiling the input
    ((2, 3, 9, 11), dict(kernel_size=3)),
    ((2, 3, 9, 11), dict(kernel_size=3, stride=2, padding=1)),
    ((2, 3, 9, 11), dict(kernel_size=(2, 3), stride=2, ceil_mode=True)),
    ((2, 3, 9, 11), dict(kernel_size=2, stride=1, dilation=2)),
    ((1, 2, 7, 7), dict(kernel_size=3, stride=3, padding=1, ceil_mode=True)),
    ((1, 2, 8, 8), dict(kernel_size=2, stride=1)),              # overlapping windows
]


def _pool_grads(lib, x, g, **kw):
    X = lib.tensor(x, requires_grad=True)
    y = lib.nn.functional.max_pool2d(X, **kw)
    y.backward(lib.tensor(g))
    return y.detach().numpy(), X.grad.numpy()


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("xs,kw", POOLS, ids=[str(i) for i in range(len(POOLS))])
def test_max_pool2d_and_its_gradient_match_pytorch(xs, kw, ties):
    torch = pytest.importorskip("torch")
    x = rng.standard_normal(xs)
    if ties:
        x = np.round(x)                   # many equal maxima: the first one takes the gradient
    shape = torch.nn.functional.max_pool2d(torch.tensor(x), **kw).shape
    g = rng.standard_normal(tuple(shape))
    for a, e in zip(_pool_grads(dt, x, g, **kw), _pool_grads(torch, x, g, **kw)):
        np.testing.assert_allclose(a, e, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=1, padding=1)])
def test_max_pool2d_nan_windows_as_pytorch(kw):
    """NaN propagates, and its window's gradient goes to the window's last NaN."""
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((1, 2, 6, 6))
    x[0, 0, 0, 1] = x[0, 0, 1, 0] = x[0, 1, 3, 3] = x[0, 1, 5, 4] = np.nan
    shape = torch.nn.functional.max_pool2d(torch.tensor(x), **kw).shape
    g = rng.standard_normal(tuple(shape))
    for a, e in zip(_pool_grads(dt, x, g, **kw), _pool_grads(torch, x, g, **kw)):
        np.testing.assert_allclose(a, e, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("xs,kw", POOLS[1:], ids=[str(i) for i in range(1, len(POOLS))])
def test_pool_kernels_equal_the_decompositions(xs, kw, threads):
    x = dt.tensor(np.round(rng.standard_normal(xs) * 2).astype(np.float32))
    p = dict(kernel_size=kw["kernel_size"], stride=kw.get("stride", kw["kernel_size"]),
             padding=kw.get("padding", 0), dilation=kw.get("dilation", 1))
    p = {k: v if isinstance(v, tuple) else (v, v) for k, v in p.items()}
    p["ceil_mode"] = kw.get("ceil_mode", False)
    with dt.no_grad():
        y = MAX_POOL2D(x, **p)
        assert np.array_equal(y.numpy(), _max_pool2d(x, **p).numpy())
        g = dt.tensor(rng.standard_normal(tuple(y.shape)).astype(np.float32))
        np.testing.assert_allclose(MAX_POOL2D_BACKWARD(g, x, y, **p).numpy(),
                                   _max_pool2d_backward(g, x, y, **p).numpy(), rtol=1e-6,
                                   atol=1e-6)


def test_conv_transpose2d_gradients_and_double_backward_match_pytorch():
    """conv_transpose2d's input gradient is the conv2d row (its CPU kernel without a graph,
    conv2d's rule under create_graph)."""
    torch = pytest.importorskip("torch")
    x, w = rng.standard_normal((2, 4, 4, 5)), rng.standard_normal((4, 3, 3, 2))
    kw = dict(stride=2, padding=1, output_padding=1, groups=1)
    out = []
    for lib in (dt, torch):
        X, W = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        y = lib.nn.functional.conv_transpose2d(X, W, **kw)
        (gx,) = lib.autograd.grad((y * y).sum(), X, create_graph=True)
        (gx * gx).sum().backward()
        X2 = lib.tensor(x, requires_grad=True)
        lib.nn.functional.conv_transpose2d(X2, W.detach(), **kw).pow(2).sum().backward()
        out.append([gx.detach().numpy(), W.grad.numpy(), X2.grad.numpy()])
    for a, e in zip(*out):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-10)
