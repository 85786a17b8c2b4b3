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
