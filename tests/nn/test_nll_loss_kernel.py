"""The CPU kernel of the nll_loss row (backends/cpu/dispatchtorch_cpu/composites.py):
the same bits as the row's decomposition (ops/nn_ops/loss.py) and close to float64
numpy, for every reduction, with and without class weights and ignored targets, extra
dims, a 1-D input, half precision and a batch that is all ignored; PyTorch's loss and
gradient through F.nll_loss and F.cross_entropy."""
import numpy as np
import pytest
import torch

import dispatchtorch as dt
from dispatchtorch.ops.nn_ops.loss import NLL_LOSS, _nll_loss

rng = np.random.default_rng(7)


def _want(x, t, w, reduction, ignore):
    x = np.asarray(x, np.float64)
    cdim = 1 if x.ndim > 1 else 0
    valid = t != ignore
    safe = np.where(valid, t, 0)
    ws = np.ones(x.shape[cdim]) if w is None else np.asarray(w, np.float64)
    wt = ws[safe] * valid
    picked = np.take_along_axis(x, np.expand_dims(safe, cdim), cdim).squeeze(cdim) \
        if x.ndim > 1 else x[safe]
    losses = -picked * wt
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    with np.errstate(invalid="ignore"):
        return losses.sum() / wt.sum()


def _both(x, t, w, reduction, ignore):
    args = (dt.tensor(x), dt.tensor(t), None if w is None else dt.tensor(w))
    kw = dict(reduction=reduction, ignore_index=ignore)
    with dt.no_grad():
        got = NLL_LOSS(*args, **kw)
        dec = _nll_loss(*args, reduction, ignore)
    return got, dec


