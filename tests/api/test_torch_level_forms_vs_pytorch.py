"""The torch-level forms of the nn functions (torch.conv2d, torch.batch_norm,
torch.embedding, torch.kl_div, ...: ATen's signatures, not nn.functional's) against
PyTorch's with the same inputs (the other torch-level names:
test_torch_level_names_vs_pytorch.py)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import dispatchtorch as dt  # noqa: E402

rng = np.random.default_rng(0)


def r(*shape):
    return rng.standard_normal(shape)


def pos(*shape):
    return rng.uniform(0.5, 2.0, shape)


def sign(*shape):
    return np.where(rng.standard_normal(shape) >= 0, 1.0, -1.0)


def _to(lib, v):
    if isinstance(v, np.ndarray):
        return lib.tensor(v)
    if isinstance(v, tuple) and v and isinstance(v[0], np.ndarray):
        return tuple(_to(lib, a) for a in v)
    return v


def _np(v):
    if isinstance(v, (tuple, list)):
        return [_np(a) for a in v]
    return v.detach().numpy() if hasattr(v, "detach") else np.asarray(v)


def _check(theirs, ours):
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs)
        for a, b in zip(theirs, ours):
            _check(a, b)
        return
    t, o = _np(theirs), _np(ours)
    assert t.shape == o.shape
    if t.dtype.kind == "f":
        assert o.dtype == t.dtype
        np.testing.assert_allclose(o, t, rtol=1e-10, atol=1e-12)
    else:
        np.testing.assert_array_equal(o, t)


IDX = np.array([[0, 2, 4], [1, 4, 3]], np.int64)
BN = (r(4, 3, 5), pos(3), r(3), r(3), pos(3))        # input, weight, bias, mean, var

# (name, args, kwargs): numpy arrays become each library's tensors
CASES = [
    ("conv1d", (r(2, 4, 9), r(6, 2, 3), r(6), 2, 1, 1, 2), {}),
    ("conv1d", (r(2, 4, 9), r(6, 4, 3)), {"padding": "same"}),
    ("conv2d", (r(2, 3, 7, 6), r(4, 3, 3, 2), r(4), 1, (1, 0), (2, 1)), {}),
    ("conv3d", (r(1, 2, 5, 4, 4), r(3, 2, 2, 2, 2), None, 1, 1), {}),
    ("conv_transpose1d", (r(2, 4, 5), r(4, 3, 3), r(3), 2, 1, 1), {}),
    ("conv_transpose2d", (r(1, 2, 4, 3), r(2, 3, 3, 3), None, 2, 1, 1, 1, 1), {}),
    ("conv_transpose3d", (r(1, 2, 3, 3, 2), r(2, 2, 2, 2, 2), r(2)), {"stride": 2}),
    ("layer_norm", (r(3, 4, 5), (4, 5), r(4, 5), r(4, 5), 1e-3, True), {}),
    ("layer_norm", (r(3, 5), [5]), {}),
    ("group_norm", (r(2, 6, 4), 3, r(6), r(6), 1e-5, True), {}),
    ("group_norm", (r(2, 4, 3, 3), 2), {}),
    ("batch_norm", (BN[0], BN[1], BN[2], BN[3], BN[4], False, 0.1, 1e-5, True), {}),
    ("batch_norm", (r(4, 3, 5), None, None, None, None, True, 0.1, 1e-5, False), {}),
    ("instance_norm", (r(2, 3, 6), r(3), r(3), None, None, True, 0.1, 1e-5, False), {}),
    ("rms_norm", (r(3, 4, 5), (5,), r(5), 1e-6), {}),
    ("rms_norm", (r(3, 4, 5), [4, 5]), {}),
    ("embedding", (r(5, 3), IDX), {}),
    ("embedding", (r(5, 3), IDX, 2, False, False), {}),
    ("dropout", (r(3, 4), 0.3, False), {}),
    ("alpha_dropout", (r(3, 4), 0.3, False), {}),
    ("feature_dropout", (r(3, 4, 2), 0.3, False), {}),
    ("feature_alpha_dropout", (r(3, 4, 2), 0.3, False), {}),
    ("max_pool1d", (r(2, 3, 9), 3), {}),
    ("max_pool1d", (r(2, 3, 9), 3, 2, 1, 2, True), {}),
    ("max_pool2d", (r(2, 3, 7, 6), 2), {}),
    ("max_pool2d", (r(2, 3, 7, 6), (3, 2), (2, 1), 1, 1, True), {}),
    ("max_pool3d", (r(1, 2, 5, 4, 4), 2), {}),
    ("max_pool3d", (r(1, 2, 5, 4, 4), 3, 2, 1, 1, False), {}),
    ("avg_pool1d", (r(2, 3, 9), 3, 2, 1, True, False), {}),
    ("adaptive_avg_pool1d", (r(2, 3, 10), 4), {}),
    ("adaptive_max_pool1d", (r(2, 3, 10), 4), {}),
    ("selu", (r(3, 4),), {}),
    ("celu", (r(3, 4),), {}),
    ("celu", (r(3, 4), 0.5), {}),
    ("threshold", (r(3, 4), 0.1, -2.0), {}),
    ("rrelu", (r(3, 4),), {}),
    ("rrelu", (r(3, 4), 0.1, 0.4, False), {}),
    ("pixel_shuffle", (r(2, 8, 3, 4), 2), {}),
    ("pixel_unshuffle", (r(2, 2, 6, 4), 2), {}),
    ("channel_shuffle", (r(2, 6, 3, 2), 3), {}),
    ("cosine_similarity", (r(4, 5), r(4, 5)), {}),
    ("cosine_similarity", (r(4, 5), r(1, 5), 1, 1e-6), {}),
    ("pairwise_distance", (r(4, 5), r(4, 5)), {}),
    ("pairwise_distance", (r(4, 5), r(4, 5), 1.0, 1e-6, True), {}),
    ("bilinear", (r(4, 3), r(4, 5), r(2, 3, 5), r(2)), {}),
    ("bilinear", (r(4, 3), r(4, 5), r(2, 3, 5)), {}),
    ("poisson_nll_loss", (r(4, 3), pos(4, 3), True, False, 1e-8, 1), {}),
    ("poisson_nll_loss", (pos(4, 3), pos(4, 3), False, True, 1e-8, 0), {}),
]
for red in (0, 1, 2):
    CASES += [
        ("kl_div", (np.log(pos(4, 3)), pos(4, 3), red), {}),
        ("kl_div", (np.log(pos(4, 3)), np.log(pos(4, 3)), red), {"log_target": True}),
        ("binary_cross_entropy_with_logits", (r(4, 3), rng.uniform(0, 1, (4, 3))),
         {"reduction": red}),
        ("binary_cross_entropy_with_logits", (r(4, 3), rng.uniform(0, 1, (4, 3)), pos(4, 3),
                                              pos(3), red), {}),
        ("cosine_embedding_loss", (r(4, 5), r(4, 5), sign(4), 0.2, red), {}),
        ("hinge_embedding_loss", (r(4, 5), sign(4, 5), 0.5, red), {}),
        ("margin_ranking_loss", (r(6), r(6), sign(6), 0.1, red), {}),
        ("triplet_margin_loss", (r(4, 5), r(4, 5), r(4, 5), 1.0, 2.0, 1e-6, True, red), {}),
        ("triplet_margin_loss", (r(4, 5), r(4, 5), r(4, 5)), {"p": 1.0, "reduction": red}),
    ]
# reduction omitted: PyTorch's Python binding reads it as 0 (none), not the schema's 1
CASES += [("kl_div", (np.log(pos(4, 3)), pos(4, 3)), {}),
          ("margin_ranking_loss", (r(6), r(6), sign(6)), {}),
          ("binary_cross_entropy_with_logits", (r(4, 3), rng.uniform(0, 1, (4, 3))), {}),
          ("cosine_embedding_loss", (r(4, 5), r(4, 5), sign(4)), {}),
          ("hinge_embedding_loss", (r(4, 5), sign(4, 5)), {}),
          ("triplet_margin_loss", (r(4, 5), r(4, 5), r(4, 5)), {})]


def _ids():
    seen = {}
    for name, _, _ in CASES:
        seen[name] = seen.get(name, -1) + 1
        yield f"{name}-{seen[name]}"


@pytest.mark.parametrize("name,args,kwargs", CASES, ids=list(_ids()))
def test_same_result_as_pytorch(name, args, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = getattr(torch, name)(*[_to(torch, a) for a in args], **kwargs)
        ours = getattr(dt, name)(*[_to(dt, a) for a in args], **kwargs)
    _check(theirs, ours)


def test_embedding_padding_idx_gradient():
    w, idx = r(5, 3), IDX
    grads = []
    for lib in (torch, dt):
        wt = lib.tensor(w, requires_grad=True)
        lib.embedding(wt, lib.tensor(idx), 4).sum().backward()
        grads.append(wt.grad)
    _check(*grads)
    assert np.all(_np(grads[1])[4] == 0) and np.all(_np(grads[1])[0] == 1)


def test_batch_norm_updates_running_stats_as_pytorch():
    x, mean, var = r(6, 3, 4), r(3), pos(3)
    stats = []
    for lib in (torch, dt):
        m, v = lib.tensor(mean), lib.tensor(var)
        out = lib.batch_norm(lib.tensor(x), None, None, m, v, True, 0.2, 1e-5, False)
        stats.append((out, m, v))
    _check(stats[0], stats[1])


def test_max_pool_returns_values_only():
    out = dt.max_pool2d(dt.tensor(r(1, 1, 4, 4)), 2)
    assert isinstance(out, dt.Tensor) and tuple(out.shape) == (1, 1, 2, 2)


def test_in_place_activations_match_and_return_input():
    x = r(3, 4)
    for name, extra in (("selu_", ()), ("celu_", (0.7,)), ("threshold_", (0.2, 5.0)),
                        ("rrelu_", (0.1, 0.3, False))):
        a, b = torch.tensor(x), dt.tensor(x)
        ra, rb = getattr(torch, name)(a, *extra), getattr(dt, name)(b, *extra)
        assert rb is b
        _check((ra, a), (rb, b))


@pytest.mark.parametrize("name", ["dropout", "alpha_dropout", "feature_dropout",
                                  "feature_alpha_dropout"])
def test_dropout_family_statistics(name):
    x = dt.ones((400, 50, 2), dtype=dt.float64)
    p = 0.3
    assert np.array_equal(getattr(dt, name)(x, p, False).numpy(), x.numpy())
    out = getattr(dt, name)(x, p, True).numpy()
    assert out.shape == (400, 50, 2)
    values = np.unique(np.round(out, 12))
    assert len(values) == 2                   # dropped and kept values only
    if name in ("feature_dropout", "feature_alpha_dropout"):
        assert np.array_equal(out[..., 0], out[..., 1])    # one draw per (n, c)
    if name.endswith("alpha_dropout"):       # SELU's self-normalising map keeps mean 0, var 1
        z = dt.tensor(rng.standard_normal((200000, 2)))
        y = getattr(dt, name)(z, p, True).numpy()
        assert abs(y.mean()) < 0.02 and abs(y.var() - 1) < 0.03
    else:                                     # kept values scaled by 1 / (1 - p)
        np.testing.assert_allclose(values, [0.0, 1 / (1 - p)], rtol=1e-10)
        kept = (out != 0).mean()
        assert abs(kept - (1 - p)) < 0.02


@pytest.mark.parametrize("name", ["dropout_", "alpha_dropout_", "feature_dropout_",
                                  "feature_alpha_dropout_"])
def test_dropout_in_place_forms(name):
    x = dt.ones((100, 20, 2), dtype=dt.float64)
    assert getattr(dt, name)(x, 0.5, True) is x
    assert len(np.unique(np.round(x.numpy(), 12))) == 2
    y = dt.ones((3, 2), dtype=dt.float64)
    assert getattr(dt, name)(y, 0.5, False) is y and np.all(y.numpy() == 1)


def test_feature_dropout_needs_two_dims():
    for lib in (torch, dt):
        with pytest.raises(RuntimeError, match="at least 2 dimensions"):
            lib.feature_dropout(lib.ones(5, dtype=lib.float64), 0.5, True)


def test_rrelu_training_slopes_in_range():
    x = dt.tensor(-np.ones((1000,)))
    out = dt.rrelu(x, 0.1, 0.3, True).numpy()
    assert np.all((out <= -0.1 + 1e-12) & (out >= -0.3 - 1e-12)) and len(np.unique(out)) > 100
    g1, g2 = dt.Generator().manual_seed(3), dt.Generator().manual_seed(3)
    np.testing.assert_array_equal(dt.rrelu(x, 0.1, 0.3, True, g1).numpy(),
                                  dt.rrelu(x, 0.1, 0.3, True, g2).numpy())
    pos_x = dt.tensor(np.ones(10))
    assert np.all(dt.rrelu(pos_x, 0.1, 0.3, True).numpy() == 1)


def test_reduction_is_an_int_and_reduces_only_for_mean_and_sum():
    """ATen's apply_loss_reduction: 1 mean, 2 sum, any other int none (PyTorch's kl_div(...,
    3) is elementwise); a non-int is the parser's TypeError."""
    x, y = r(3), pos(3)
    for red in (3, -1):
        np.testing.assert_allclose(dt.kl_div(dt.tensor(x), dt.tensor(y), red).numpy(),
                                   torch.kl_div(torch.tensor(x), torch.tensor(y), red).numpy())
    for lib in (torch, dt):
        with pytest.raises(TypeError, match="argument 'reduction' \\(position 3\\) must be int"):
            lib.kl_div(lib.ones(3), lib.ones(3), "mean")


GRAD_CASES = [
    ("conv2d", (r(2, 3, 5, 5), r(4, 3, 3, 3), r(4), 1, 1)),
    ("layer_norm", (r(3, 4, 5), (4, 5), r(4, 5), r(4, 5))),
    ("group_norm", (r(2, 6, 4), 3, r(6), r(6))),
    ("batch_norm", (r(4, 3, 5), pos(3), r(3), None, None, True, 0.1, 1e-5, False)),
    ("kl_div", (np.log(pos(4, 3)), pos(4, 3), 1)),
    ("triplet_margin_loss", (r(4, 5), r(4, 5), r(4, 5), 1.0, 2.0, 1e-6, False, 2)),
    ("bilinear", (r(4, 3), r(4, 5), r(2, 3, 5), r(2))),
]


@pytest.mark.parametrize("name,args", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradients_match_pytorch(name, args):
    grads = []
    for lib in (torch, dt):
        leaves = [lib.tensor(a, requires_grad=True) if isinstance(a, np.ndarray) else a
                  for a in args]
        getattr(lib, name)(*leaves).sum().backward()
        grads.append([a.grad for a in leaves if isinstance(a, lib.Tensor)])
    _check(grads[0], grads[1])
