"""Signs of zeros (and the inf/NaN cases beside them) against PyTorch, forward and
backward, for the rules and kernels tools/special_values.py found giving the other
zero: where-compositions that added the unused branch's +0.0 to a -0.0 g (leaky_relu,
the elu family, glu, the mse / smooth_l1 / huber target), numpy's tie order in the CPU
kernels (amax / amin along a dim, max_pool, relu, clamp at a number, fmax / fmin) and
scans and sums seeded with the first element (cumsum, avg_pool of -0.0), softshrink's
nested where. PyTorch is the answer: these
compare with it live, bit for bit on zeros (np.signbit) and NaN positions."""
import math

import numpy as np
import pytest

import dispatchtorch as dt

T = pytest.importorskip("torch")

inf, nan = math.inf, math.nan
VALUES = [0.0, -0.0, 1.0, -1.0, 0.5, -3.0, 2.0, inf, -inf, 1e-300]
GRADS = [1.0, -1.0, -0.0, 0.0, 2.5, inf, -inf, nan]
DEVS = ["cpu", "opencl"]


def _dev(dev):
    if dev == "opencl" and not dt.opencl.is_available():
        pytest.skip("no OpenCL device")
    return dev


def _check(got, want, dtype):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-12 if dtype == "float64" else 2e-6, atol=0)
    zero = want == 0
    np.testing.assert_array_equal(np.signbit(got)[zero], np.signbit(want)[zero])


def _compare(fn, inputs, dev, dtype="float64", grads=GRADS, grad_of=None, forward=True):
    """fn(lib, *tensors) on both libraries: every output, then each input's gradient for
    each incoming gradient (the same g everywhere)."""
    dev = _dev(dev)
    grad_of = range(len(inputs)) if grad_of is None else grad_of
    for g in ([None] if forward else []) + list(grads):
        res = []
        for lib, kw in ((T, {}), (dt, {"device": dev})):
            xs = [lib.tensor(v, dtype=getattr(lib, dtype), requires_grad=i in grad_of, **kw)
                  for i, v in enumerate(inputs)]
            out = fn(lib, *xs)
            outs = out if isinstance(out, tuple) else (out,)
            if g is None:
                res.append([o.detach().cpu().numpy() for o in outs])
                continue
            ws = [o for o in outs if o.dtype.is_floating_point]
            gs = lib.autograd.grad(ws, [xs[i] for i in grad_of],
                                   [lib.full_like(w, g) for w in ws], allow_unused=True)
            res.append([np.zeros(np.shape(inputs[i])) if x is None else x.cpu().numpy()
                        for i, x in zip(grad_of, gs)])
        for want, got in zip(*res):
            _check(got, want, dtype)


ACTIVATIONS = {
    "leaky_relu": lambda L, x: L.nn.functional.leaky_relu(x),
    "leaky_relu_neg": lambda L, x: L.nn.functional.leaky_relu(x, -0.5),
    "rrelu_eval": lambda L, x: L.nn.functional.rrelu(x, training=False),
    "elu": lambda L, x: L.nn.functional.elu(x),
    "elu_alpha_neg": lambda L, x: L.nn.functional.elu(x, alpha=-2.0),
    "selu": lambda L, x: L.nn.functional.selu(x),
    "celu": lambda L, x: L.nn.functional.celu(x, alpha=0.7),
    "relu": lambda L, x: L.relu(x),
    "relu6": lambda L, x: L.nn.functional.relu6(x),
    "hardtanh_zero": lambda L, x: L.nn.functional.hardtanh(x, -0.0, 0.0),
    "clamp_min": lambda L, x: L.clamp(x, min=0.0),
    "clamp_max": lambda L, x: L.clamp(x, max=0.0),
    "clamp_neg_zero": lambda L, x: L.clamp(x, min=-0.0),
    "logsigmoid": lambda L, x: L.nn.functional.logsigmoid(x),
}


@pytest.mark.parametrize("dev", DEVS)
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_zero_signs(name, dev):
    # (a NaN input is left out: PyTorch's vectorised and scalar elu kernels differ there)
    _compare(ACTIVATIONS[name], [VALUES + [800.0, 40.0]], dev)


