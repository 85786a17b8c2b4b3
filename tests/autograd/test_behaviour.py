"""The autograd behaviours PyTorch users rely on, each against a hand-computed value."""
import gc
import weakref

import numpy as np
import pytest

import dispatchtorch as torch
from dispatchtorch.autograd import Function, grad


def test_leaf_accumulation_and_metadata():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    assert x.is_leaf and x.grad_fn is None and x.requires_grad
    y = x * x
    assert not y.is_leaf and y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]
    (x * 3).sum().backward()            # accumulates
    assert x.grad.tolist() == [5.0, 7.0]
    assert y.grad is None


def test_retain_grad_and_hooks():
    x = torch.tensor([1.0, -1.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()))
    h = x.register_hook(lambda g: g * 10)
    (y * y).sum().backward()
    assert y.grad.tolist() == [4.0, -4.0]
    assert seen == [[4.0, -4.0]]
    assert x.grad.tolist() == [80.0, -80.0]     # d/dx 4x^2 = 8x, times 10 by the hook
    h.remove()
    x.grad = None
    (x * 1).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_detach_and_detach_():
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None
    d[0] = 5.0                          # shares memory
    assert y[0].item() == 5.0
    z = x * 3
    z.detach_()
    assert z.is_leaf and not z.requires_grad


def test_backward_twice_needs_retain_graph():
    x = torch.tensor([2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [8.0]
    z = (x.exp() * x).sum()
    z.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        z.backward()


def test_backward_with_gradient_argument_and_errors():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    y.backward(torch.tensor([1.0, 0.1, 0.01]))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 0.4, 0.06], rtol=1e-6)
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="does not require grad"):
        torch.ones(2).sum().backward()


def test_autograd_grad_and_higher_order():
    x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    y = (x ** 3).sum()
    g, = grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * np.array([0.5, 1.5]) ** 2)
    gg, = grad(g.sum(), x, create_graph=True)
    np.testing.assert_allclose(gg.detach().numpy(), 6 * np.array([0.5, 1.5]))
    ggg, = grad(gg.sum(), x)
    np.testing.assert_allclose(ggg.numpy(), [6.0, 6.0])
    assert x.grad is None
    w = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="appears to not have been used"):
        grad((x * 2).sum(), [x, w])
    gx, gw = grad((x * 2).sum(), [x, w], allow_unused=True)
    assert gw is None and gx.tolist() == [2.0, 2.0]
    gx, gw = grad((x * 2).sum(), [x, w], materialize_grads=True)
    assert gw.tolist() == [0.0, 0.0]


def test_grad_mode_switches():
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        assert not torch.is_grad_enabled()
        assert not (x * 2).requires_grad
        with torch.enable_grad():
            assert (x * 2).requires_grad
    assert torch.is_grad_enabled()

    @torch.no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad
    with torch.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    torch.set_grad_enabled(False)
    assert not torch.is_grad_enabled()
    torch.set_grad_enabled(True)
    with torch.inference_mode():
        assert not (x * 2).requires_grad and torch.is_inference_mode_enabled()
    with torch.inference_mode(False):
        assert (x * 2).requires_grad

    @torch.enable_grad()
    def g(t):
        return t * 2

    with torch.no_grad():
        assert g(x).requires_grad


def test_custom_function():
    class Cube(Function):
        @staticmethod
        def forward(ctx, a, scale):
            ctx.save_for_backward(a)
            ctx.scale = scale
            return a ** 3 * scale

        @staticmethod
        def backward(ctx, g):
            a, = ctx.saved_tensors
            assert ctx.needs_input_grad == (True, False)
            return 3 * a * a * ctx.scale * g, None

    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    y = Cube.apply(x, 2.0)
    assert y.grad_fn is not None
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 24.0]
    assert torch.autograd.gradcheck(lambda a: Cube.apply(a, 2.0), (x,))


def test_integer_outputs_never_require_grad():
    x = torch.tensor([1.5, -2.0], requires_grad=True)
    assert not x.argmax().requires_grad
    assert not (x > 0).requires_grad
    assert not x.to(torch.int64).requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        torch.tensor([1, 2]).requires_grad_()


