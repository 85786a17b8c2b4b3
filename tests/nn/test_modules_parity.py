"""Every nn layer against PyTorch: the same constructor, PyTorch's weights copied in,
the same inputs; outputs, input gradients and parameter gradients agree. The
constructor is one expression evaluated with `nn` bound to each library."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close, copy_params
from parity import Fixed, compare_call

import dispatchtorch as dt

rng = np.random.default_rng(0)


def r(*shape, lo=None):
    a = rng.standard_normal(shape).astype(np.float32)
    return np.abs(a) + lo if lo is not None else a


def ints(hi, *shape):
    return Fixed(rng.integers(0, hi, shape).astype(np.int64))


def sign(*shape):
    return Fixed(np.where(rng.random(shape) < 0.5, -1.0, 1.0).astype(np.float32))


def _kinkless(a):
    return np.where(np.abs(a) < 0.05, 0.3, a).astype(np.float32)


X4 = _kinkless(r(2, 3, 5, 6))

CASES = [
    ("nn.Threshold(0.1, 20.0)", (X4,)), ("nn.Hardsigmoid()", (X4,)),
    ("nn.Hardswish()", (X4 * 4,)), ("nn.SELU()", (X4,)), ("nn.CELU(0.5)", (X4,)),
    ("nn.GLU(1)", (r(2, 4, 3),)), ("nn.LogSigmoid()", (X4,)), ("nn.Hardshrink(0.3)", (X4,)),
    ("nn.Softshrink(0.3)", (X4,)), ("nn.Tanhshrink()", (X4,)), ("nn.Softsign()", (X4,)),
    ("nn.PReLU()", (X4,)), ("nn.PReLU(3, 0.1)", (X4,)), ("nn.Softmax2d()", (X4,)),
    ("nn.ReLU6()", (X4 * 4,)), ("nn.Mish()", (X4,)), ("nn.LeakyReLU(0.1)", (X4,)),
    ("nn.MultiheadAttention(8, 2, kdim=5, vdim=6)", (r(4, 2, 8), r(3, 2, 5), r(3, 2, 6))),
    ("nn.MultiheadAttention(8, 2, batch_first=True)", (r(2, 4, 8), r(2, 3, 8), r(2, 3, 8))),
    ("nn.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True)",
     (r(4, 2, 8), r(3, 2, 8), r(3, 2, 8))),
    ("nn.MultiheadAttention(8, 2, add_zero_attn=True, batch_first=True)",
     (r(2, 4, 8), r(2, 3, 8), r(2, 3, 8))),
    ("nn.BatchNorm3d(3)", (r(2, 3, 3, 4, 2),)), ("nn.InstanceNorm1d(3)", (r(2, 3, 7),)),
    ("nn.InstanceNorm2d(3, affine=True)", (r(2, 3, 4, 5),)),
    ("nn.InstanceNorm3d(3, track_running_stats=True)", (r(2, 3, 3, 4, 2),)),
    ("nn.InstanceNorm2d(3)", (r(3, 4, 5),)),
    ("nn.LocalResponseNorm(3)", (X4,)),
    ("nn.GroupNorm(3, 6)", (r(2, 6, 4),)), ("nn.RMSNorm(6)", (r(2, 6),)),
    ("nn.ChannelShuffle(3)", (r(2, 6, 2, 2),)), ("nn.PixelShuffle(2)", (r(2, 8, 3, 3),)),
    ("nn.PixelUnshuffle(2)", (r(2, 2, 4, 6),)),
    ("nn.Conv3d(4, 6, (3, 2, 3), stride=(2, 1, 1), padding=1, groups=2)", (r(2, 4, 5, 4, 5),)),
    ("nn.Conv3d(2, 3, 3, padding=1, padding_mode='circular')", (r(1, 2, 4, 4, 4),)),
    ("nn.Conv3d(2, 3, 3, padding='same', padding_mode='reflect')", (r(1, 2, 4, 5, 4),)),
    ("nn.ConvTranspose3d(4, 2, 3, stride=2, padding=1, output_padding=1)", (r(2, 4, 3, 2, 3),)),
    ("nn.Conv2d(2, 3, 3, padding=2, padding_mode='replicate')", (r(1, 2, 5, 5),)),
    ("nn.PairwiseDistance()", (r(4, 5), r(4, 5))), ("nn.CosineSimilarity()", (r(4, 5), r(4, 5))),
    ("nn.Fold((4, 5), 2)", (r(2, 12, 12),)), ("nn.Unfold(2, padding=1, stride=2)", (X4,)),
    ("nn.Flatten(0, 1)", (X4,)), ("nn.Unflatten(1, (3, 1))", (X4,)), ("nn.Identity(3)", (X4,)),
    ("nn.EmbeddingBag(10, 3, mode='sum')", (ints(10, 8), Fixed(np.array([0, 3, 3, 6])))),
    ("nn.EmbeddingBag(10, 3, padding_idx=0)", (ints(10, 2, 5),)),
    ("nn.EmbeddingBag(10, 3, mode='max')", (ints(10, 2, 5),)),
    ("nn.Upsample(scale_factor=2, mode='bilinear')", (X4,)),
    ("nn.Upsample(size=(7, 9), mode='bicubic', align_corners=True)", (X4,)),
    ("nn.Upsample(scale_factor=(1.5, 2), mode='nearest')", (X4,)),
    ("nn.UpsamplingNearest2d(scale_factor=2)", (X4,)),
    ("nn.UpsamplingBilinear2d(size=(8, 8))", (X4,)),
    ("nn.Dropout1d(0.3).eval()", (r(2, 3, 5),)), ("nn.Dropout2d(0.3).eval()", (X4,)),
    ("nn.Dropout3d(0.3).eval()", (r(2, 3, 2, 2, 2),)),
    ("nn.AlphaDropout(0.3).eval()", (X4,)), ("nn.FeatureAlphaDropout(0.3).eval()", (X4,)),
    ("nn.RReLU().eval()", (X4,)),
]

PADS = []
for kind in ("ReflectionPad", "ReplicationPad", "CircularPad", "ZeroPad", "ConstantPad"):
    for d, shape in ((1, (2, 3, 6)), (2, (2, 3, 5, 6)), (3, (1, 2, 4, 5, 4))):
        arg = ", 1.5" if kind == "ConstantPad" else ""
        PADS.append((f"nn.{kind}{d}d(2{arg})", (r(*shape),)))
        PADS.append((f"nn.{kind}{d}d({tuple(range(1, 2 * d + 1))}{arg})",
                     (r(*((2,) + (2 * d + 1,) * d)),)))

POOLS = [
    ("nn.MaxPool3d((3, 2, 2), stride=(1, 2, 2), padding=(1, 0, 1))", (r(2, 3, 5, 6, 5),)),
    ("nn.MaxPool3d(2, ceil_mode=True)", (r(3, 5, 5, 5),)),
    ("nn.AvgPool3d(2, stride=1, padding=1, count_include_pad=False)", (r(2, 3, 4, 4, 4),)),
    ("nn.AvgPool3d(3, ceil_mode=True)", (r(1, 2, 5, 7, 5),)),
    ("nn.AdaptiveAvgPool3d((2, 3, None))", (r(2, 3, 5, 7, 4),)),
    ("nn.AdaptiveMaxPool1d(3)", (r(2, 3, 8),)), ("nn.AdaptiveMaxPool2d((3, 4))", (r(2, 3, 7, 9),)),
    ("nn.AdaptiveMaxPool3d(2)", (r(2, 3, 5, 4, 5),)),
    ("nn.LPPool1d(2, 3, stride=2)", (r(2, 3, 9, lo=0.1),)),
    ("nn.LPPool2d(1.5, 2)", (r(2, 3, 6, 6, lo=0.1),)),
    ("nn.LPPool3d(2, 2)", (r(1, 2, 4, 4, 4, lo=0.1),)),
]

LOSSES = [
    ("nn.PoissonNLLLoss()", (r(6), Fixed(r(6, lo=0.0) * 3))),
    ("nn.GaussianNLLLoss()", (r(4, 3), r(4, 3), r(4, 3, lo=0.1))),
    ("nn.HingeEmbeddingLoss(0.5)", (r(6), sign(6))),
    ("nn.MultiLabelMarginLoss()", (r(2, 4), Fixed(np.array([[3, 0, -1, 1], [1, 2, 3, 0]])))),
    ("nn.SoftMarginLoss()", (r(6), sign(6))),
    ("nn.MultiLabelSoftMarginLoss()", (r(3, 4), Fixed((rng.random((3, 4)) < .5) * 1.0))),
    ("nn.CosineEmbeddingLoss(0.2)", (r(4, 5), r(4, 5), sign(4))),
    ("nn.MarginRankingLoss(0.1)", (r(6), r(6), sign(6))),
    ("nn.MultiMarginLoss(p=2, margin=0.5)", (r(4, 5), ints(5, 4))),
    ("nn.TripletMarginLoss(swap=True)", (r(4, 5), r(4, 5), r(4, 5))),
    ("nn.TripletMarginWithDistanceLoss(margin=0.5)", (r(4, 5), r(4, 5), r(4, 5))),
    ("nn.NLLLoss2d()", (r(2, 3, 4, 4), ints(3, 2, 4, 4))),
    ("nn.KLDivLoss(reduction='batchmean')", (r(3, 4), Fixed(r(3, 4, lo=0.1)))),
]


def _build(torch, expr):
    torch.manual_seed(0)
    theirs = eval(expr, {"nn": torch.nn})
    ours = eval(expr, {"nn": dt.nn})
    if hasattr(theirs, "state_dict") and theirs.state_dict():
        copy_params(theirs, ours)
    if not theirs.training:
        ours.eval()
    return ours, theirs


@pytest.mark.parametrize("expr,inputs", CASES + PADS + POOLS + LOSSES,
                         ids=[c[0] for c in CASES + PADS + POOLS + LOSSES])
def test_layer_matches_pytorch(torch, expr, inputs):
    ours, theirs = _build(torch, expr)
    compare_call(torch, ours, theirs, inputs, rtol=1e-4, atol=1e-5)
    for name, p in ours.named_parameters():      # parameter gradients
        tp = dict(theirs.named_parameters())[name]
        if tp.grad is not None:
            assert_close(p.grad, tp.grad, 1e-4, 1e-5)
    for name, b in ours.named_buffers():          # running statistics
        assert_close(b, dict(theirs.named_buffers())[name], 1e-5, 1e-6)


def test_adaptive_log_softmax_matches_pytorch(torch):
    expr = "nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 10], div_value=2.0, head_bias=True)"
    ours, theirs = _build(torch, expr)
    x, t = r(6, 8), np.array([0, 3, 5, 12, 19, 9])
    compare_call(torch, ours, theirs, (x, Fixed(t)), rtol=1e-4, atol=1e-5)
    compare_call(torch, ours.log_prob, theirs.log_prob, (x,), rtol=1e-4, atol=1e-5)
    assert ours.predict(dt.tensor(x)).tolist() == theirs.predict(torch.tensor(x)).tolist()


@pytest.mark.parametrize("args", [(3,), (4, 0.01, 0.5, 2)])
def test_cross_map_lrn2d_forward_matches_pytorch_and_gradient_is_exact(torch, args):
    """PyTorch's hand-written CrossMapLRN2d backward is not the derivative of its
    forward (torch.autograd.gradcheck fails on it); ours is, by construction."""
    x = r(2, 6, 3, 3)
    ours = dt.nn.CrossMapLRN2d(*args)
    assert_close(ours(dt.tensor(x)), torch.nn.CrossMapLRN2d(*args)(torch.tensor(x)), 1e-5, 1e-6)
    xd = dt.tensor(x.astype(np.float64), requires_grad=True)
    assert dt.autograd.gradcheck(lambda t: ours(t), (xd,))


@pytest.mark.parametrize("masks", [False, True])
def test_multi_head_attention_forward_has_pytorchs_signature(torch, masks):
    """F.multi_head_attention_forward with PyTorch's positional arguments (sequence
    first), bias_k / bias_v, add_zero_attn and both masks."""
    E, H = 8, 2
    w_in, b_in, w_out, b_out = r(3 * E, E), r(3 * E), r(E, E), r(E)
    bk, bv = r(1, 1, E), r(1, 1, E)
    attn = Fixed(np.triu(np.ones((4, 3), bool), 1)) if masks else None
    kpm = Fixed(np.array([[False, False, True], [False, False, False]])) if masks else None

    def call(lib):
        def f(q, k, v, wi, bi, kb, vb, wo, bo):
            kw = {}
            if masks:
                kw = {"attn_mask": lib.tensor(attn.array),
                      "key_padding_mask": lib.tensor(kpm.array)}
            return lib.nn.functional.multi_head_attention_forward(
                q, k, v, E, H, wi, bi, kb, vb, True, 0.0, wo, bo, training=False,
                need_weights=True, **kw)
        return f
    compare_call(torch, call(dt), call(torch),
                 (r(4, 2, E), r(3, 2, E), r(3, 2, E), w_in, b_in, bk, bv, w_out, b_out),
                 rtol=1e-4, atol=1e-5)


REPR_EXTRA = ["nn.LSTM(3, 6, 2, proj_size=4, bidirectional=True)", "nn.GRUCell(3, 4)",
              "nn.RNNCell(3, 4, nonlinearity='relu')", "nn.Transformer(8, 2, 1, 1, 16)",
              "nn.EmbeddingBag(10, 3)", "nn.LazyLinear(3)",
              "nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 10])", "nn.SyncBatchNorm(3)",
              "nn.LinearCrossEntropyLoss(3, 5)"]


def test_layer_reprs_match_pytorch(torch):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for expr in [c[0] for c in CASES + PADS + POOLS + LOSSES] + REPR_EXTRA:
            assert repr(eval(expr, {"nn": dt.nn})) == repr(eval(expr, {"nn": torch.nn})), expr
