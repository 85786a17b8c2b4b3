"""Losses: numpy formulas written here, PyTorch, reductions and argument errors."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close, ours, to_np

import dispatchtorch as dt
import dispatchtorch.nn as nn
import dispatchtorch.nn.functional as F

rng = np.random.default_rng(0)


def r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def np_log_softmax(x, axis=1):
    x = x.astype(np.float64)
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


def test_regression_losses_match_numpy():
    x, y = r(4, 3), r(4, 3)
    d = x.astype(np.float64) - y
    assert_close(nn.MSELoss()(ours(x), ours(y)), (d ** 2).mean(), 1e-5)
    assert_close(nn.L1Loss(reduction="sum")(ours(x), ours(y)), np.abs(d).sum(), 1e-5)
    a = np.abs(d)
    assert_close(nn.SmoothL1Loss(beta=0.5, reduction="none")(ours(x), ours(y)),
                 np.where(a < 0.5, 0.5 * a ** 2 / 0.5, a - 0.25), 1e-5, 1e-6)
    assert_close(nn.HuberLoss(delta=0.7)(ours(x), ours(y)),
                 np.where(a < 0.7, 0.5 * a ** 2, 0.7 * (a - 0.35)).mean(), 1e-5)


def test_cross_entropy_matches_numpy_formula():
    x = r(5, 4)
    t = np.array([0, 3, 1, 1, 2])
    w = np.array([1.0, 0.5, 2.0, 1.5], dtype=np.float32)
    lp = np_log_softmax(x)
    picked = -lp[np.arange(5), t]
    assert_close(F.cross_entropy(ours(x), dt.tensor(t)), picked.mean(), 1e-5)
    assert_close(F.cross_entropy(ours(x), dt.tensor(t), ours(w)),
                 (picked * w[t]).sum() / w[t].sum(), 1e-5)
    keep = t != 1
    assert_close(F.cross_entropy(ours(x), dt.tensor(t), ignore_index=1), picked[keep].mean(), 1e-5)
    eps = 0.1
    smooth = -(lp).sum(1) / 4
    assert_close(F.cross_entropy(ours(x), dt.tensor(t), label_smoothing=eps),
                 ((1 - eps) * picked + eps * smooth).mean(), 1e-5)
    probs = np.abs(r(5, 4))
    probs /= probs.sum(1, keepdims=True)
    assert_close(F.cross_entropy(ours(x), ours(probs)), -(probs * lp).sum(1).mean(), 1e-5)


def test_bce_family_matches_numpy():
    p = 1 / (1 + np.exp(-r(6)))
    t = (rng.random(6) > 0.5).astype(np.float32)
    pd = p.astype(np.float64)
    assert_close(F.binary_cross_entropy(ours(p), ours(t)),
                 -(t * np.log(pd) + (1 - t) * np.log(1 - pd)).mean(), 1e-5)
    z = r(6) * 3
    pw = np.float32(2.5)
    sp = np.log1p(np.exp(-np.abs(z.astype(np.float64)))) + np.maximum(-z, 0)
    assert_close(F.binary_cross_entropy_with_logits(ours(z), ours(t), pos_weight=ours([pw])),
                 ((1 - t) * z + (1 + (pw - 1) * t) * sp).mean(), 1e-5)
    # saturated inputs stay finite: log is clamped at -100 as PyTorch does
    assert_close(F.binary_cross_entropy(ours([0.0, 1.0]), ours([1.0, 0.0]), reduction="none"),
                 [100.0, 100.0])


def test_kl_div_matches_numpy():
    logq = np_log_softmax(r(3, 4))
    p = np.abs(r(3, 4))
    p[0, 1] = 0.0
    expected = np.where(p > 0, p * (np.log(np.where(p > 0, p, 1)) - logq), 0.0)
    assert_close(F.kl_div(ours(logq.astype(np.float32)), ours(p), reduction="batchmean"),
                 expected.sum() / 3, 1e-5)
    assert_close(F.kl_div(ours(logq.astype(np.float32)), ours(np.log(p + 1e-3)),
                          reduction="sum", log_target=True),
                 ((p + 1e-3) * (np.log(p + 1e-3) - logq)).sum(), 1e-5)


LOSSES = [
    ("MSELoss", lambda m: m.MSELoss(), "float"),
    ("L1Loss-sum", lambda m: m.L1Loss(reduction="sum"), "float"),
    ("SmoothL1Loss", lambda m: m.SmoothL1Loss(beta=0.3), "float"),
    ("HuberLoss-none", lambda m: m.HuberLoss(reduction="none", delta=0.4), "float"),
    ("CrossEntropyLoss", lambda m: m.CrossEntropyLoss(), "class"),
    ("CrossEntropyLoss-all", lambda m: m.CrossEntropyLoss(
        weight=m_weight(m), ignore_index=2, label_smoothing=0.15), "class"),
    ("CrossEntropyLoss-none-smooth", lambda m: m.CrossEntropyLoss(
        reduction="none", label_smoothing=0.2, weight=m_weight(m)), "class"),
    ("CrossEntropyLoss-probs", lambda m: m.CrossEntropyLoss(label_smoothing=0.1), "probs"),
    ("CrossEntropyLoss-spatial", lambda m: m.CrossEntropyLoss(), "spatial"),
    ("NLLLoss", lambda m: m.NLLLoss(weight=m_weight(m), ignore_index=0), "logp"),
    ("NLLLoss-sum", lambda m: m.NLLLoss(reduction="sum"), "logp"),
    ("BCELoss", lambda m: m.BCELoss(), "prob"),
    ("BCEWithLogitsLoss", lambda m: m.BCEWithLogitsLoss(pos_weight=m_pos_weight(m)), "binary"),
    ("BCEWithLogitsLoss-weight", lambda m: m.BCEWithLogitsLoss(weight=m_pos_weight(m),
                                                               reduction="sum"), "binary"),
    ("KLDivLoss", lambda m: m.KLDivLoss(reduction="batchmean"), "kl"),
]

_W = np.array([0.3, 1.0, 2.0, 0.7], dtype=np.float32)


def m_weight(m):
    return (dt if m is nn else __import__("torch")).tensor(_W)


def m_pos_weight(m):
    return (dt if m is nn else __import__("torch")).tensor(np.array([1.5, 0.5, 2.0, 1.0],
                                                                    dtype=np.float32))


def _inputs(kind):
    if kind == "float":
        return r(5, 4), r(5, 4)
    if kind == "class":
        return r(6, 4), np.array([0, 2, 3, 1, 2, 0])
    if kind == "spatial":
        return r(2, 4, 3), rng.integers(0, 4, (2, 3))
    if kind == "probs":
        p = np.abs(r(5, 4))
        return r(5, 4), (p / p.sum(1, keepdims=True)).astype(np.float32)
    if kind == "logp":
        return np_log_softmax(r(6, 4)).astype(np.float32), np.array([0, 2, 3, 1, 2, 0])
    if kind == "prob":
        return (1 / (1 + np.exp(-r(5, 4)))).astype(np.float32), rng.random((5, 4)).astype(
            np.float32)
    if kind == "binary":
        return r(5, 4), (rng.random((5, 4)) > 0.5).astype(np.float32)
    if kind == "kl":
        p = np.abs(r(5, 4))
        return np_log_softmax(r(5, 4)).astype(np.float32), (p / p.sum(1, keepdims=True)).astype(
            np.float32)


@pytest.mark.parametrize("name,make,kind", LOSSES, ids=[c[0] for c in LOSSES])
def test_loss_matches_pytorch(torch, name, make, kind):
    x, t = _inputs(kind)
    xo, xt = ours(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    lo, lt = make(nn)(xo, ours(t)), make(torch.nn)(xt, torch.tensor(t))
    assert tuple(lo.shape) == tuple(lt.shape)
    assert_close(lo, lt, 1e-5, 1e-6)
    seed = r(*lt.shape)
    (lo * ours(seed)).sum().backward()
    (lt * torch.tensor(seed)).sum().backward()
    assert_close(xo.grad, xt.grad, 1e-5, 1e-6)


def test_loss_errors_name_the_loss_and_the_problem():
    x = dt.randn(3, 5)
    with pytest.raises(RuntimeError, match="CrossEntropyLoss.*Long.*Int"):
        nn.CrossEntropyLoss()(x, dt.tensor([1, 2, 3], dtype=dt.int32))
    with pytest.raises(IndexError, match="NLLLoss: Target 7 is out of bounds"):
        nn.NLLLoss()(x, dt.tensor([1, 2, 7]))
    with pytest.raises(ValueError, match="CrossEntropyLoss.*target of shape \\[3\\]"):
        nn.CrossEntropyLoss()(x, dt.tensor([[1, 2, 3]]))
    with pytest.raises(ValueError, match="BCELoss.*same size"):
        nn.BCELoss()(dt.rand(3), dt.rand(3, 1))
    with pytest.raises(RuntimeError, match="BCELoss.*between 0 and 1"):
        nn.BCELoss()(dt.tensor([1.5]), dt.tensor([1.0]))
    with pytest.raises(RuntimeError, match="weight tensor should be defined"):
        F.cross_entropy(x, dt.tensor([1, 2, 3]), weight=dt.ones(4))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.cross_entropy(x, dt.tensor([1, 2, 3]), reduction="avg")
    with pytest.warns(UserWarning, match="target size"):
        F.mse_loss(x, dt.randn(3, 1))


def test_ignored_targets_may_hold_any_value():
    x = dt.randn(3, 4)
    loss = F.cross_entropy(x, dt.tensor([1, -100, 3]))
    expected = -np_log_softmax(to_np(x))[[0, 2], [1, 3]].mean()
    assert_close(loss, expected, 1e-5)


def test_legacy_reduction_flags():
    with pytest.warns(UserWarning, match="size_average and reduce"):
        loss = nn.MSELoss(size_average=False)
    assert loss.reduction == "sum"