def test_inplace_on_leaf_requiring_grad_raises():
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        x[0].mul_(2)
    assert x.tolist() == [1.0, 1.0]
    with torch.no_grad():
        x.add_(1)                       # allowed without recording
    assert x.tolist() == [2.0, 2.0]


def test_saved_tensor_modified_inplace_raises():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    z = y.exp()                         # saves its result
    z.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    a = x * 1
    b = a.sin()                         # saves its input
    a.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        b.sum().backward()


def test_inplace_on_non_leaf_is_differentiable():
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    y = x * 2
    y.mul_(x)                           # y = 2x^2
    y.add_(x)                           # y = 2x^2 + x
    y.sum().backward()
    assert x.grad.tolist() == [5.0, 9.0, 13.0]
    z = x * 2
    z.mul_(z)                           # z is saved as the other operand: PyTorch refuses too
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_inplace_through_view_rebases_the_base():
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64, requires_grad=True)
    y = x * 1
    v = y[1:3]
    v.mul_(x[1:3])                      # y = [x0, x1^2, x2^2, x3]
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 4.0, 6.0, 1.0]
    x.grad = None
    buf = torch.zeros(4, dtype=torch.float64)
    buf[1:3] = x[:2] * 5                # a buffer that did not require grad joins the graph
    (buf * buf).sum().backward()
    assert x.grad.tolist() == [50.0, 100.0, 0.0, 0.0]


def test_long_chain_has_no_recursion_limit():
    x = torch.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]


def test_graph_and_saved_tensors_are_freed():
    w = torch.randn(8, 8, requires_grad=True)
    refs = []
    for step in range(10_000):
        x = torch.randn(4, 8)
        h = (x @ w).tanh()
        loss = (h * h).sum()
        if step % 1000 == 0:
            refs.append(weakref.ref(h))
            refs.append(weakref.ref(loss.grad_fn))
        loss.backward()
        w.grad = None
    del x, h, loss
    gc.collect()
    assert all(r() is None for r in refs[:-2])


def test_no_graph_recorded_without_grad():
    x = torch.ones(3)
    y = (x * 2).exp().sum()
    assert y.grad_fn is None and not y.requires_grad


def test_backward_inputs_argument():
    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2, requires_grad=True)
    (a * b * 3).sum().backward(inputs=[a])
    assert a.grad.tolist() == [3.0, 3.0] and b.grad is None


def test_shared_gradient_tensors_are_not_aliased():
    x = torch.ones(2, requires_grad=True)
    y = torch.ones(2, requires_grad=True)
    (x + y).sum().backward()
    x.grad.add_(1)
    assert y.grad.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
def test_relu_gradient_is_thresholds_backward_whatever_the_incoming_gradient(dev):
    # PyTorch's relu backward is threshold_backward(g, result, 0): 0 where result <= 0
    # (even for an inf or NaN g), g elsewhere (a NaN result passes g)
    if dev == "opencl" and not torch.opencl.is_available():
        pytest.skip("no OpenCL device")
    x = torch.tensor([-1.0, 0.0, 2.0, float("nan"), -3.0, 4.0], device=dev, requires_grad=True)
    g = torch.tensor([float("inf"), float("nan"), -1.5, 2.0, -0.5, float("-inf")], device=dev)
    torch.relu(x).backward(g)
    got = x.grad.cpu().numpy()
    np.testing.assert_array_equal(got, [0.0, 0.0, -1.5, 2.0, 0.0, -np.inf])
    assert not np.signbit(got[[0, 1, 4]]).any()           # +0.0, not g * 0's -0.0


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
def test_clamp_gradients_pass_g_where_their_mask_is_on_and_zero_elsewhere(dev):
    # PyTorch's clamp_backward(_min_max) is where(mask, g, 0): an inf/NaN g under an
    # off mask gives +0.0 (g * mask would give NaN, or -0.0 for a negative g)
    if dev == "opencl" and not torch.opencl.is_available():
        pytest.skip("no OpenCL device")
    inf, nan = float("inf"), float("nan")
    x = [-2.0, 0.5, 3.0, nan, -0.5, 1.0]
    g = torch.tensor([inf, -1.5, nan, 2.0, -0.5, -inf], device=dev)
    xt, lo, hi = (torch.tensor(v, device=dev, requires_grad=True) for v in
                  (x, [-1.0, -1.0, -1.0, -1.0, 0.0, 2.0], [1.0, 1.0, 1.0, 1.0, 1.0, 0.5]))
    torch.clamp(xt, lo, hi).backward(g)          # last element: min > max, the result is max
    xs = torch.tensor(x, device=dev, requires_grad=True)
    torch.clamp(xs, -1.0, 1.0).backward(g)
    want = {"x": [0, -1.5, 0, 0, 0, 0], "min": [inf, 0, 0, 0, -0.5, 0],
            "max": [0, 0, nan, 0, 0, -inf], "x, number bounds": [0, -1.5, 0, 0, -0.5, -inf]}
    for (name, w), t in zip(want.items(), (xt, lo, hi, xs)):
        got = t.grad.cpu().numpy()
        np.testing.assert_array_equal(got, w, err_msg=name)
        assert not np.signbit(got[np.asarray(w) == 0]).any(), name