CASES = [((128, 10), (128,)), ((6, 5, 3, 2), (6, 3, 2)), ((7,), ())]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("xshape,tshape", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernel_is_the_decomposition_bit_for_bit(reduction, weighted, xshape, tshape, dtype):
    classes = xshape[1] if len(xshape) > 1 else xshape[0]
    x = rng.standard_normal(xshape).astype(dtype)
    t = rng.integers(0, classes, tshape)
    ignore = int(t.reshape(-1)[0])                  # some targets ignored
    w = rng.random(classes).astype(dtype) + 0.5 if weighted else None
    got, dec = _both(x, t, w, reduction, ignore)
    assert got.dtype == dec.dtype and tuple(got.shape) == tuple(dec.shape)
    np.testing.assert_array_equal(got.numpy(), dec.numpy())
    want = _want(x, t, w, reduction, ignore)
    tol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_all_ignored_and_half_precision(reduction):
    x = rng.standard_normal((5, 4)).astype(np.float32)
    t = np.full(5, 2)
    got, dec = _both(x, t, None, reduction, 2)        # every target ignored: 0 / 0 or 0
    np.testing.assert_array_equal(got.numpy(), dec.numpy())
    assert np.isnan(got.numpy()) if reduction == "mean" else got.item() == 0.0
    for half in (dt.float16, dt.bfloat16):
        xh = dt.tensor(x).to(half)
        th = dt.tensor(rng.integers(0, 4, 5))
        with dt.no_grad():
            got = NLL_LOSS(xh, th, None, reduction=reduction, ignore_index=-100)
            dec = _nll_loss(xh.float(), th, None, reduction, -100).to(half)
        assert got.dtype is half
        np.testing.assert_array_equal(got.float().numpy(), dec.float().numpy())


@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_losses_and_gradients_match_pytorch(label_smoothing):
    x = rng.standard_normal((128, 10)).astype(np.float32)
    t = rng.integers(0, 10, 128)
    t[:5] = 3
    w = (rng.random(10) + 0.5).astype(np.float32)
    for weight in (None, w):
        ours = dt.tensor(x, requires_grad=True)
        ref = torch.tensor(x, requires_grad=True)
        kw = dict(ignore_index=3, label_smoothing=label_smoothing)
        lo = dt.nn.functional.cross_entropy(ours, dt.tensor(t), None if weight is None
                                            else dt.tensor(weight), **kw)
        lr = torch.nn.functional.cross_entropy(ref, torch.tensor(t), None if weight is None
                                               else torch.tensor(weight), **kw)
        lo.backward()
        lr.backward()
        np.testing.assert_allclose(lo.item(), lr.item(), rtol=1e-6)
        np.testing.assert_allclose(ours.grad.numpy(), ref.grad.numpy(), rtol=1e-5, atol=1e-7)
        no = dt.nn.functional.nll_loss(ours.log_softmax(1), dt.tensor(t), reduction="sum")
        nr = torch.nn.functional.nll_loss(ref.log_softmax(1), torch.tensor(t), reduction="sum")
        np.testing.assert_allclose(no.item(), nr.item(), rtol=1e-6)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("xshape,tshape", CASES + [((0, 4), (0,))])
def test_backward_kernel_is_the_decomposition_bit_for_bit(reduction, weighted, xshape, tshape):
    """The nll_loss_backward row (what nll_loss's backward runs without a graph)."""
    from dispatchtorch.ops.nn_ops.loss import NLL_LOSS_BACKWARD, _nll_loss_backward
    classes = xshape[1] if len(xshape) > 1 else xshape[0]
    x = rng.standard_normal(xshape).astype(np.float32)
    t = rng.integers(0, classes, tshape)
    ignore = int(t.reshape(-1)[0]) if t.size else -100
    w = rng.random(classes).astype(np.float32) + 0.5 if weighted else None
    g = rng.standard_normal(tshape if reduction == "none" else ()).astype(np.float32)
    args = (dt.tensor(g), dt.tensor(x), dt.tensor(t), None if w is None else dt.tensor(w))
    with dt.no_grad():
        got = NLL_LOSS_BACKWARD(*args, reduction=reduction, ignore_index=ignore)
        dec = _nll_loss_backward(*args, reduction, ignore)
    assert got.dtype == dec.dtype and tuple(got.shape) == xshape
    np.testing.assert_array_equal(got.numpy(), dec.numpy())
    assert not np.signbit(got.numpy()[got.numpy() == 0]).any()      # +0.0 off the targets


def test_backward_half_precision_and_all_ignored():
    from dispatchtorch.ops.nn_ops.loss import NLL_LOSS_BACKWARD, _nll_loss_backward
    x = rng.standard_normal((5, 4)).astype(np.float32)
    t = dt.tensor(np.full(5, 1))
    g = dt.tensor(np.float32(2.0))
    with dt.no_grad():
        got = NLL_LOSS_BACKWARD(g, dt.tensor(x), t, None, reduction="mean", ignore_index=1)
        assert (got.numpy() == 0).all() and not np.signbit(got.numpy()).any()
        for half in (dt.float16, dt.bfloat16):
            th = dt.tensor(rng.integers(0, 4, 5))
            got = NLL_LOSS_BACKWARD(g.to(half), dt.tensor(x).to(half), th, None,
                                    reduction="mean", ignore_index=-100)
            dec = _nll_loss_backward(g, dt.tensor(x).to(half).float(), th, None, "mean",
                                     -100).to(half)
            assert got.dtype is half
            np.testing.assert_array_equal(got.float().numpy(), dec.float().numpy())


def test_double_backward_keeps_the_differentiable_formula():
    x = rng.standard_normal((6, 5)).astype(np.float64)
    t = rng.integers(0, 5, 6)
    for lib in (dt, torch):
        xs = lib.tensor(x, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(xs * xs, lib.tensor(t))
        (gx,) = lib.autograd.grad(loss, xs, create_graph=True)
        (ggx,) = lib.autograd.grad((gx * gx).sum(), xs)
        if lib is dt:
            ours = ggx.numpy()
        else:
            np.testing.assert_allclose(ours, ggx.numpy(), rtol=1e-10, atol=1e-12)