@pytest.mark.parametrize("dev", DEVS)
def test_activation_zero_signs_float32(dev):
    for name in ("leaky_relu", "elu", "selu", "relu", "clamp_min"):
        _compare(ACTIVATIONS[name], [[0.0, -0.0, 1.0, -1.0, inf, -inf]], dev, "float32")


@pytest.mark.parametrize("dev", DEVS)
@pytest.mark.parametrize("lambd", [0.5, 0.3])
def test_softshrink_gradient_keeps_negative_zero(lambd, dev):
    # gradients only: inside [-lambd, lambd] PyTorch's vectorised forward gives +0.0, its
    # scalar one x * 0 (ours; tools/special_values.py's `path`)
    _compare(lambda L, x: L.nn.functional.softshrink(x, lambd), [VALUES + [nan, 0.3, -0.3]],
             dev, forward=False)


@pytest.mark.parametrize("n", [1 << 18])
def test_relu_keeps_negative_zero_on_the_chunked_path(n):
    # the CPU kernel cuts large inputs into chunks on its threads: the same rule there
    x = np.tile(np.array([-0.0, 0.0, -1.0, nan], np.float32), n // 4)
    _check(dt.relu(dt.tensor(x)).numpy(), T.relu(T.tensor(x)).numpy(), "float32")


@pytest.mark.parametrize("n", [8, 1 << 16, (3 << 19) + 4])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("threads", [1, 2])
def test_relu_keeps_negative_zero_and_nan_on_the_zeros_array_path(n, dtype, threads):
    # contiguous floats take maximum(zeros, x) against a cached zeros array, in pieces of
    # its length (kernels.py _relu_plain); views keep the scalar form: the same bits
    x = np.tile(np.array([-0.0, 0.0, -1.0, nan, -nan, 2.5, -inf, inf], dtype), n // 8 + 1)[:n]
    old = dt.get_num_threads()
    try:
        dt.set_num_threads(threads)
        _check(dt.relu(dt.tensor(x)).numpy(), T.relu(T.tensor(x)).numpy(), dtype)
        m = x[: (n // 8) * 8].reshape(-1, 8)
        _check(dt.relu(dt.tensor(m).t()).numpy(), T.relu(T.tensor(m).t()).numpy(), dtype)
    finally:
        dt.set_num_threads(old)


@pytest.mark.parametrize("dev", DEVS)
def test_fmax_fmin_keep_the_first_zero(dev):
    a, b = [0.0, -0.0, nan, 1.0], [-0.0, 0.0, -0.0, nan]
    _compare(lambda L, x, y: (L.fmax(x, y), L.fmin(x, y)), [a, b], dev)


ROWS = [[0.0, -0.0, 0.0, -0.0], [-0.0, 0.0, -0.0, 0.0], [1.0, 3.0, 3.0, 2.0],
        [-0.0, -0.0, -0.0, -0.0], [1.0, 0.0, -0.0, 2.0], [-1.0, -0.0, 0.0, -2.0]]
REDUCTIONS = {
    "amax": lambda L, x: x.amax(1), "amin": lambda L, x: x.amin(1),
    "aminmax": lambda L, x: tuple(L.aminmax(x, dim=1)),
    "max_dim": lambda L, x: x.max(1)[0], "max_all": lambda L, x: x[:2].max(),
    "cumsum": lambda L, x: x.cumsum(1),
    "cumulative_trapezoid": lambda L, x: L.cumulative_trapezoid(x, dim=1),
    "glu": lambda L, x: L.nn.functional.glu(x, 1),
    "max_pool1d": lambda L, x: L.nn.functional.max_pool1d(x.unsqueeze(1), 2),
    "max_pool1d_overlap": lambda L, x: L.nn.functional.max_pool1d(x.unsqueeze(1), 2, 1),
    "max_pool2d": lambda L, x: L.nn.functional.max_pool2d(x.reshape(-1, 1, 2, 2), 2),
    "max_pool2d_tiles": lambda L, x: L.nn.functional.max_pool2d(x.reshape(1, 1, 4, 6), 2),
    "max_pool2d_padded": lambda L, x: L.nn.functional.max_pool2d(
        x.reshape(-1, 1, 2, 2), 2, 1, padding=1),
    "avg_pool2d": lambda L, x: L.nn.functional.avg_pool2d(x.reshape(-1, 1, 2, 2), 2),
    "avg_pool1d": lambda L, x: L.nn.functional.avg_pool1d(x.unsqueeze(1), 2),
}


@pytest.mark.parametrize("dev", DEVS)
@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reduction_zero_signs(name, dev):
    _compare(REDUCTIONS[name], [ROWS], dev)


@pytest.mark.parametrize("dev", DEVS)
def test_max_pool2d_tie_keeps_the_row_major_first(dev):
    # zeros at (0, 1) and (1, 0) of each window: the first in row-major order is (0, 1)
    for w in ([-1.0, -0.0, 0.0, -1.0], [-1.0, 0.0, -0.0, -1.0]):
        x = [[w[0], w[1]] * 3, [w[2], w[3]] * 3] * 2
        _compare(lambda L, v: L.nn.functional.max_pool2d(v.reshape(1, 1, 4, 6), 2), [x], dev)
        _compare(lambda L, v: L.nn.functional.max_pool2d(v.reshape(1, 1, 4, 6), 2, 2, 1),
                 [x], dev)


PAIRS = [0.0, -0.0, 1.0, -1.0, 0.5, 3.0, inf, -inf, nan]
A = [a for a in PAIRS for _ in PAIRS]
B = [b for _ in PAIRS for b in PAIRS]
LOSSES = {
    "mse": lambda L, x, t: L.nn.functional.mse_loss(x, t, reduction="none"),
    "mse_mean": lambda L, x, t: L.nn.functional.mse_loss(x, t),
    "smooth_l1": lambda L, x, t: L.nn.functional.smooth_l1_loss(x, t, reduction="none"),
    "smooth_l1_beta": lambda L, x, t: L.nn.functional.smooth_l1_loss(x, t, reduction="sum",
                                                                      beta=0.5),
    "huber": lambda L, x, t: L.nn.functional.huber_loss(x, t, reduction="none"),
    "huber_delta": lambda L, x, t: L.nn.functional.huber_loss(x, t, reduction="none",
                                                               delta=0.5),
}


@pytest.mark.parametrize("dev", DEVS)
@pytest.mark.parametrize("name", list(LOSSES))
def test_loss_target_gradient_is_its_own_difference(name, dev):
    _compare(LOSSES[name], [A, B], dev)


@pytest.mark.parametrize("name", ["elu", "selu", "celu"])
def test_double_backward_matches(name):
    # (not at x = 0: PyTorch's elu double backward gives 0 there, both rules here alpha)
    fn = ACTIVATIONS[name]
    v = [0.7, -0.7, -3.0, 2.0, -1e-3]
    res = []
    for lib in (T, dt):
        x = lib.tensor(v, dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(fn(lib, x).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        res.append((g.detach().numpy(), gg.numpy()))
    for want, got in zip(*res):
        _check(got, want, "float64")


def test_glu_and_loss_double_backward():
    x0 = [[0.3, -0.0, 1.5, -2.0], [0.0, 0.2, -0.1, 0.4]]
    res = []
    for lib in (T, dt):
        x = lib.tensor(x0, dtype=lib.float64, requires_grad=True)
        t = lib.tensor([[0.3, 1.0, -1.0, 0.0], [2.0, 0.2, 0.5, 0.0]], dtype=lib.float64,
                       requires_grad=True)
        y = (lib.nn.functional.glu(x, 1).sum() + lib.nn.functional.mse_loss(x, t)
             + lib.nn.functional.smooth_l1_loss(x, t, beta=0.5))
        gx, gt = lib.autograd.grad(y, (x, t), create_graph=True)
        hx, ht = lib.autograd.grad((gx * gx).sum() + (gt * gt * x).sum(), (x, t))
        res.append([a.detach().numpy() for a in (gx, gt, hx, ht)])
    for want, got in zip(*res):
        _check(got, want, "float64")
