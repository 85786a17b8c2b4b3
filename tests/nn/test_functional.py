"""nn.functional against numpy formulas, PyTorch, and finite differences (the rows
of ops/nn_ops.py that carry a derivative rule of their own)."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close, ours, to_np

import dispatchtorch as dt
import dispatchtorch.nn.functional as F
from dispatchtorch.autograd import gradcheck, gradgradcheck

rng = np.random.default_rng(0)


def r(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def d(*shape):
    """A float64 leaf for gradcheck."""
    return dt.tensor(r(*shape, dtype=np.float64), requires_grad=True)


def test_softmax_and_log_softmax_match_numpy():
    x = r(3, 5) * 10
    e = np.exp(x - x.max(1, keepdims=True))
    p = e / e.sum(1, keepdims=True)
    assert_close(F.softmax(ours(x), dim=1), p, 1e-5, 1e-7)
    assert_close(F.log_softmax(ours(x), dim=1), np.log(p), 1e-5, 1e-5)
    assert_close(ours(x).softmax(0), np.exp(x) / np.exp(x).sum(0), 1e-5, 1e-7)
    assert_close(F.softmin(ours(x), 1), F.softmax(-ours(x), 1))
    with pytest.warns(UserWarning, match="Implicit dimension"):
        F.softmax(ours(x))


def test_softmax_of_large_values_is_finite():
    y = F.softmax(ours([[1000.0, 1000.0, -1000.0]]), dim=1)
    assert_close(y, [[0.5, 0.5, 0.0]])


ROWS = [
    ("softmax", lambda x: F.softmax(x, 1), [(3, 4)]),
    ("log_softmax", lambda x: F.log_softmax(x, 0), [(3, 4)]),
    ("gelu", lambda x: F.gelu(x), [(5,)]),
    ("gelu-tanh", lambda x: F.gelu(x, approximate="tanh"), [(5,)]),
    ("silu", F.silu, [(5,)]),
    ("linear", lambda x, w, b: F.linear(x, w, b), [(2, 3, 4), (2, 4), (2,)]),
    ("conv2d", lambda x, w, b: F.conv2d(x, w, b, padding=1), [(1, 2, 4, 3), (3, 2, 2, 2), (3,)]),
    ("conv2d-strided-groups", lambda x, w: F.conv2d(x, w, stride=2, groups=2, dilation=(1, 2)),
     [(1, 4, 5, 6), (2, 2, 2, 2)]),
    ("conv_transpose2d", lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1,
                                                            output_padding=1),
     [(1, 2, 3, 2), (2, 3, 3, 2), (3,)]),
    ("conv_transpose2d-flat", lambda x, w: F.conv_transpose2d(x, w, groups=2, padding=1),
     [(1, 2, 3, 3), (2, 2, 3, 3)]),
    ("max_pool2d", lambda x: F.max_pool2d(x, 2, 1, 1), [(1, 2, 3, 4)]),
    ("avg_pool2d", lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
     [(1, 2, 5, 4)]),
    ("unfold", lambda x: F.unfold(x, 2, dilation=1, padding=1, stride=2), [(1, 2, 3, 3)]),
    ("fold", lambda x: F.fold(x, (3, 4), 2, padding=1), [(1, 8, 20)]),
    ("layer_norm", lambda x, w, b: F.layer_norm(x, (3,), w, b), [(2, 3), (3,), (3,)]),
    ("batch_norm", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
     [(4, 2, 3), (2,), (2,)]),
    ("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), [(2, 4, 3), (4,), (4,)]),
    ("rms_norm", lambda x, w: F.rms_norm(x, (3,), w), [(2, 3), (3,)]),
    ("sdpa", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
     [(2, 3, 4), (2, 3, 4), (2, 3, 2)]),
    ("sdpa-float-mask", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, m),
     [(3, 4), (2, 4), (2, 2), (3, 2)]),
    ("bilinear", lambda a, b, w: F.bilinear(a, b, w), [(2, 3), (2, 2), (4, 3, 2)]),
    ("normalize", lambda x: F.normalize(x, dim=1), [(2, 3)]),
    ("interpolate-bilinear", lambda x: F.interpolate(x, size=(3, 5), mode="bilinear"),
     [(1, 1, 2, 3)]),
]


@pytest.mark.parametrize("name,fn,shapes", ROWS, ids=[r_[0] for r_ in ROWS])
def test_gradients_match_finite_differences(name, fn, shapes):
    assert gradcheck(fn, [d(*s) for s in shapes], eps=1e-6, atol=1e-5, rtol=1e-4)


def test_nll_and_cross_entropy_gradients_match_finite_differences():
    target = dt.tensor([1, 0, 2, 1])
    w = dt.tensor([0.5, 2.0, 1.0], dtype=dt.float64)
    assert gradcheck(lambda x: F.nll_loss(x, target, w), [d(4, 3)])
    assert gradcheck(lambda x: F.cross_entropy(x, target, w, label_smoothing=0.2,
                                               ignore_index=0), [d(4, 3)])
    assert gradcheck(lambda x: F.cross_entropy(x, target, reduction="none"), [d(4, 3)])
    idx = dt.tensor([[0, 2], [2, 2]])
    assert gradcheck(lambda w: F.embedding(idx, w), [d(3, 2)])    # (padding_idx: no gradient)


def test_second_derivatives_of_rules():
    assert gradgradcheck(lambda x: F.softmax(x, 1), [d(2, 3)])
    assert gradgradcheck(lambda x, w: F.conv2d(x, w, padding=1), [d(1, 1, 3, 3), d(2, 1, 2, 2)])
    assert gradgradcheck(lambda x: F.layer_norm(x, (3,)), [d(2, 3)])


# -- against PyTorch ---------------------------------------------------------------------------------

def _both(torch, fn_ours, fn_theirs, *arrays, rtol=1e-5, atol=1e-6, grad=True):
    xs = [ours(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    ts = [torch.tensor(a).requires_grad_(grad and a.dtype.kind == "f") for a in arrays]
    y, ty = fn_ours(*xs), fn_theirs(*ts)
    assert tuple(y.shape) == tuple(ty.shape) and y.dtype.name == str(ty.dtype).split(".")[1]
    assert_close(y, ty, rtol, atol)
    if grad and ty.dtype.is_floating_point:
        seed = r(*ty.shape)
        (y * ours(seed)).sum().backward()
        (ty * torch.tensor(seed)).sum().backward()
        for x, t in zip(xs, ts):
            if t.grad is not None:
                assert_close(x.grad, t.grad, rtol, atol)


@pytest.mark.parametrize("mode,pad", [("constant", (1, 2)), ("constant", (1, 0, -1, 2)),
                                      ("reflect", (2, 1, 1, 1)), ("replicate", (3, 0, 1, 2)),
                                      ("circular", (1, 2, 0, 1))])
def test_pad_matches_pytorch(torch, mode, pad):
    x = r(2, 3, 4, 5)
    _both(torch, lambda t: F.pad(t, pad, mode), lambda t: torch.nn.functional.pad(t, pad, mode),
          x)


def test_pad_constant_value(torch):
    x = r(2, 3)
    _both(torch, lambda t: F.pad(t, (1, 1, 2, 0), value=-3.5),
          lambda t: torch.nn.functional.pad(t, (1, 1, 2, 0), value=-3.5), x)


@pytest.mark.parametrize("kwargs", [dict(size=(5, 7), mode="nearest"),
                                    dict(scale_factor=2, mode="nearest"),
                                    dict(scale_factor=0.5, mode="nearest"),
                                    dict(size=(5, 7), mode="bilinear"),
                                    dict(size=(5, 7), mode="bilinear", align_corners=True),
                                    dict(scale_factor=1.5, mode="bilinear"),
                                    dict(size=(2, 3), mode="bilinear")])
def test_interpolate_matches_pytorch(torch, kwargs):
    x = r(2, 3, 4, 6)
    _both(torch, lambda t: F.interpolate(t, **kwargs),
          lambda t: torch.nn.functional.interpolate(t, **kwargs), x, rtol=1e-5, atol=1e-5)


def test_interpolate_1d_linear_matches_pytorch(torch):
    _both(torch, lambda t: F.interpolate(t, size=7, mode="linear"),
          lambda t: torch.nn.functional.interpolate(t, size=7, mode="linear"), r(2, 3, 4),
          atol=1e-5)


def test_unfold_fold_match_pytorch(torch):
    x = r(2, 3, 5, 6)
    _both(torch, lambda t: F.unfold(t, (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)),
          lambda t: torch.nn.functional.unfold(t, (2, 3), dilation=(2, 1), padding=1,
                                               stride=(1, 2)), x)
    cols = r(2, 12, 12)
    _both(torch, lambda t: F.fold(t, (5, 6), 2, padding=1, stride=2),
          lambda t: torch.nn.functional.fold(t, (5, 6), 2, padding=1, stride=2), cols)


@pytest.mark.parametrize("kwargs", [{}, dict(is_causal=True), dict(scale=0.3)])
def test_sdpa_matches_pytorch(torch, kwargs):
    q, k, v = r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 5)
    _both(torch, lambda *a: F.scaled_dot_product_attention(*a, **kwargs),
          lambda *a: torch.nn.functional.scaled_dot_product_attention(*a, **kwargs), q, k, v,
          rtol=1e-4, atol=1e-5)


def test_sdpa_masks_match_pytorch(torch):
    q, k, v = r(2, 4, 8), r(2, 6, 8), r(2, 6, 3)
    bool_mask = rng.random((4, 6)) > 0.3
    bool_mask[:, 0] = True
    float_mask = r(2, 4, 6)
    for m in (bool_mask, float_mask):
        _both(torch, lambda a, b, c: F.scaled_dot_product_attention(a, b, c, ours(m)),
              lambda a, b, c: torch.nn.functional.scaled_dot_product_attention(
                  a, b, c, torch.tensor(m)), q, k, v, rtol=1e-4, atol=1e-5)


def test_sdpa_dropout_zeroes_attention_and_keeps_mean():
    dt.manual_seed(0)
    q, k = dt.zeros(1, 1, 8), dt.zeros(1, 64, 8)
    v = dt.ones(1, 64, 1)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    assert 0.6 < float(out.item()) < 1.4        # 64 uniform weights, half kept and doubled


def test_one_hot_and_errors():
    assert to_np(F.one_hot(dt.tensor([0, 2, 1]))).tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    assert F.one_hot(dt.tensor([[1]]), 4).shape == (1, 1, 4)
    with pytest.raises(RuntimeError, match="LongTensor"):
        F.one_hot(dt.tensor([0.0]))
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(dt.tensor([3]), 3)


def test_normalize_matches_pytorch(torch):
    for p in (1, 2, 3, float("inf")):
        _both(torch, lambda t: F.normalize(t, p=p, dim=0),
              lambda t: torch.nn.functional.normalize(t, p=p, dim=0), r(4, 3), atol=1e-6)
    _both(torch, lambda t: F.normalize(t), lambda t: torch.nn.functional.normalize(t),
          np.zeros((2, 3), np.float32))


def test_embedding_bag_of_errors():
    w = dt.randn(4, 2)
    with pytest.raises(RuntimeError, match="Long, Int"):
        F.embedding(dt.tensor([0.0]), w)
    with pytest.raises(IndexError, match="out of range"):
        F.embedding(dt.tensor([4]), w)


def test_conv_argument_errors():
    x, w = dt.randn(1, 4, 5, 5), dt.randn(6, 2, 3, 3)
    with pytest.raises(RuntimeError, match="groups=1.*to have 2 channels"):
        F.conv2d(x, w)
    with pytest.raises(RuntimeError, match="Kernel size can't be greater"):
        F.conv2d(dt.randn(1, 2, 2, 2), dt.randn(1, 2, 3, 3))
    with pytest.raises(RuntimeError, match="strided"):   # as F.conv2d (nn.Conv2d: ValueError)
        F.conv2d(x, w, stride=2, padding="same", groups=2)
    with pytest.raises(RuntimeError, match="bias type"):
        F.conv2d(x, w, dt.zeros(6, dtype=dt.float64), groups=2)
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.max_pool2d(x, 2, padding=2)


def test_dropout_functional_modes():
    x = dt.ones(1000)
    assert F.dropout(x, 0.3, training=False) is x
    assert not np.any(to_np(F.dropout(x, 1.0)))
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, 1.5)
