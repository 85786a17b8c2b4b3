"""Transformer (encoder-decoder), lazy layers, Module hooks and PyTorch's module
paths, against PyTorch where it is installed."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from conftest import assert_close, copy_params, to_np

import dispatchtorch as dt
import dispatchtorch.nn as nn

rng = np.random.default_rng(0)


def r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("kw", [{}, {"norm_first": True, "activation": "gelu"},
                                {"batch_first": True}])
def test_transformer_matches_pytorch(torch, kw):
    expr = ("nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, "
            "dim_feedforward=16, dropout=0.0, **kw)")
    torch.manual_seed(0)
    theirs = eval(expr, {"nn": torch.nn, "kw": kw})
    ours = eval(expr, {"nn": nn, "kw": kw})
    copy_params(theirs, ours)
    bf = kw.get("batch_first", False)
    src, tgt = (r(2, 5, 8), r(2, 4, 8)) if bf else (r(5, 2, 8), r(4, 2, 8))
    mask = nn.Transformer.generate_square_subsequent_mask(4)
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(4)
    assert_close(mask, tmask)
    so, to_ = dt.tensor(src, requires_grad=True), dt.tensor(tgt, requires_grad=True)
    st, tt = torch.tensor(src, requires_grad=True), torch.tensor(tgt, requires_grad=True)
    kpm = np.array([[False] * 4 + [True], [False] * 5])
    yo = ours(so, to_, tgt_mask=mask, src_key_padding_mask=dt.tensor(kpm))
    yt = theirs(st, tt, tgt_mask=tmask, src_key_padding_mask=torch.tensor(kpm))
    assert_close(yo, yt, 1e-4, 1e-5)
    yo.pow(2).sum().backward()
    yt.pow(2).sum().backward()
    assert_close(so.grad, st.grad, 1e-4, 1e-5)
    assert_close(to_.grad, tt.grad, 1e-4, 1e-5)
    tp = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        assert_close(p.grad, tp[name].grad, 1e-4, 1e-5)


def test_transformer_decoder_layer_state_dict_keys_match_pytorch(torch):
    t = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(8, 2, 16), 2)
    o = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16), 2)
    assert list(o.state_dict()) == list(t.state_dict())


@pytest.mark.parametrize("lazy,eager,shape", [
    ("LazyLinear(4)", "Linear(3, 4)", (2, 3)),
    ("LazyConv1d(4, 3)", "Conv1d(2, 4, 3)", (2, 2, 7)),
    ("LazyConv2d(4, 3, padding=1)", "Conv2d(2, 4, 3, padding=1)", (2, 2, 5, 5)),
    ("LazyConv3d(4, 2)", "Conv3d(2, 4, 2)", (1, 2, 3, 3, 3)),
    ("LazyConvTranspose2d(4, 3, stride=2)", "ConvTranspose2d(2, 4, 3, stride=2)", (1, 2, 3, 3)),
    ("LazyBatchNorm1d()", "BatchNorm1d(3)", (4, 3)),
    ("LazyBatchNorm2d(momentum=0.3)", "BatchNorm2d(3, momentum=0.3)", (4, 3, 2, 2)),
    ("LazyInstanceNorm2d(track_running_stats=False)", "InstanceNorm2d(3, affine=True)",
     (2, 3, 4, 4)),
    ("LazyConvTranspose1d(4, 3)", "ConvTranspose1d(2, 4, 3)", (2, 2, 5)),
    ("LazyConvTranspose3d(2, 2)", "ConvTranspose3d(3, 2, 2)", (1, 3, 2, 3, 2)),
    ("LazyBatchNorm3d()", "BatchNorm3d(3)", (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d(affine=False)", "InstanceNorm1d(3, track_running_stats=True)",
     (2, 3, 5)),
    ("LazyInstanceNorm3d()", "InstanceNorm3d(3, affine=True, track_running_stats=True)",
     (2, 3, 2, 3, 2)),
])
def test_lazy_layers_infer_shapes_and_become_eager(torch, lazy, eager, shape):
    m = eval("nn." + lazy, {"nn": nn})
    assert m.has_uninitialized_params()
    x = r(*shape)
    m(dt.tensor(x))
    t = eval("nn." + eager, {"nn": torch.nn})
    assert type(m).__name__ == type(t).__name__          # became cls_to_become
    assert isinstance(m, getattr(nn, type(t).__name__))
    assert {k: tuple(v.shape) for k, v in m.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in t.state_dict().items()}
    copy_params(t, m)
    assert_close(m(dt.tensor(x)), t(torch.tensor(x)), 1e-4, 1e-5)


def test_lazy_layer_loads_a_state_dict_before_its_first_call():
    src = nn.Linear(3, 4)
    m = nn.LazyLinear(4)
    m.load_state_dict(src.state_dict())
    assert tuple(m.weight.shape) == (4, 3)
    assert_close(m(dt.ones(1, 3)), src(dt.ones(1, 3)))


def test_uninitialized_parameter_refuses_shape():
    p = nn.UninitializedParameter()
    with pytest.raises(RuntimeError, match="uninitialized"):
        p.shape
    p.materialize((2, 3))
    assert type(p) is nn.Parameter and tuple(p.shape) == (2, 3)


def test_full_backward_hooks_see_pytorchs_gradients(torch):
    def run(lib, x, w):
        m = lib.nn.Linear(3, 2)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w))
            m.bias.zero_()
        seen = {}

        def pre(mod, grad_output):
            seen["pre"] = grad_output[0].clone()
            return (grad_output[0] * 2,)

        def hook(mod, grad_input, grad_output):
            seen["in"], seen["out"] = grad_input[0].clone(), grad_output[0].clone()
            return (grad_input[0] + 1,)
        m.register_full_backward_pre_hook(pre)
        h = m.register_full_backward_hook(hook)
        xt = lib.tensor(x, requires_grad=True)
        (m(xt) ** 2).sum().backward()
        h.remove()
        return seen, xt.grad
    # its own seeded draws (the module's shared generator hands each test different values
    # depending on which tests ran before it in the worker); atol 1e-5: the gradients are
    # float32 sums of terms up to ~10, whose order may differ from PyTorch's by an ulp
    local = np.random.default_rng(105)
    x, w = (local.standard_normal(s).astype(np.float32) for s in ((4, 3), (2, 3)))
    so, go = run(dt, x, w)
    st, gt = run(torch, x, w)
    for k in ("pre", "in", "out"):
        assert_close(so[k], st[k], 1e-5, 1e-5)
    assert_close(go, gt, 1e-5, 1e-5)


def test_backward_hook_without_input_grad_gets_none(torch):
    calls = []
    m = nn.Linear(3, 2)
    m.register_full_backward_hook(lambda mod, gi, go: calls.append((gi, go[0].shape)))
    m(dt.randn(4, 3)).sum().backward()
    assert calls and calls[0][0] == (None,) and tuple(calls[0][1]) == (4, 2)


def test_global_forward_hooks_and_state_dict_hooks():
    from dispatchtorch.nn.modules.module import register_module_forward_hook
    names = []
    h = register_module_forward_hook(lambda mod, inp, out: names.append(type(mod).__name__))
    try:
        nn.Sequential(nn.Linear(2, 2), nn.ReLU())(dt.randn(1, 2))
    finally:
        h.remove()
    assert names == ["Linear", "ReLU", "Sequential"]
    m = nn.Linear(2, 2)
    m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: sd.__setitem__("extra", 1))
    assert m.state_dict()["extra"] == 1
    seen = []
    m.register_load_state_dict_pre_hook(lambda mod, sd, prefix, *a: seen.append(sorted(sd)))
    m.load_state_dict(nn.Linear(2, 2).state_dict())
    assert seen == [["bias", "weight"]]


def test_classes_live_at_pytorchs_module_paths(torch):
    for name in torch.nn.modules.__all__:
        theirs = getattr(torch.nn, name)
        ours = getattr(nn, name, None)
        if ours is None or not isinstance(theirs, type):
            continue
        mod = theirs.__module__.replace("torch.", "dispatchtorch.", 1)
        import importlib
        assert getattr(importlib.import_module(mod), name) is ours, (name, mod)
    from dispatchtorch.nn.modules.activation import MultiheadAttention
    from dispatchtorch.nn.modules.linear import NonDynamicallyQuantizableLinear
    from dispatchtorch.nn.modules.rnn import RNN
    assert RNN is nn.RNN and MultiheadAttention is nn.MultiheadAttention
    assert isinstance(nn.MultiheadAttention(4, 2).out_proj, NonDynamicallyQuantizableLinear)


class MyLSTM(nn.LSTM):
    """A user's subclass (module level, so pickle finds it)."""


