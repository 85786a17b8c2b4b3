"""Every layer: numpy formulas written here, and PyTorch with identical weights
(outputs, input gradients, parameter gradients)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import assert_close, compare_module, ours, to_np

import dispatchtorch as dt
import dispatchtorch.nn as nn

rng = np.random.default_rng(0)


def r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


# -- numpy references -------------------------------------------------------------------------------

def np_conv2d(x, w, b, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, g * cg:(g + 1) * cg,
                           i * stride[0]:i * stride[0] + dilation[0] * (kh - 1) + 1:dilation[0],
                           j * stride[1]:j * stride[1] + dilation[1] * (kw - 1) + 1:dilation[1]]
                out[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    return out + (0 if b is None else b.reshape(1, -1, 1, 1))


def np_pool(x, k, s, reduce):
    n, c, h, w = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = reduce(x[:, :, i * s:i * s + k, j * s:j * s + k], axis=(2, 3))
    return out


def test_linear_matches_numpy_formula():
    m = nn.Linear(5, 3)
    x = r(4, 5)
    y = m(ours(x))
    expected = x.astype(np.float64) @ to_np(m.weight).T + to_np(m.bias)
    assert_close(y, expected, 1e-5, 1e-6)


@pytest.mark.parametrize("stride,padding,dilation,groups", [
    ((1, 1), (1, 1), (1, 1), 1), ((2, 1), (0, 2), (1, 1), 1), ((1, 1), (2, 1), (2, 1), 2),
    ((2, 2), (1, 1), (1, 2), 4)])
def test_conv2d_matches_numpy_loops(stride, padding, dilation, groups):
    x, w, b = r(2, 4, 7, 6), r(8, 4 // groups, 3, 2), r(8)
    y = dt.nn.functional.conv2d(ours(x), ours(w), ours(b), stride, padding, dilation, groups)
    assert_close(y, np_conv2d(x, w, b, stride, padding, dilation, groups), 1e-4, 1e-5)


def test_pools_match_numpy_loops():
    x = r(2, 3, 8, 7)
    assert_close(nn.MaxPool2d(3, 2)(ours(x)), np_pool(x, 3, 2, np.max))
    assert_close(nn.AvgPool2d(2)(ours(x)), np_pool(x, 2, 2, np.mean), 1e-5, 1e-6)


def test_max_pool_gradient_goes_to_first_maximum():
    x = ours([[[[1.0, 3.0], [3.0, 0.0]]]], requires_grad=True)
    nn.MaxPool2d(2)(x).sum().backward()
    assert to_np(x.grad).tolist() == [[[[0.0, 1.0], [0.0, 0.0]]]]


def test_batchnorm_training_and_running_stats_match_numpy():
    m = nn.BatchNorm2d(3, momentum=0.3)
    x = r(4, 3, 2, 5)
    y = m(ours(x))
    xd = x.astype(np.float64)
    mu, var = xd.mean(axis=(0, 2, 3)), xd.var(axis=(0, 2, 3))
    expected = (xd - mu.reshape(1, 3, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1) + 1e-5)
    assert_close(y, expected, 1e-4, 1e-5)
    n = x.size // 3
    assert_close(m.running_mean, 0.3 * mu, 1e-5, 1e-6)
    assert_close(m.running_var, 0.7 + 0.3 * var * n / (n - 1), 1e-5, 1e-6)
    assert int(m.num_batches_tracked.item()) == 1
    m.eval()
    y2 = m(ours(x))
    rm, rv = to_np(m.running_mean), to_np(m.running_var)
    assert_close(y2, (xd - rm.reshape(1, 3, 1, 1)) / np.sqrt(rv.reshape(1, 3, 1, 1) + 1e-5),
                 1e-4, 1e-5)


def test_batchnorm_cumulative_average_when_momentum_is_none():
    m = nn.BatchNorm1d(2, momentum=None)
    xs = [r(6, 2), r(6, 2)]
    for x in xs:
        m(ours(x))
    assert_close(m.running_mean, np.mean([x.mean(0) for x in xs], axis=0), 1e-5, 1e-6)


def test_layernorm_matches_numpy():
    m = nn.LayerNorm(4)
    with dt.no_grad():
        m.weight.copy_(ours([1.0, 2.0, 0.5, -1.0]))
        m.bias.fill_(0.25)
    x = r(3, 4).astype(np.float64)
    y = m(ours(x.astype(np.float32)))
    expected = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    assert_close(y, expected * [1.0, 2.0, 0.5, -1.0] + 0.25, 1e-4, 1e-5)


def test_embedding_rows_and_padding_gradient():
    m = nn.Embedding(5, 3, padding_idx=1)
    assert not np.any(to_np(m.weight)[1])
    idx = dt.tensor([[1, 4, 4], [0, 1, 2]])
    y = m(idx)
    assert_close(y, to_np(m.weight)[to_np(idx)])
    y.sum().backward()
    counts = np.bincount(to_np(idx).ravel(), minlength=5).astype(float)
    counts[1] = 0.0
    assert_close(m.weight.grad, np.repeat(counts[:, None], 3, axis=1))


def test_lstm_one_step_matches_numpy():
    m = nn.LSTM(3, 2)
    x = r(1, 1, 3)
    out, (h, c) = m(ours(x))
    W = {k: to_np(v) for k, v in m.named_parameters()}
    z = W["weight_ih_l0"] @ x[0, 0] + W["bias_ih_l0"] + W["bias_hh_l0"]
    sig = lambda v: 1 / (1 + np.exp(-v))      # noqa: E731
    i, f, g, o = sig(z[:2]), sig(z[2:4]), np.tanh(z[4:6]), sig(z[6:])
    c_ref = i * g
    assert_close(c, c_ref.reshape(1, 1, 2), 1e-5, 1e-6)
    assert_close(h, (o * np.tanh(c_ref)).reshape(1, 1, 2), 1e-5, 1e-6)
    assert_close(out, h, 0, 0)


def test_gru_one_step_matches_numpy():
    m = nn.GRU(3, 2)
    x, h0 = r(1, 1, 3), r(1, 1, 2)
    _, h = m(ours(x), ours(h0))
    W = {k: to_np(v) for k, v in m.named_parameters()}
    gi = W["weight_ih_l0"] @ x[0, 0] + W["bias_ih_l0"]
    gh = W["weight_hh_l0"] @ h0[0, 0] + W["bias_hh_l0"]
    sig = lambda v: 1 / (1 + np.exp(-v))      # noqa: E731
    rr, z = sig(gi[:2] + gh[:2]), sig(gi[2:4] + gh[2:4])
    n = np.tanh(gi[4:] + rr * gh[4:])
    assert_close(h, ((1 - z) * n + z * h0[0, 0]).reshape(1, 1, 2), 1e-5, 1e-6)


def test_dropout_scales_kept_elements_and_is_identity_in_eval():
    dt.manual_seed(0)
    m = nn.Dropout(0.25)
    x = dt.ones(200, 100, requires_grad=True)
    y = m(x)
    v = to_np(y)
    assert set(np.unique(v)) <= {0.0, float(np.float32(1) / np.float32(0.75))}
    assert abs((v == 0).mean() - 0.25) < 0.02
    y.sum().backward()
    assert_close(x.grad, (v != 0) / 0.75, 1e-6)
    m.eval()
    assert m(x) is x


# -- PyTorch with identical weights -------------------------------------------------------------------

CASES = [
    ("Identity", lambda m: m.Identity(), [r(3, 4)]),
    ("Linear", lambda m: m.Linear(5, 3), [r(4, 5)]),
    ("Linear-3d-nobias", lambda m: m.Linear(5, 3, bias=False), [r(2, 4, 5)]),
    ("Bilinear", lambda m: m.Bilinear(3, 4, 2), [r(5, 3), r(5, 4)]),
    ("Conv2d", lambda m: m.Conv2d(3, 4, 3, padding=1), [r(2, 3, 6, 7)]),
    ("Conv2d-unbatched", lambda m: m.Conv2d(3, 4, 3), [r(3, 6, 7)]),
    ("Conv2d-stride", lambda m: m.Conv2d(3, 4, 3, stride=2, padding=1), [r(2, 3, 7, 6)]),
    ("Conv2d-dilation-groups", lambda m: m.Conv2d(4, 6, (3, 2), dilation=(2, 1), groups=2,
                                                  padding=(2, 1)), [r(2, 4, 7, 6)]),
    ("Conv2d-same-even", lambda m: m.Conv2d(3, 4, 4, padding="same", bias=False), [r(2, 3, 6, 7)]),
    ("Conv2d-reflect", lambda m: m.Conv2d(3, 4, 3, padding=1, padding_mode="reflect"),
     [r(2, 3, 6, 7)]),
    ("Conv2d-replicate", lambda m: m.Conv2d(2, 2, 3, padding=2, padding_mode="replicate"),
     [r(1, 2, 4, 5)]),
    ("Conv1d", lambda m: m.Conv1d(3, 4, 3, stride=2, padding=1), [r(2, 3, 9)]),
    ("Conv1d-same", lambda m: m.Conv1d(2, 4, 5, padding="same", dilation=2), [r(2, 2, 9)]),
    ("ConvTranspose2d", lambda m: m.ConvTranspose2d(3, 4, 3, stride=2, padding=1,
                                                    output_padding=1), [r(2, 3, 4, 5)]),
    ("ConvTranspose2d-groups", lambda m: m.ConvTranspose2d(4, 6, 3, padding=1, groups=2),
     [r(2, 4, 4, 5)]),
    ("ConvTranspose2d-dilation", lambda m: m.ConvTranspose2d(2, 3, 2, dilation=2, stride=1,
                                                             output_padding=1), [r(1, 2, 3, 4)]),
    ("ConvTranspose1d", lambda m: m.ConvTranspose1d(2, 3, 3, stride=2), [r(2, 2, 5)]),
    ("MaxPool2d", lambda m: m.MaxPool2d(2), [r(2, 3, 6, 7)]),
    ("MaxPool2d-overlap-ceil", lambda m: m.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),
     [r(2, 3, 7, 6)]),
    ("MaxPool2d-dilation", lambda m: m.MaxPool2d(2, stride=1, dilation=2), [r(1, 2, 5, 6)]),
    ("MaxPool1d", lambda m: m.MaxPool1d(3, 2), [r(2, 3, 9)]),
    ("AvgPool2d-ceil", lambda m: m.AvgPool2d(3, stride=2, padding=1, ceil_mode=True),
     [r(2, 3, 7, 6)]),
    ("AvgPool2d-exclude-pad", lambda m: m.AvgPool2d(3, stride=2, padding=1,
                                                    count_include_pad=False), [r(2, 3, 7, 6)]),
    ("AvgPool2d-divisor", lambda m: m.AvgPool2d(2, divisor_override=3), [r(1, 2, 4, 4)]),
    ("AvgPool1d", lambda m: m.AvgPool1d(2), [r(2, 3, 9)]),
    ("AdaptiveAvgPool2d", lambda m: m.AdaptiveAvgPool2d((3, 2)), [r(2, 3, 7, 5)]),
    ("AdaptiveAvgPool2d-divisible", lambda m: m.AdaptiveAvgPool2d(2), [r(2, 3, 4, 6)]),
    ("BatchNorm1d", lambda m: m.BatchNorm1d(3), [r(5, 3)]),
    ("BatchNorm1d-3d", lambda m: m.BatchNorm1d(3, affine=False), [r(5, 3, 4)]),
    ("BatchNorm2d", lambda m: m.BatchNorm2d(3), [r(4, 3, 2, 3)]),
    ("LayerNorm", lambda m: m.LayerNorm((3, 4)), [r(2, 3, 4)]),
    ("LayerNorm-nobias", lambda m: m.LayerNorm(4, bias=False), [r(2, 3, 4)]),
    ("GroupNorm", lambda m: m.GroupNorm(2, 4), [r(2, 4, 3)]),
    ("RMSNorm", lambda m: m.RMSNorm(4), [r(2, 3, 4)]),
    ("ReLU", lambda m: m.ReLU(), [r(3, 4)]),
    ("LeakyReLU", lambda m: m.LeakyReLU(0.2), [r(3, 4)]),
    ("GELU", lambda m: m.GELU(), [r(3, 4)]),
    ("GELU-tanh", lambda m: m.GELU("tanh"), [r(3, 4)]),
    ("SiLU", lambda m: m.SiLU(), [r(3, 4)]),
    ("Tanh", lambda m: m.Tanh(), [r(3, 4)]),
    ("Sigmoid", lambda m: m.Sigmoid(), [r(3, 4)]),
    ("Softmax", lambda m: m.Softmax(1), [r(3, 4)]),
    ("LogSoftmax", lambda m: m.LogSoftmax(0), [r(3, 4)]),
    ("Softplus", lambda m: m.Softplus(2.0, 1.0), [r(3, 4)]),
    ("ELU", lambda m: m.ELU(0.5), [r(3, 4)]),
    ("Hardtanh", lambda m: m.Hardtanh(-0.5, 0.7), [r(3, 4)]),
    ("Mish", lambda m: m.Mish(), [r(3, 4)]),
    ("Flatten", lambda m: m.Flatten(), [r(2, 3, 4)]),
    ("Unflatten", lambda m: m.Unflatten(1, (2, 2)), [r(3, 4)]),
    ("Embedding", lambda m: m.Embedding(7, 3, padding_idx=2), [np.array([[1, 2, 6], [2, 0, 1]])]),
    ("MultiheadAttention", lambda m: m.MultiheadAttention(8, 2), [r(5, 2, 8)] * 3),
    ("MultiheadAttention-kdim-batch-first",
     lambda m: m.MultiheadAttention(8, 2, batch_first=True, kdim=6, vdim=4),
     [r(2, 5, 8), r(2, 3, 6), r(2, 3, 4)]),
    ("TransformerEncoderLayer", lambda m: m.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
     [r(5, 2, 8)]),
    ("TransformerEncoderLayer-norm-first",
     lambda m: m.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True,
                                         norm_first=True, activation="gelu"), [r(2, 5, 8)]),
    ("TransformerEncoder",
     lambda m: m.TransformerEncoder(m.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2,
                                    norm=m.LayerNorm(8), enable_nested_tensor=False),
     [r(5, 2, 8)]),
    ("LSTM-2-layers", lambda m: m.LSTM(3, 4, num_layers=2), [r(5, 2, 3)]),
    ("LSTM-bidirectional-batch-first", lambda m: m.LSTM(3, 4, batch_first=True,
                                                        bidirectional=True), [r(2, 5, 3)]),
    ("LSTM-unbatched", lambda m: m.LSTM(3, 4), [r(5, 3)]),
    ("GRU-2-layers-batch-first", lambda m: m.GRU(3, 4, num_layers=2, batch_first=True),
     [r(2, 5, 3)]),
    ("GRU-nobias", lambda m: m.GRU(3, 4, bias=False), [r(4, 2, 3)]),
]


@pytest.mark.parametrize("name,make,inputs", CASES, ids=[c[0] for c in CASES])
def test_layer_matches_pytorch(torch, name, make, inputs):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare_module(torch, make(nn), make(torch.nn), *inputs, rtol=1e-4, atol=1e-5)


def test_attention_masks_and_weights_match_pytorch(torch):
    m, tm = nn.MultiheadAttention(8, 2, batch_first=True), torch.nn.MultiheadAttention(
        8, 2, batch_first=True)
    from conftest import copy_params
    copy_params(tm, m)
    q, k = r(2, 4, 8), r(2, 5, 8)
    attn_mask = np.triu(np.ones((4, 5), dtype=bool), 2)
    kpm = np.zeros((2, 5), dtype=bool)
    kpm[1, 4] = True
    out, w = m(ours(q), ours(k), ours(k), key_padding_mask=dt.tensor(kpm),
               attn_mask=dt.tensor(attn_mask))
    tout, tw = tm(torch.tensor(q), torch.tensor(k), torch.tensor(k),
                  key_padding_mask=torch.tensor(kpm), attn_mask=torch.tensor(attn_mask))
    assert_close(out, tout, 1e-4, 1e-5)
    assert_close(w, tw, 1e-4, 1e-5)
    out, w = m(ours(q), ours(k), ours(k), need_weights=False,
               attn_mask=dt.tensor(attn_mask.astype(np.float32) * -1e9))
    assert w is None
    tout, _ = tm(torch.tensor(q), torch.tensor(k), torch.tensor(k), need_weights=False,
                 attn_mask=torch.tensor(attn_mask.astype(np.float32) * -1e9))
    assert_close(out, tout, 1e-4, 1e-5)


def test_causal_encoder_matches_pytorch(torch):
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    tlayer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    from conftest import copy_params
    copy_params(tlayer, layer)
    x = r(2, 6, 8)
    mask = nn.generate_square_subsequent_mask(6)
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(6)
    assert_close(mask, tmask)
    y = layer(ours(x), src_mask=mask, is_causal=True)
    ty = tlayer(torch.tensor(x), src_mask=tmask, is_causal=True)
    assert_close(y, ty, 1e-4, 1e-5)


def test_batchnorm_eval_and_running_stats_match_pytorch(torch):
    m, tm = nn.BatchNorm2d(3, momentum=0.2), torch.nn.BatchNorm2d(3, momentum=0.2)
    for _ in range(3):
        x = r(4, 3, 2, 2)
        m(ours(x))
        tm(torch.tensor(x))
    assert_close(m.running_mean, tm.running_mean, 1e-5, 1e-6)
    assert_close(m.running_var, tm.running_var, 1e-5, 1e-6)
    m.eval()
    tm.eval()
    compare_module(torch, m, tm, r(2, 3, 2, 2), rtol=1e-4, atol=1e-5)


def test_max_pool_return_indices_match_pytorch(torch):
    x = r(2, 3, 7, 6)
    y, i = dt.nn.functional.max_pool2d(ours(x), 3, 2, 1, ceil_mode=True, return_indices=True)
    ty, ti = torch.nn.functional.max_pool2d(torch.tensor(x), 3, 2, 1, ceil_mode=True,
                                            return_indices=True)
    assert_close(y, ty)
    assert to_np(i).tolist() == ti.numpy().tolist()


# -- default initialisation ----------------------------------------------------------------------------

def _within(t, bound):
    v = to_np(t)
    return v.min() >= -bound and v.max() <= bound and v.max() > 0.5 * bound


def test_default_init_bounds_follow_pytorch_fans():
    dt.manual_seed(0)           # the "reaches past half the bound" checks are statistical
    lin = nn.Linear(40, 30)
    assert _within(lin.weight, 1 / math.sqrt(40)) and _within(lin.bias, 1 / math.sqrt(40))
    conv = nn.Conv2d(6, 8, (3, 2), groups=2)
    fan_in = 3 * 3 * 2
    assert _within(conv.weight, 1 / math.sqrt(fan_in))
    assert _within(conv.bias, 1 / math.sqrt(fan_in))
    convt = nn.ConvTranspose2d(4, 6, 3)                       # fan_in = 6 * 9
    assert _within(convt.weight, 1 / math.sqrt(54))
    rnn = nn.LSTM(5, 20)
    assert all(_within(p, 1 / math.sqrt(20)) for p in rnn.parameters())
    bil = nn.Bilinear(25, 3, 4)
    assert _within(bil.weight, 1 / math.sqrt(25))
    emb = nn.Embedding(1000, 20)
    v = to_np(emb.weight)
    assert abs(v.mean()) < 0.02 and abs(v.std() - 1) < 0.02
    mha = nn.MultiheadAttention(16, 4)
    assert _within(mha.in_proj_weight, math.sqrt(6 / (16 + 48)))
    assert not np.any(to_np(mha.in_proj_bias)) and not np.any(to_np(mha.out_proj.bias))
    bn = nn.BatchNorm2d(3)
    assert to_np(bn.weight).tolist() == [1, 1, 1] and to_np(bn.running_var).tolist() == [1, 1, 1]


# -- bad input names the layer ---------------------------------------------------------------------

@pytest.mark.parametrize("layer,x,match", [
    (lambda: nn.Linear(4, 3), dt.randn(2, 5), r"Linear\(in_features=4.*last dimension 4"),
    (lambda: nn.Conv2d(3, 4, 3), dt.randn(2, 2, 5, 5), r"Conv2d\(3, 4.*3 channels"),
    (lambda: nn.Conv2d(3, 4, 3), dt.randn(5, 5), r"Conv2d\(3, 4.*3-D \(unbatched\) or 4-D"),
    (lambda: nn.BatchNorm2d(3), dt.randn(2, 4, 5, 5), r"BatchNorm2d\(3.*3 channels"),
    (lambda: nn.BatchNorm2d(3), dt.randn(2, 3), r"BatchNorm2d\(3.*expected 4D"),
    (lambda: nn.LayerNorm(4), dt.randn(2, 5), r"LayerNorm\(\(4,\).*\[\*, 4\]"),
    (lambda: nn.MaxPool2d(2), dt.randn(3, 2, 2, 2, 2), r"MaxPool2d\(kernel_size=2"),
    (lambda: nn.LSTM(3, 4), dt.randn(5, 2, 2), r"LSTM\(3, 4\).*input_size"),
    (lambda: nn.Embedding(3, 4), dt.tensor([0.5]), r"Embedding\(3, 4\).*integer"),
    (lambda: nn.Embedding(3, 4), dt.tensor([5]), r"Embedding\(3, 4\).*out of range"),
    (lambda: nn.GroupNorm(2, 4), dt.randn(2, 3, 2), r"GroupNorm\(2, 4.*\[N, 4"),
])
def test_wrong_input_raises_naming_the_layer(layer, x, match):
    with pytest.raises((RuntimeError, ValueError, IndexError), match=match):
        layer()(x)


def test_sequential_error_names_the_inner_layer():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(6, 2))
    with pytest.raises(RuntimeError, match=r"Linear\(in_features=6, out_features=2"):
        model(dt.randn(3, 4))
