"""The remaining new names: in-place activation forms, deprecated aliases, the
*_with_indices pools, the random layers (checked by their statistics), and the
layers whose parity needs a special setup."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import assert_close, copy_params, to_np
from parity import Fixed, compare_call

import dispatchtorch as dt
import dispatchtorch.nn as nn
import dispatchtorch.nn.functional as F

rng = np.random.default_rng(0)


def r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("name,args", [
    ("elu_", (1.2,)), ("hardtanh_", (-0.5, 0.5)), ("leaky_relu_", (0.2,)), ("selu_", ()),
    ("celu_", (0.7,)), ("threshold_", (0.1, -2.0)), ("relu_", ())])
def test_inplace_activations_match_pytorch(torch, name, args):
    x = r(3, 4)
    ours, theirs = dt.tensor(x), torch.tensor(x)
    out_o = getattr(F, name)(ours, *args)
    out_t = getattr(torch.nn.functional, name)(theirs, *args)
    assert out_o is ours
    assert_close(ours, out_t, 1e-6, 1e-6)


def test_rrelu_inplace_eval_matches_pytorch(torch):
    x = r(3, 4)
    ours, theirs = dt.tensor(x), torch.tensor(x)
    F.rrelu_(ours, 0.1, 0.3, False)
    torch.nn.functional.rrelu_(theirs, 0.1, 0.3, False)
    assert_close(ours, theirs, 1e-6, 1e-6)


@pytest.mark.parametrize("name,kw", [
    ("upsample", {"scale_factor": 2, "mode": "bilinear", "align_corners": False}),
    ("upsample_nearest", {"size": (5, 7)}), ("upsample_bilinear", {"scale_factor": 2})])
def test_deprecated_upsample_names_match_pytorch(torch, name, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare_call(torch, getattr(F, name), getattr(torch.nn.functional, name),
                     (r(2, 3, 4, 5),), kw, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name,shape,args", [
    ("max_pool1d_with_indices", (2, 3, 9), (3, 2)),
    ("max_pool2d_with_indices", (2, 3, 6, 7), (3, 2, 1)),
    ("max_pool3d_with_indices", (1, 2, 5, 6, 5), (2,)),
    ("adaptive_max_pool1d_with_indices", (2, 3, 9), (4,)),
    ("adaptive_max_pool2d_with_indices", (2, 3, 6, 7), ((3, 2),)),
    ("adaptive_max_pool3d_with_indices", (1, 2, 5, 6, 5), (2,)),
    ("native_channel_shuffle", (2, 6, 2, 2), (3,))])
def test_with_indices_forms_match_pytorch(torch, name, shape, args):
    compare_call(torch, getattr(F, name), getattr(torch.nn.functional, name),
                 (r(*shape),) + args, grad=name != "native_channel_shuffle")


def test_constants_and_assert_int_or_pair(torch):
    assert F.GRID_SAMPLE_INTERPOLATION_MODES == torch.nn.functional.GRID_SAMPLE_INTERPOLATION_MODES
    assert F.GRID_SAMPLE_PADDING_MODES == torch.nn.functional.GRID_SAMPLE_PADDING_MODES
    F.assert_int_or_pair(3, "k", "{} bad")
    with pytest.raises(AssertionError, match="k bad"):
        F.assert_int_or_pair((1, 2, 3), "k", "{} bad")


@pytest.mark.parametrize("fn,feature", [(F.dropout1d, True), (F.dropout2d, True),
                                        (F.dropout3d, True)])
def test_channel_dropout_zeroes_whole_channels_and_rescales(fn, feature):
    dims = {F.dropout1d: 1, F.dropout2d: 2, F.dropout3d: 3}[fn]
    dt.manual_seed(0)
    x = dt.ones((64, 32) + (3,) * dims)
    y = to_np(fn(x, 0.25, True))
    per_channel = y.reshape(64, 32, -1)
    assert np.all((per_channel == 0).all(-1) | np.isclose(per_channel, 1 / 0.75).all(-1))
    assert abs((per_channel[..., 0] == 0).mean() - 0.25) < 0.03
    assert to_np(fn(x, 0.25, False)).tolist() == to_np(x).tolist()


@pytest.mark.parametrize("fn", [F.alpha_dropout, F.feature_alpha_dropout])
def test_alpha_dropout_keeps_zero_mean_unit_variance(fn):
    dt.manual_seed(0)
    x = dt.randn(400, 50, 4)
    y = to_np(fn(x, 0.3, True))
    assert abs(y.mean()) < 0.05 and abs(y.std() - 1) < 0.05
    assert np.allclose(to_np(fn(x, 0.3, False)), to_np(x))


def test_rrelu_training_slopes_lie_between_lower_and_upper():
    dt.manual_seed(0)
    x = -dt.rand(1000) - 0.1
    y = to_np(F.rrelu(x, 0.1, 0.3, training=True)) / to_np(x)
    assert y.min() >= 0.1 and y.max() <= 0.3 and y.std() > 0.03


def test_gumbel_softmax_soft_and_hard():
    dt.manual_seed(0)
    logits = dt.tensor(np.log([[0.7, 0.2, 0.1]] * 4000).astype(np.float32), requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    assert np.allclose(to_np(soft.sum(-1)), 1, atol=1e-5)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    h = to_np(hard)
    assert set(np.unique(h)) <= {0.0, 1.0} and np.all(h.sum(-1) == 1)
    assert abs(h[:, 0].mean() - 0.7) < 0.03          # Gumbel-max samples the categorical
    (hard * dt.arange(3).float()).sum().backward()
    assert logits.grad is not None and np.isfinite(to_np(logits.grad)).all()


def test_sync_batch_norm_is_batch_norm_in_one_process(torch):
    o, t = nn.SyncBatchNorm(3), torch.nn.SyncBatchNorm(3)
    compare_call(torch, o, t, (r(4, 3, 5),), rtol=1e-5, atol=1e-5)
    assert_close(o.running_mean, t.running_mean)
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.BatchNorm2d(3)))
    assert isinstance(converted[0], nn.SyncBatchNorm)


def test_ctc_and_linear_cross_entropy_layers_match_pytorch(torch):
    x = r(6, 2, 4)
    targets = Fixed(np.array([[1, 2], [3, 3]]))

    def ours(v, tg):
        return nn.CTCLoss(blank=0)(v.log_softmax(2), tg, [6, 5], [2, 2])

    def theirs(v, tg):
        return torch.nn.CTCLoss(blank=0)(v.log_softmax(2), tg, torch.tensor([6, 5]),
                                         torch.tensor([2, 2]))
    compare_call(torch, ours, theirs, (x, targets), rtol=1e-4, atol=1e-5)
    torch.manual_seed(0)
    t = torch.nn.LinearCrossEntropyLoss(3, 5, bias=True, label_smoothing=0.1)
    o = nn.LinearCrossEntropyLoss(3, 5, bias=True, label_smoothing=0.1)
    copy_params(t, o)
    compare_call(torch, o, t, (r(4, 3), Fixed(rng.integers(0, 5, 4))), rtol=1e-4, atol=1e-5)


def test_fractional_max_pool_layer_matches_pytorch(torch):
    samples = rng.random((2, 3, 2)).astype(np.float32)
    o = nn.FractionalMaxPool2d(2, output_size=(3, 4), _random_samples=dt.tensor(samples))
    t = torch.nn.FractionalMaxPool2d(2, output_size=(3, 4),
                                     _random_samples=torch.tensor(samples))
    compare_call(torch, o, t, (r(2, 3, 7, 8),))


def test_container_embedding_bag_from_pretrained_and_uninitialized_buffer(torch):
    with pytest.warns(UserWarning, match="deprecated"):
        c = nn.Container(a=nn.Linear(2, 2))
    assert list(dict(c.named_children())) == ["a"]
    w = r(5, 3)
    o = nn.EmbeddingBag.from_pretrained(dt.tensor(w), mode="sum")
    t = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(w), mode="sum")
    idx = np.array([[0, 4], [2, 2]])
    assert_close(o(dt.tensor(idx)), t(torch.tensor(idx)))
    assert not o.weight.requires_grad
    b = nn.UninitializedBuffer()
    b.materialize((2,))
    assert type(b) is dt.Tensor and tuple(b.shape) == (2,)
    assert nn.factory_kwargs({"device": "cpu", "factory_kwargs": {"dtype": dt.float64}}) == \
        {"device": "cpu", "dtype": dt.float64}


def test_modules_utils_helpers_match_pytorch(torch):
    from dispatchtorch.nn.modules import utils as ours
    theirs = torch.nn.modules.utils
    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for v in (3, (1, 2), [4]):
            assert getattr(ours, name)(v) == getattr(theirs, name)(v)
    assert ours._reverse_repeat_tuple((1, 2), 2) == theirs._reverse_repeat_tuple((1, 2), 2)
    assert ours._list_with_default([None, 3], [1, 2, 5, 6]) == \
        theirs._list_with_default([None, 3], [1, 2, 5, 6])
    sd_o = {"module.a": 1, "module.b.c": 2, "d": 3}
    sd_t = dict(sd_o)
    ours.consume_prefix_in_state_dict_if_present(sd_o, "module.")
    theirs.consume_prefix_in_state_dict_if_present(sd_t, "module.")
    assert sd_o == sd_t


@pytest.mark.parametrize("kw", [{"max_norm": 1.0}, {"max_norm": 0.5, "norm_type": 1.0},
                                {"scale_grad_by_freq": True},
                                {"scale_grad_by_freq": True, "padding_idx": 2}])
def test_embedding_max_norm_and_scale_grad_by_freq_match_pytorch(torch, kw):
    w = r(6, 3) * 2
    idx = np.array([[0, 2, 2], [5, 2, 0]])
    for lib_bag in (False, True) if "scale_grad_by_freq" not in kw else (False,):
        wo, wt = dt.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
        if lib_bag:
            bag_kw = {k: v for k, v in kw.items()}
            yo = F.embedding_bag(dt.tensor(idx), wo, mode="sum", **bag_kw)
            yt = torch.nn.functional.embedding_bag(torch.tensor(idx), wt, mode="sum", **bag_kw)
        else:
            yo = F.embedding(dt.tensor(idx), wo, **kw)
            yt = torch.nn.functional.embedding(torch.tensor(idx), wt, **kw)
        assert_close(yo, yt, 1e-5, 1e-6)
        assert_close(wo.detach(), wt.detach(), 1e-5, 1e-6)       # renormalised in place
        seed = r(*yt.shape)
        (yo * dt.tensor(seed)).sum().backward()
        (yt * torch.tensor(seed)).sum().backward()
        assert_close(wo.grad, wt.grad, 1e-5, 1e-6)