def test_hardtanh_and_relu6_gradients_are_zero_at_their_bounds():
    # PyTorch's hardtanh_backward: 0 where x <= min_val or x >= max_val, g elsewhere (a
    # NaN passes g); clamp's gradient passes g at the bounds, hardtanh's does not
    import dispatchtorch.nn.functional as F
    x = [-2.0, -1.0, 0.0, 0.5, 1.0, 6.0, 7.0, float("nan")]
    cases = {"hardtanh": (F.hardtanh, [0, 0, 1, 1, 0, 0, 0, 1]),
             "relu6": (F.relu6, [0, 0, 0, 1, 1, 0, 0, 1]),
             "ReLU6": (torch.nn.ReLU6(), [0, 0, 0, 1, 1, 0, 0, 1]),
             "hardtanh(-2, 6) in place": (
                 lambda t: F.hardtanh(t * 1, -2.0, 6.0, inplace=True), [0, 1, 1, 1, 1, 0, 0, 1])}
    for name, (fn, want) in cases.items():
        t = torch.tensor(x, requires_grad=True)
        fn(t).sum().backward()
        np.testing.assert_array_equal(t.grad.numpy(), want, err_msg=name)
    np.testing.assert_array_equal(F.relu6(torch.tensor(x)).numpy(),
                                  [0, 0, 0, 0.5, 1, 6, 6, np.nan])


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
@pytest.mark.parametrize("kernel, stride, maxima", [
    (2, 2, [(1, 1), (1, 3), (3, 1), (3, 3)]),          # windows tiling the input
    (3, 1, [(2, 2), (2, 3), (3, 2), (3, 3)])])         # overlapping windows
@pytest.mark.parametrize("create_graph", [False, True])  # the kernel row / the decomposition
def test_max_pool2d_gradient_is_g_at_each_maximum_and_zero_elsewhere(dev, kernel, stride,
                                                                      maxima, create_graph):
    # as PyTorch's: an inf g does not make the window's other elements NaN (g * mask would)
    if dev == "opencl" and not torch.opencl.is_available():
        pytest.skip("no OpenCL device")
    import dispatchtorch.nn.functional as F
    x = torch.arange(16.0, device=dev).view(1, 1, 4, 4).requires_grad_()
    gs = [float("inf"), -1.0, 2.0, float("-inf")]
    g = torch.tensor(gs, device=dev).view(1, 1, 2, 2)
    got, = torch.autograd.grad(F.max_pool2d(x, kernel, stride), x, g, create_graph=create_graph)
    want = np.zeros((4, 4))
    for (i, j), v in zip(maxima, gs):
        want[i, j] = v
    got = got.detach().cpu().numpy()[0, 0]
    np.testing.assert_array_equal(got, want)
    assert not np.signbit(got[want == 0]).any()