def test_modules_pickle_deepcopy_and_subclass():
    m = MyLSTM(3, 4, 2, bidirectional=True)
    x = dt.randn(5, 2, 3)
    for clone in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert type(clone) is MyLSTM
        assert np.allclose(to_np(clone(x)[0]), to_np(m(x)[0]))
    t = pickle.loads(pickle.dumps(nn.Transformer(8, 2, 1, 1, 16)))
    assert isinstance(t.encoder.layers[0].self_attn, nn.MultiheadAttention)


def test_reassigning_a_submodule_or_parameter_keeps_its_place(torch):
    def orders(lib):
        m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU(), lib.nn.Linear(3, 1))
        m[0] = lib.nn.Linear(2, 3)
        m.add_module("1", lib.nn.Tanh())
        lin = lib.nn.Linear(2, 2)
        lin.weight = lib.nn.Parameter(lib.ones(2, 2))
        lin.register_buffer("b", lib.ones(1))
        lin.register_buffer("b", lib.zeros(1), persistent=False)
        lin.register_buffer("b", lib.zeros(1))
        return ([n for n, _ in m.named_modules()], [n for n, _ in lin.named_parameters()],
                list(lin.state_dict()))
    assert orders(dt) == orders(torch)


def test_rnn_base_built_directly_matches_pytorch(torch):
    torch.manual_seed(0)
    t = torch.nn.RNNBase("GRU", 3, 4, 2, batch_first=True)
    o = nn.RNNBase("GRU", 3, 4, 2, batch_first=True)
    assert {k: tuple(v.shape) for k, v in o.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in t.state_dict().items()}
    assert repr(o) == repr(t)
