"""The torch-level nn forms (and the nn.functional checks they share) called at their
edges and wrongly, against PyTorch: ATen's dropout prelude (its parser's types, the
RuntimeError for p outside [0, 1], input itself without dropout, zeros for p = 1 even
where a feature dropout would refuse the rank), max_pool's stride 0 (not the kernel
size), embedding's int padding_idx, rrelu's bounds, layer_norm / rms_norm's
normalized_shape, batch_norm without running stats in eval, celu's alpha 0; the losses'
int reduction (a non-int is the parser's TypeError, an int other than 1 / 2 is none)."""
from __future__ import annotations


import numpy as np
import pytest

torch = pytest.importorskip("torch")
import dispatchtorch as dt  # noqa: E402
from raised_as_pytorch import raised as _raised  # noqa: E402

V = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
E = np.random.default_rng(1).standard_normal((10, 3)).astype(np.float32)
P = np.random.default_rng(2).uniform(0.1, 1.0, (2, 3, 4)).astype(np.float32)

RAISES = {
    "dropout_p_range": lambda L: L.dropout(L.tensor(V), 1.5, True),
    "dropout_p_range_eval": lambda L: L.dropout(L.tensor(V), -0.1, False),
    "alpha_dropout_p_printed_as_double": lambda L: L.alpha_dropout(L.tensor(V), 2.0, False),
    "feature_dropout_p_range": lambda L: L.feature_dropout(L.tensor(V), 2.0, False),
    "dropout_train_int": lambda L: L.dropout(L.tensor(V), 0.5, 1),
    "dropout_train_none": lambda L: L.dropout(L.tensor(V), 0.5, None),
    "dropout_p_none": lambda L: L.dropout(L.tensor(V), None, True),
    "feature_alpha_dropout_1d": lambda L: L.feature_alpha_dropout(L.ones(3), 0.5, True),
    "feature_dropout_1d": lambda L: L.feature_dropout_(L.ones(3), 0.5, True),
    "max_pool1d_stride_0": lambda L: L.max_pool1d(L.tensor(V), 2, 0),
    "embedding_padding_none": lambda L: L.embedding(L.tensor(E), L.tensor([1, 2]), None),
    "rrelu_bounds": lambda L: L.rrelu(L.tensor(V), 0.3, 0.1, False),
    "rrelu_bounds_training": lambda L: L.rrelu(L.tensor(V), 0.3, 0.1, True),
    "F_rrelu_bounds": lambda L: L.nn.functional.rrelu(L.tensor(V), 0.3, 0.1, True),
    "layer_norm_int_shape": lambda L: L.layer_norm(L.tensor(V), 4),
    "F_rms_norm_int_shape": lambda L: L.nn.functional.rms_norm(L.tensor(V), 4),
    "F_rms_norm_shape": lambda L: L.nn.functional.rms_norm(L.tensor(V), [3]),
    "rms_norm_shape": lambda L: L.rms_norm(L.tensor(V), [2, 3]),
    "batch_norm_eval_no_mean": lambda L: L.batch_norm(L.tensor(V), None, None, None, None,
                                                      False, 0.1, 1e-5, False),
    "F_batch_norm_eval_no_var": lambda L: L.nn.functional.batch_norm(
        L.tensor(V), L.zeros(3), None, training=False),
    "celu_alpha_0": lambda L: L.celu(L.tensor(V), 0.0),
    "kl_div_reduction_str": lambda L: L.kl_div(L.tensor(V), L.tensor(V), "mean"),
    "kl_div_reduction_bool": lambda L: L.kl_div(L.tensor(V), L.tensor(V), True),
    "bce_logits_reduction_float": lambda L: L.binary_cross_entropy_with_logits(
        L.tensor(V), L.tensor(V), None, None, 1.0),
    "triplet_reduction_none": lambda L: L.triplet_margin_loss(
        L.tensor(E), L.tensor(E), L.tensor(E), 1.0, 2.0, 1e-6, False, None),
}

VALUES = {
    "feature_dropout_1d_p1": lambda L: L.feature_dropout(L.ones(3), 1.0, True),
    "feature_alpha_dropout_1d_p1": lambda L: L.feature_alpha_dropout(L.ones(3), 1.0, True),
    "alpha_dropout_1d_p1": lambda L: L.alpha_dropout(L.ones(3), 1.0, True),
    "dropout_p_bool": lambda L: L.dropout(L.tensor(V), True, True),
    "dropout_eval": lambda L: L.dropout(L.tensor(V), 0.5, False),
    "feature_dropout_empty": lambda L: L.feature_dropout(L.ones(0), 0.5, True),
    "max_pool1d_empty_stride": lambda L: L.max_pool1d(L.tensor(V), 2, ()),
    "max_pool1d_stride_1": lambda L: L.max_pool1d(L.tensor(V), 2, 1),
    "max_pool1d_with_indices_default": lambda L: L.max_pool1d_with_indices(L.tensor(V), 2)[1],
    "embedding_negative_padding": lambda L: L.embedding(L.tensor(E), L.tensor([1, 2]), -1),
    "rrelu_equal_bounds": lambda L: L.rrelu(L.tensor(V), 0.2, 0.2, True),
    "kl_div_reduction_3": lambda L: L.kl_div(L.tensor(V), L.tensor(P), 3),
    "hinge_reduction_minus_1": lambda L: L.hinge_embedding_loss(L.tensor(V), L.tensor(V).sign(),
                                                                1.0, -1),
    "poisson_nll_reduction_5": lambda L: L.poisson_nll_loss(L.tensor(V), L.tensor(P), True,
                                                            False, 1e-8, 5),
    "kl_div_reduction_sum": lambda L: L.kl_div(L.tensor(V), L.tensor(P), 2),
}


@pytest.mark.parametrize("name", list(RAISES))
def test_raises_as_pytorch(name):
    assert _raised(dt, RAISES[name]) == _raised(torch, RAISES[name])


@pytest.mark.parametrize("name", list(VALUES))
def test_values_as_pytorch(name):
    ours, theirs = VALUES[name](dt), VALUES[name](torch)
    assert ours.dtype.is_floating_point == theirs.dtype.is_floating_point
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6)


def test_no_dropout_returns_input_itself():
    for lib in (torch, dt):
        x = lib.tensor(V)
        assert lib.dropout(x, 0.5, False) is x and lib.feature_dropout(x, 0.0, True) is x
        y = lib.tensor(V)
        assert lib.dropout_(y, 1.0, True) is y and not y.any()
