"""Gradients at special values (inf / NaN / -0.0 incoming gradients, zeros, ignored targets)
that tools/special_values.py found differing from PyTorch 2.13; each expected value is
PyTorch's (checked), each test fails with the rule it replaced."""
import math

import numpy as np
import pytest

import dispatchtorch as torch
import dispatchtorch.nn.functional as F

inf, nan = math.inf, math.nan


def _dev(dev):
    if dev == "opencl" and not torch.opencl.is_available():
        pytest.skip("no OpenCL device")
    return dev


def _same_bits(got, want):
    """Equal values, NaN at the same places, and the same sign on every zero."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    np.testing.assert_array_equal(got, want)
    assert (np.signbit(got) == np.signbit(want))[want == 0].all(), (got, want)


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
def test_cross_entropy_of_a_batch_all_ignored_gives_zero_gradients(dev, label_smoothing):
    # PyTorch's nll_loss_backward writes nothing at an ignored target (the loss is 0/0 =
    # NaN, the gradient +0.0); w * g / w.sum() gave NaN everywhere
    x = torch.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], device=_dev(dev), requires_grad=True)
    t = torch.tensor([2, 2], device=dev)
    loss = F.cross_entropy(x, t, ignore_index=2, label_smoothing=label_smoothing)
    assert math.isnan(loss.item())
    loss.backward()
    _same_bits(x.grad.cpu().numpy(), np.zeros((2, 3)))


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
def test_nll_loss_ignored_target_takes_no_part_of_an_infinite_gradient(dev):
    x = torch.tensor([[-1.0, -2.0], [-0.5, -3.0]], device=_dev(dev), requires_grad=True)
    t = torch.tensor([1, 0], device=dev)
    F.nll_loss(x, t, ignore_index=0, reduction="none").backward(
        torch.tensor([2.0, inf], device=dev))
    _same_bits(x.grad.cpu().numpy(), [[0.0, -2.0], [0.0, 0.0]])


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
def test_cumsum_gradient_of_an_infinite_incoming_gradient_is_a_reversed_cumsum(dev):
    # PyTorch: flip, cumsum, flip; total - prefix + g gave inf - inf = NaN
    x = torch.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], device=_dev(dev), requires_grad=True)
    torch.cumsum(x, 1).backward(torch.tensor([[inf, 1.0, 1.0], [1.0, -inf, 2.0]], device=dev))
    _same_bits(x.grad.cpu().numpy(), [[inf, 2.0, 1.0], [-inf, -inf, 2.0]])


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
def test_median_of_all_elements_gives_an_infinite_gradient_to_the_median_only(dev):
    # evenly_distribute_backward is masked_fill on CPU: the others get +0.0, not inf * 0
    x = torch.tensor([1.0, 3.0, 2.0, 5.0], device=_dev(dev), requires_grad=True)
    torch.median(x).backward(torch.tensor(inf, device=dev))
    _same_bits(x.grad.cpu().numpy(), [0.0, 0.0, inf, 0.0])
    y = torch.tensor([2.0, 1.0, 2.0], device=dev, requires_grad=True)
    torch.nanmedian(y).backward(torch.tensor(-1.0, device=dev))
    _same_bits(y.grad.cpu().numpy(), [-0.5, 0.0, -0.5])


def test_binary_cross_entropy_with_logits_gradient_at_zero_is_sigmoid_minus_target():
    # max(-x, 0) + log1p(exp(-|x|)) has a zero gradient at x = 0; PyTorch's is sigmoid(0) - y
    x = torch.tensor([0.0, 0.0, 1.0], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([0.0, 1.0, 0.0], dtype=torch.float64)
    F.binary_cross_entropy_with_logits(x, y, reduction="sum").backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.5, -0.5, 1 / (1 + math.exp(-1))], rtol=1e-15)
    # an infinite g: (sigmoid(x) - y) g, not g (1 - y) - g sigmoid(-x) = inf - inf
    x = torch.tensor([0.0, 2.0], requires_grad=True)
    F.binary_cross_entropy_with_logits(x, torch.tensor([0.0, 1.0]), reduction="none").backward(
        torch.tensor([inf, -inf]))
    _same_bits(x.grad.numpy(), [inf, inf])


@pytest.mark.parametrize("roots", ["std, mean", "mean, std"])
def test_backward_from_two_outputs_of_one_node_reaches_the_input(roots):
    # the engine counted the node's edges once per root: x.grad stayed None
    x = torch.tensor([1.0, 3.0, 3.0, 2.0], dtype=torch.float64, requires_grad=True)
    s, m = torch.std_mean(x)
    outs = [s, m] if roots == "std, mean" else [m, s]
    torch.autograd.backward(outs, [torch.tensor(1.0, dtype=torch.float64)] * 2)
    v = np.array([1.0, 3.0, 3.0, 2.0])
    want = (v - v.mean()) / (3 * v.std(ddof=1)) + 1 / 4
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-14)
    y = torch.tensor([[2.0, 0.0], [1.0, 1.0]], requires_grad=True)
    var, mean = torch.var_mean(y, 1)
    g = torch.autograd.grad([var, mean], [y], [torch.ones(2), torch.ones(2)])[0]
    np.testing.assert_allclose(g.numpy(), [[2.5, -1.5], [0.5, 0.5]])


def _grad(dev, fn, xs, gs=None):
    x = torch.tensor(xs, dtype=torch.float64 if dev == "cpu" else torch.float32, device=dev,
                     requires_grad=True)
    y = fn(x)
    y.backward(torch.ones_like(y) if gs is None else torch.tensor(gs, dtype=x.dtype, device=dev))
    return y.detach().cpu().numpy(), x.grad.cpu().numpy()


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
def test_smooth_l1_and_huber_gradients_at_infinite_and_nan_differences(dev):
    # PyTorch's smooth_l1_backward / huber_backward: +-g (+-delta g) beyond the edge, NaN
    # for NaN; differentiating where(d < beta, d*d/2beta, ...) gave 0 * inf = NaN at inf
    t = torch.tensor([inf, -inf, 0.0, 0.0], device=_dev(dev))
    t = t.to(torch.float64) if dev == "cpu" else t
    y, g = _grad(dev, lambda x: F.smooth_l1_loss(x, t, reduction="none"), [0.0, 5.0, nan, 0.5])
    _same_bits(y, [inf, inf, nan, 0.125])
    _same_bits(g, [-1.0, 1.0, nan, 0.5])
    y, g = _grad(dev, lambda x: F.huber_loss(x, t, reduction="none", delta=0.5),
                 [0.0, 5.0, nan, 0.25])
    _same_bits(y, [inf, inf, nan, 0.03125])
    _same_bits(g, [-0.5, 0.5, nan, 0.25])


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
def test_activation_gradients_at_their_special_values(dev):
    _dev(dev)
    e1 = 1 / math.e
    cases = {   # name: (fn, x, incoming g or None, PyTorch's value, PyTorch's gradient)
        "elu": (F.elu, [inf, -inf, 0.0, -1.0], None, [inf, -1.0, 0.0, e1 - 1], [1, 0, 1, e1]),
        "threshold": (lambda x: F.threshold(x, 0.5, -7.0), [nan, 0.5, 1.0], None,
                      [nan, -7.0, 1.0], [1, 0, 1]),
        "hardshrink": (F.hardshrink, [nan, 0.5, -1.0], None, [nan, 0.0, -1.0], [1, 0, 1]),
        "softshrink": (F.softshrink, [nan, 0.5, -1.0], None, [nan, 0.0, -0.5], [1, 0, 1]),
        "logit": (torch.logit, [-1.0, 0.0, -0.0, 1.0, inf, 0.5], None,
                  [nan, -inf, -inf, inf, nan, 0.0], [nan, inf, inf, inf, nan, 4.0]),
        "hardswish": (F.hardswish, [-3.0, 3.0, 0.0, 0.0, -4.0, 1.5], [1, 1, inf, -inf, inf, 1],
                      [-0.0, 3.0, 0.0, 0.0, -0.0, 1.125], [0, 1, inf, -inf, 0, 1]),
        "hardsigmoid": (F.hardsigmoid, [-3.0, 3.0, 0.0, -4.0, 5.0], [1, 1, inf, inf, -inf],
                        [0.0, 1.0, 0.5, 0.0, 1.0], [0, 0, inf, 0, 0]),
    }
    for name, (fn, x, gs, want_y, want_g) in cases.items():
        y, g = _grad(dev, fn, x, gs)
        np.testing.assert_allclose(y, want_y, rtol=1e-6, err_msg=name)
        np.testing.assert_allclose(g, want_g, rtol=1e-6, err_msg=name)
        assert (np.isnan(g) == np.isnan(want_g)).all() and (np.isinf(g) == np.isinf(want_g)).all(), name
        _same_bits(g[np.asarray(want_g) == 0], np.zeros(int((np.asarray(want_g) == 0).sum())))


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
def test_binary_cross_entropy_gradients_at_saturated_probabilities(dev):
    # PyTorch's binary_cross_entropy_backward, g (x - y) / max(x (1 - x), 1e-12f), is 0 at
    # x = y = 1 (a saturated sigmoid); differentiating the clamped logs gave -1/n there.
    # Its target gradient is -logit(x) g: infinite at x = 0 and 1
    x = torch.tensor([1.0, 0.0, 0.3], device=_dev(dev), requires_grad=True)
    y = torch.tensor([1.0, 0.0, 1.0], device=dev, requires_grad=True)
    F.binary_cross_entropy(x, y).backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), [0.0, 0.0, -0.7 / 0.21 / 3], rtol=1e-6)
    np.testing.assert_allclose(y.grad.cpu().numpy(), [-inf, inf, math.log(7 / 3) / 3],
                               rtol=1e-6)


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
def test_binary_op_gradients_at_special_values(dev):
    # PyTorch 2.13's values: atan2's gradient is (+-0, -+0) where a^2 + b^2 is 0 (not
    # 0 * inf); logaddexp's g / (1 + exp(b - a)) is g at (inf, 0) (g * exp(a - result)
    # gave inf - inf); xlogy's self gradient is xlogy(g, b): 0 for g = 0 at b = inf;
    # copysign's is g * (result / a masked to 0): NaN for an inf g at a = 0, and the sign
    # source gets zeros, not None
    _dev(dev)
    tiny = 1e-200 if dev == "cpu" else 1e-30      # tiny ** 2 underflows to 0
    cases = {   # name: (fn, a, b, g, PyTorch's (value, d/da, d/db))
        "atan2": (torch.atan2, [0.0, -0.0, tiny, 1.0], [0.0, -0.0, 0.0, 1.0],
                  [-1.0, 1.0, 1.0, 2.0], ([0.0, -math.pi, math.pi / 2, math.pi / 4],
                                          [-0.0, -0.0, 0.0, 1.0], [0.0, 0.0, -0.0, -1.0])),
        "logaddexp": (torch.logaddexp, [inf, 0.0, -inf, 1.0], [0.0, inf, 1.0, 1.0], [1.0] * 4,
                      ([inf, inf, 1.0, 1 + math.log(2)], [1, 0, 0, 0.5], [0, 1, 1, 0.5])),
        "logaddexp2": (torch.logaddexp2, [inf, 0.0, -inf, 1.0], [0.0, inf, 1.0, 1.0],
                       [1.0] * 4, ([inf, inf, 1.0, 2.0], [1, 0, 0, 0.5], [0, 1, 1, 0.5])),
        "xlogy": (torch.xlogy, [0.0, 0.0, 2.0, 1.0], [inf, 0.0, 0.0, math.e],
                  [0.0, 1.0, 1.0, 1.0], ([0.0, 0.0, -inf, 1.0], [0.0, 0.0, -inf, 1.0],
                                         [0.0, nan, inf, 1 / math.e])),
        "copysign": (torch.copysign, [0.0, 0.0, -2.0, 3.0], [1.0, -1.0, 1.0, -0.0],
                     [inf, -1.0, 1.0, 1.0], ([0.0, -0.0, 2.0, -3.0], [nan, -0.0, -1.0, -1.0],
                                             [0.0] * 4)),
    }
    for name, (fn, a, b, gs, want) in cases.items():
        dt = torch.float64 if dev == "cpu" else torch.float32
        x, y = (torch.tensor(v, dtype=dt, device=dev, requires_grad=True) for v in (a, b))
        out = fn(x, y)
        out.backward(torch.tensor(gs, dtype=dt, device=dev))
        for got, w, what in zip((out.detach(), x.grad, y.grad), want, ("value", "d/da", "d/db")):
            got = got.cpu().numpy()
            np.testing.assert_allclose(got, w, rtol=1e-6, err_msg=f"{name} {what}")
            w = np.asarray(w, dtype=np.float64)
            assert (np.signbit(got) == np.signbit(w))[w == 0].all(), f"{name} {what} {got}"


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
def test_pow_exponent_gradient_of_a_zero_or_negative_number_base(dev):
    # PyTorch's pow_backward_exponent: base 0 gives 0 for exponents >= 0 and
    # result * log(0) = -inf below (result * 0 gave NaN); a negative base's log is NaN
    # (result * 0 gave 0)
    x = torch.tensor([-1.0, 2.0, -inf, 0.0], device=_dev(dev), requires_grad=True)
    torch.pow(0.0, x).backward(torch.ones(4, device=dev))
    _same_bits(x.grad.cpu().numpy(), [-inf, 0.0, -inf, 0.0])
    y = torch.tensor([2.0, 0.5], device=dev, requires_grad=True)
    torch.pow(-2.0, y).backward(torch.ones(2, device=dev))
    assert np.isnan(y.grad.cpu().numpy()).all()


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
def test_reciprocal_and_rsqrt_gradients_square_the_result_first(dev):
    # PyTorch: -g * (result * result), -0.5 g * result^3: a zero g at an overflowing
    # square is 0 * inf = NaN, as PyTorch's (-g * result * result gave -0.0)
    tiny = 1e-300 if dev == "cpu" else 1e-30
    dt = torch.float64 if dev == "cpu" else torch.float32
    for fn in (torch.reciprocal, torch.rsqrt):
        x = torch.tensor([tiny, 2.0], dtype=dt, device=_dev(dev), requires_grad=True)
        fn(x).backward(torch.tensor([0.0, 1.0], dtype=dt, device=dev))
        got = x.grad.cpu().numpy()
        assert np.isnan(got[0]), fn
        np.testing.assert_allclose(got[1], -0.25 if fn is torch.reciprocal else -0.5 * 2 ** -1.5,
                                   rtol=1e-6)


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
@pytest.mark.parametrize("create_graph", [False, True])   # the kernel row / the decomposition
@pytest.mark.parametrize("x, kernel, stride, padding, want", [
    # a window with NaN: its last NaN takes g (the decomposition gave nobody g)
    ([1.0, nan, nan, 2.0], 2, 2, 0, [0, 0, 1, 0]),
    ([1.0, nan, nan, 2.0], 2, 1, 1, [1, 3, 4, 1]),
    # -inf maxima beside -inf padding: the first input element takes g, never the padding
    ([-inf, -inf, 1.0, 2.0], 2, 1, 1, [2, 1, 2, 4]),
    ([-inf, -inf, -inf, -inf], 2, 1, 1, [4, 2, 2, 1])])
def test_max_pool2d_gradient_at_nan_and_minus_inf_windows(dev, create_graph, x, kernel, stride,
                                                          padding, want):
    # PyTorch's CPU kernel: maxindex starts at the window's first input element and moves
    # to val > max or to any NaN (values PyTorch 2.13 gives)
    t = torch.tensor(x, device=_dev(dev)).view(1, 1, 2, 2).requires_grad_()
    y = F.max_pool2d(t, kernel, stride, padding)
    got, = torch.autograd.grad(y, t, torch.ones_like(y), create_graph=create_graph)
    _same_bits(got.detach().cpu().numpy().reshape(-1), want)


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
def test_adaptive_max_pool2d_takes_the_last_nan_of_a_window(dev):
    # PyTorch's kernel moves to every NaN it meets in scan order; the separable max took
    # the first, for the index and the gradient
    t = torch.tensor([[1.0, nan, 3.0], [nan, 2.0, nan], [0.0, 1.0, 2.0]],
                     device=_dev(dev)).view(1, 1, 3, 3)
    for size, index, want in [((1, 1), [5], [0, 0, 0, 0, 0, 1, 0, 0, 0]),
                              ((2, 2), [3, 5, 3, 5], [0, 0, 0, 2, 0, 2, 0, 0, 0])]:
        x = t.clone().requires_grad_()
        y, i = F.adaptive_max_pool2d(x, size, return_indices=True)
        y.sum().backward()
        assert i.cpu().reshape(-1).tolist() == index
        _same_bits(x.grad.cpu().numpy().reshape(-1), want)


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
def test_det_gradient_of_a_matrix_with_nan_is_nan_not_an_error(dev):
    # PyTorch gives NaN gradients; the rule's SVD raised "did not converge"
    x = torch.tensor([[[nan, 1.0], [2.0, 3.0]], [[1.0, 2.0], [3.0, 4.0]]], device=_dev(dev),
                     requires_grad=True)
    d = torch.linalg.det(x)
    d.sum().backward()
    got = x.grad.cpu().numpy()
    assert np.isnan(got[0]).all()
    np.testing.assert_allclose(got[1], [[4.0, -3.0], [-2.0, 1.0]], rtol=1e-5)


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
def test_div_trunc_gradient_is_zero_even_dividing_by_zero(dev):
    # derivatives.yaml: div with a rounding mode has a zero gradient; through trunc and
    # div it was 0 / b = NaN at b = 0
    a = torch.tensor([1.0, -7.0, 0.0], device=_dev(dev), requires_grad=True)
    b = torch.tensor([0.0, 2.0, 0.0], device=dev, requires_grad=True)
    r = torch.div(a, b, rounding_mode="trunc")
    assert r.requires_grad
    _same_bits(r.detach().cpu().numpy(), [inf, -3.0, nan])
    r.backward(torch.tensor([1.0, inf, -1.0], device=dev))
    _same_bits(a.grad.cpu().numpy(), [0.0, 0.0, 0.0])
    _same_bits(b.grad.cpu().numpy(), [0.0, 0.0, 0.0])


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
def test_lgamma_of_minus_infinity_is_plus_infinity(dev):
    # C's lgamma and PyTorch: +inf (scipy's gammaln gives -inf)
    x = torch.tensor([-inf, 0.0, -2.0, 0.5], device=_dev(dev))
    got = torch.lgamma(x).cpu().numpy()
    np.testing.assert_allclose(got, [inf, inf, inf, math.lgamma(0.5)], rtol=1e-6)


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
def test_nansum_gradient_multiplies_by_not_nan(dev):
    # PyTorch's nansum_backward is g * ~isnan(x): NaN for an inf g at a NaN, -0.0 for a
    # negative g (the decomposition's where gave +0.0)
    for g, want in [(inf, [nan, inf]), (-1.0, [-0.0, -1.0])]:
        x = torch.tensor([nan, 1.0], device=_dev(dev), requires_grad=True)
        torch.nansum(x).backward(torch.tensor(g, device=dev))
        _same_bits(x.grad.cpu().numpy(), want)
    x = torch.tensor([nan, 2.0, 4.0], device=dev, requires_grad=True)
    torch.nanmean(x).backward(torch.tensor(-1.0, device=dev))
    _same_bits(x.grad.cpu().numpy(), [-0.0, -0.5, -0.5])


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
def test_vector_norm_gradients_at_nan_and_zero(dev):
    # PyTorch's norm_backward: for p = inf the maxima and the NaNs share g, times sgn(x)
    # (0 at NaN; the old mask missed the NaN and gave NaN everywhere); for p = 2,
    # g * (x / norm masked to 0): an inf g at a zero vector is NaN, a finite one 0
    x = torch.tensor([nan, 1.0, -3.0, 3.0], device=_dev(dev), requires_grad=True)
    torch.linalg.vector_norm(x, inf).backward()
    _same_bits(x.grad.cpu().numpy(), [0.0, 0.0, -0.0, 0.0])
    x = torch.tensor([1.0, -3.0, 3.0], device=dev, requires_grad=True)
    torch.linalg.vector_norm(x, inf).backward()
    _same_bits(x.grad.cpu().numpy(), [0.0, -0.5, 0.5])
    for g, want in [(inf, [nan, nan]), (1.0, [0.0, 0.0])]:
        x = torch.tensor([0.0, -0.0], device=dev, requires_grad=True)
        torch.linalg.vector_norm(x).backward(torch.tensor(g, device=dev))
        _same_bits(x.grad.cpu().numpy(), want)


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
def test_kl_div_target_gradient_and_mish_gradient_at_special_values(dev):
    # kl_div is PyTorch's xlogy(t, t) - t x: the target's gradient at t = 0 is NaN (the
    # where(t == 0, 1, t).log() form gave 0); mish's backward is PyTorch's mish_backward:
    # an inf g at x = 0 gives inf (the product rule gave inf * 0 = NaN)
    x = torch.tensor([0.0, -1.0], device=_dev(dev), requires_grad=True)
    t = torch.tensor([0.0, 0.5], device=dev, requires_grad=True)
    loss = F.kl_div(x, t, reduction="none")
    loss.backward(torch.ones(2, device=dev))
    np.testing.assert_allclose(loss.detach().cpu().numpy(), [0.0, 0.5 * math.log(0.5) + 0.5],
                               rtol=1e-6)
    _same_bits(x.grad.cpu().numpy(), [-0.0, -0.5])
    np.testing.assert_allclose(t.grad.cpu().numpy(), [nan, math.log(0.5) + 2], rtol=1e-6)
    m = torch.tensor([0.0, 1.0], device=dev, requires_grad=True)
    F.mish(m).backward(torch.tensor([inf, 1.0], device=dev))
    np.testing.assert_allclose(m.grad.cpu().numpy(), [inf, 1.0490362200997922], rtol=1e-6)


def test_mvlgamma_below_its_old_domain_check_gives_lgamma_values():
    # PyTorch 2.13 has no "(p-1)/2" check (it was also a host read): lgamma's values, inf
    # at the poles; the gradient at -0.0 is digamma(+0.0) = -inf (offsets start at +0.0)
    x = torch.tensor([0.3, 0.5, -2.25], dtype=torch.float64)
    np.testing.assert_allclose(torch.mvlgamma(x, 2).numpy(),
                               [3.4296605285767137, inf, 1.1323543854813034], rtol=1e-12)
    z = torch.tensor([-0.0, 0.0], dtype=torch.float64, requires_grad=True)
    torch.mvlgamma(z, 1).backward(torch.ones(2, dtype=torch.float64))
    _same_bits(z.grad.numpy(), [-inf, -inf])


def test_prelu_weight_gradient_at_an_infinite_input_is_zero():
    # PyTorch's prelu backward: weight where(x > 0, 0, x * g), x g * slope; the where
    # decomposition gave the weight 0 * inf = NaN at x = inf, and +0.0 for x's -0.0
    x = torch.tensor([inf, 0.0, -2.0, 3.0], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([0.25], dtype=torch.float64, requires_grad=True)
    F.prelu(x, w).backward(torch.tensor([1.0, -1.0, 2.0, -0.0], dtype=torch.float64))
    _same_bits(x.grad.numpy(), [1.0, -0.25, 0.5, -0.0])
    _same_bits(w.grad.numpy(), [-4.0])


def test_renorm_passes_the_gradient_of_a_slice_within_maxnorm_or_with_nan():
    # PyTorch's renorm_backward: g where norm <= maxnorm or NaN; 0 * d norm gave NaN
    x = torch.tensor([[nan, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0]], dtype=torch.float64,
                     requires_grad=True)
    torch.renorm(x, 2, 0, 1.0).backward(
        torch.tensor([[1.0, 2.0, -1.0, 0.5], [1.0, 1.0, 1.0, 1.0]], dtype=torch.float64))
    _same_bits(x.grad.numpy()[0], [1.0, 2.0, -1.0, 0.5])
    np.testing.assert_allclose(x.grad.numpy()[1], [0.12171612277892581, 0.06085806305612953,
                                                   3.333333251012681e-09, -0.060858056389463025],
                               rtol=1e-7)


def test_cumprod_gradient_at_a_zero_after_an_infinity():
    # the first zero's gradient sums g_i * (the product without it) over i >= zero:
    # multiplying by the mask (seen >= 1) made the inf before it 0 * inf = NaN
    x = torch.tensor([[inf, 0.0, 1.0, 2.0]], dtype=torch.float64, requires_grad=True)
    torch.cumprod(x, 1).backward(torch.tensor([[1.0, -1.0, 2.5, 1.0]], dtype=torch.float64))
    _same_bits(x.grad.numpy(), [[nan, inf, 0.0, 0.0]])
