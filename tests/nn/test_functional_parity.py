"""nn.functional against PyTorch: every function on the same inputs, values and
gradients (skipped where PyTorch is not installed)."""
from __future__ import annotations

import numpy as np
import pytest
from parity import Fixed, compare_call

import dispatchtorch.nn.functional as F

rng = np.random.default_rng(0)


def r(*shape, lo=None):
    a = rng.standard_normal(shape).astype(np.float32)
    return np.abs(a) + lo if lo is not None else a


def ints(hi, *shape):
    return rng.integers(0, hi, shape).astype(np.int64)


def sign(*shape):
    return Fixed(np.where(rng.random(shape) < 0.5, -1.0, 1.0).astype(np.float32))


def _away_from(x, points, gap=0.05):
    """Keep samples off the kinks of piecewise functions (their derivative jumps there)."""
    for p in points:
        x = np.where(np.abs(x - p) < gap, p + gap * 2, x).astype(np.float32)
    return x


X = _away_from(r(3, 4, 5), [0.0, 0.5, -0.5, 3.0, -3.0, 1.0, -1.0, 0.2])

CASES = [
    ("selu", (X,), {}), ("celu", (X,), {"alpha": 0.7}), ("elu", (X,), {"alpha": 1.3}),
    ("threshold", (X, 0.2, -1.0), {}), ("glu", (r(3, 6),), {"dim": -1}),
    ("glu", (r(4, 3),), {"dim": 0}),
    ("hardsigmoid", (X,), {}), ("hardswish", (X,), {}), ("hardshrink", (X,), {"lambd": 0.5}),
    ("softshrink", (X,), {"lambd": 0.5}), ("tanhshrink", (X,), {}), ("softsign", (X,), {}),
    ("prelu", (X, np.array([0.25], np.float32)), {}),
    ("prelu", (X, np.array([0.1, 0.2, 0.3, 0.4], np.float32)), {}),
    ("rrelu", (X,), {"training": False}), ("logsigmoid", (X,), {}),
    ("softplus", (X,), {"beta": 2.0, "threshold": 3.0}), ("mish", (X,), {}),
    ("hardtanh", (X,), {"min_val": -0.5, "max_val": 1.0}), ("relu6", (X * 4,), {}),
    ("leaky_relu", (X,), {"negative_slope": 0.2}),
    ("cosine_similarity", (r(4, 5), r(4, 5)), {}),
    ("cosine_similarity", (r(3, 1, 5), r(1, 4, 5)), {"dim": -1}),
    ("pairwise_distance", (r(4, 5), r(4, 5)), {}),
    ("pairwise_distance", (r(4, 5), r(4, 5)), {"p": 1.0, "keepdim": True}),
    ("pdist", (r(5, 3),), {}), ("pdist", (r(5, 3),), {"p": 3}),
    ("margin_ranking_loss", (r(6), r(6), sign(6)), {"margin": 0.3}),
    ("hinge_embedding_loss", (r(6), sign(6)), {"margin": 0.8}),
    ("soft_margin_loss", (r(6), sign(6)), {}),
    ("cosine_embedding_loss", (r(4, 5), r(4, 5), sign(4)), {"margin": 0.1}),
    ("cosine_embedding_loss", (r(4, 5), r(4, 5), sign(4)), {"reduction": "none"}),
    ("multilabel_soft_margin_loss", (r(4, 5), Fixed((rng.random((4, 5)) < .5).astype(np.float32))), {}),
    ("multi_margin_loss", (r(4, 5), ints(5, 4)), {}),
    ("multi_margin_loss", (r(4, 5), ints(5, 4)), {"p": 2, "margin": 0.5,
                                                  "weight": Fixed(r(5, lo=0.1))}),
    ("multilabel_margin_loss", (r(3, 4), np.array([[3, 0, -1, 1], [0, 1, 2, 3], [1, -1, 0, 0]])),
     {}),
    ("triplet_margin_loss", (r(4, 5), r(4, 5), r(4, 5)), {}),
    ("triplet_margin_loss", (r(4, 5), r(4, 5), r(4, 5)), {"swap": True, "p": 1}),
    ("poisson_nll_loss", (r(6), Fixed(r(6, lo=0.0) * 3)), {}),
    ("poisson_nll_loss", (r(6, lo=0.1), Fixed(r(6, lo=0.0) * 3)), {"log_input": False, "full": True}),
    ("gaussian_nll_loss", (r(4, 3), r(4, 3), r(4, 3, lo=0.1)), {}),
    ("gaussian_nll_loss", (r(4, 3), r(4, 3), r(4, 1, lo=0.1)), {"full": True}),
    ("conv3d", (r(2, 4, 5, 6, 5), r(6, 2, 3, 2, 3), r(6)),
     {"stride": (2, 1, 2), "padding": (1, 0, 1), "dilation": (1, 2, 1), "groups": 2}),
    ("conv3d", (r(1, 2, 4, 4, 4), r(3, 2, 2, 3, 3)), {"padding": "same"}),
    ("conv_transpose3d", (r(2, 4, 3, 4, 3), r(4, 3, 3, 2, 3), r(6)),
     {"stride": (2, 1, 2), "padding": (1, 0, 1), "output_padding": (1, 0, 0), "groups": 2}),
    ("conv_tbc", (r(6, 2, 3), r(3, 3, 4), r(4)), {"pad": 1}),
    ("max_pool3d", (r(2, 3, 6, 5, 7), (3, 2, 3)), {"stride": (2, 1, 2), "padding": (1, 1, 0)}),
    ("max_pool3d", (r(1, 2, 5, 5, 5), 2), {"ceil_mode": True, "return_indices": True}),
    ("avg_pool3d", (r(2, 3, 6, 5, 7), (3, 2, 3)), {"stride": (2, 1, 2), "padding": (1, 1, 0)}),
    ("avg_pool3d", (r(1, 2, 5, 5, 5), 2), {"ceil_mode": True, "count_include_pad": False}),
    ("avg_pool3d", (r(1, 2, 4, 4, 4), 2), {"divisor_override": 3}),
    ("adaptive_avg_pool3d", (r(2, 3, 7, 5, 6), (3, 2, 4)), {}),
    ("adaptive_max_pool1d", (r(2, 3, 10), 4), {"return_indices": True}),
    ("adaptive_max_pool2d", (r(2, 3, 7, 9), (3, 4)), {"return_indices": True}),
    ("adaptive_max_pool2d", (r(2, 3, 7, 9), (None, 4)), {}),
    ("adaptive_max_pool3d", (r(1, 2, 5, 6, 7), (2, 3, 4)), {"return_indices": True}),
    ("lp_pool1d", (r(2, 3, 8, lo=0.1), 2, 3), {"stride": 2}),
    ("lp_pool2d", (r(2, 3, 6, 6, lo=0.1), 3, 2), {}),
    ("lp_pool3d", (r(1, 2, 4, 4, 4, lo=0.1), 2, 2), {}),
    ("instance_norm", (r(2, 3, 5, 4),), {}),
    ("instance_norm", (r(2, 3, 6), None, None, r(3), r(3)), {}),
    ("local_response_norm", (r(2, 6, 4, 5), 3), {}),
    ("local_response_norm", (r(2, 6, 7), 4), {"alpha": 0.1, "beta": 0.5, "k": 2.0}),
    ("local_response_norm", (r(1, 5, 3, 3, 3), 2), {}),
    ("pixel_shuffle", (r(2, 8, 3, 4), 2), {}), ("pixel_unshuffle", (r(2, 2, 6, 4), 2), {}),
    ("channel_shuffle", (r(2, 6, 3, 3), 3), {}),
    ("affine_grid", (r(2, 2, 3), [2, 3, 4, 5]), {"align_corners": False}),
    ("affine_grid", (r(2, 2, 3), [2, 3, 4, 5]), {"align_corners": True}),
    ("affine_grid", (r(1, 3, 4), [1, 1, 2, 3, 4]), {"align_corners": False}),
    ("grid_sample", (r(2, 3, 5, 6), rng.uniform(-1.2, 1.2, (2, 4, 3, 2)).astype(np.float32)),
     {"align_corners": False}),
    ("grid_sample", (r(2, 3, 5, 6), rng.uniform(-1.2, 1.2, (2, 4, 3, 2)).astype(np.float32)),
     {"align_corners": True, "padding_mode": "border"}),
    ("grid_sample", (r(2, 3, 5, 6), rng.uniform(-1.6, 1.6, (2, 4, 3, 2)).astype(np.float32)),
     {"align_corners": False, "padding_mode": "reflection"}),
    ("grid_sample", (r(2, 3, 5, 6), rng.uniform(-1.6, 1.6, (2, 4, 3, 2)).astype(np.float32)),
     {"align_corners": True, "padding_mode": "reflection"}),
    ("grid_sample", (r(1, 2, 3, 4, 5), rng.uniform(-1.2, 1.2, (1, 2, 3, 2, 3)).astype(np.float32)),
     {"align_corners": False}),
    ("grid_sample", (r(1, 2, 3, 4, 5), rng.uniform(-1.6, 1.6, (1, 2, 3, 2, 3)).astype(np.float32)),
     {"align_corners": True, "padding_mode": "reflection"}),
    ("grid_sample", (r(1, 2, 3, 4, 5), rng.uniform(-1.2, 1.2, (1, 2, 3, 2, 3)).astype(np.float32)),
     {"align_corners": False, "padding_mode": "border", "mode": "nearest"}),
    ("grid_sample", (r(2, 3, 5, 6), rng.uniform(-1.2, 1.2, (2, 4, 3, 2)).astype(np.float32)),
     {"align_corners": False, "mode": "nearest"}),
    ("grid_sample", (r(2, 3, 5, 6), rng.uniform(-1.2, 1.2, (2, 4, 3, 2)).astype(np.float32)),
     {"align_corners": False, "mode": "bicubic"}),
    ("grid_sample", (r(2, 3, 5, 6), rng.uniform(-1.4, 1.4, (2, 4, 3, 2)).astype(np.float32)),
     {"align_corners": True, "mode": "bicubic", "padding_mode": "border"}),
    ("grid_sample", (r(2, 3, 5, 6), rng.uniform(-1.6, 1.6, (2, 4, 3, 2)).astype(np.float32)),
     {"align_corners": False, "mode": "bicubic", "padding_mode": "reflection"}),
    ("interpolate", (r(2, 3, 5, 6),), {"size": (7, 4), "mode": "bicubic",
                                       "align_corners": False}),
    ("interpolate", (r(2, 3, 5, 6),), {"scale_factor": 2, "mode": "bicubic",
                                       "align_corners": True}),
    ("interpolate", (r(2, 3, 7, 6),), {"size": (3, 4), "mode": "area"}),
    ("interpolate", (r(2, 3, 13, 11),), {"size": (5, 20), "mode": "bilinear",
                                         "antialias": True}),
    ("interpolate", (r(2, 3, 13, 11),), {"scale_factor": 0.4, "mode": "bicubic",
                                         "antialias": True, "align_corners": True}),
    ("interpolate", (r(2, 3, 7),), {"size": 11, "mode": "nearest-exact"}),
    ("interpolate", (r(1, 2, 3, 4, 5),), {"scale_factor": 2, "mode": "trilinear"}),
    ("embedding_bag", (ints(10, 8), r(10, 3), np.array([0, 3, 3, 6])), {"mode": "sum"}),
    ("embedding_bag", (ints(10, 8), r(10, 3), np.array([0, 3, 3, 6])), {"mode": "mean"}),
    ("embedding_bag", (ints(10, 8), r(10, 3), np.array([0, 3, 3, 6])), {"mode": "max"}),
    ("embedding_bag", (ints(10, 3, 4), r(10, 3)), {"mode": "sum", "padding_idx": 2}),
    ("embedding_bag", (ints(10, 8), r(10, 3), np.array([0, 2, 5, 8])),
     {"mode": "sum", "include_last_offset": True, "per_sample_weights": Fixed(r(8))}),
    # regressions: output_padding past the stride gives the weight gradient more windows
    # than the input has pixels (OpInfo's grouped, dilated sample)
    ("conv_transpose3d", (r(2, 2, 4, 4, 4), r(2, 2, 4, 5, 6), r(4)),
     {"stride": (3, 2, 1), "padding": (1, 2, 3), "output_padding": (2, 3, 1), "groups": 2,
      "dilation": (4, 4, 4)}),
    ("conv_transpose2d", (r(2, 2, 4, 4), r(2, 2, 5, 6)),
     {"stride": (2, 1), "padding": (2, 3), "output_padding": (3, 1), "groups": 2,
      "dilation": (4, 4)}),
    # 0-d inputs are one sample of one class; a 1-d target keeps its rank with 'none'
    ("multi_margin_loss", (np.array(0.3, np.float32), np.array(0)), {"reduction": "none"}),
    ("multi_margin_loss", (np.array(0.3, np.float32), np.array([0])), {"reduction": "none"}),
    ("multi_margin_loss", (r(5), np.array([2])), {"reduction": "none", "margin": 2.0}),
    ("multilabel_margin_loss", (np.array(0.3, np.float32), np.array(0)), {}),
    ("multilabel_margin_loss", (np.array(0.3, np.float32), np.array([-1])),
     {"reduction": "none"}),
    ("prelu", (np.array(-2.0, np.float32), np.array([0.25], np.float32)), {}),
    ("prelu", (np.array([-2.0, 1.5], np.float32), np.array(0.25, np.float32)), {}),
]




@pytest.mark.parametrize("name,args,kwargs", CASES, ids=[c[0] for c in CASES])
def test_functional_matches_pytorch(torch, name, args, kwargs):
    compare_call(torch, getattr(F, name), getattr(torch.nn.functional, name), args, kwargs,
                 rtol=1e-4, atol=1e-5)


def test_ctc_loss_matches_pytorch_through_log_softmax(torch):
    logits = r(7, 3, 5)
    targets = np.array([[1, 2, 2], [3, 4, 0], [1, 1, 1]])
    for reduction in ("mean", "sum", "none"):
        def ours(x, t):
            return F.ctc_loss(x.log_softmax(2), t, [7, 6, 7], [3, 2, 3], reduction=reduction)

        def theirs(x, t):
            return torch.nn.functional.ctc_loss(x.log_softmax(2), t, torch.tensor([7, 6, 7]),
                                                torch.tensor([3, 2, 3]), reduction=reduction)
        compare_call(torch, ours, theirs, (logits, targets), rtol=1e-4, atol=1e-5)


def test_ctc_loss_impossible_alignment_is_inf_or_zero(torch):
    lp = np.log(np.full((2, 1, 3), 1 / 3, np.float32))
    t = np.array([[1, 1, 1]])
    import dispatchtorch as dt
    ours = F.ctc_loss(dt.tensor(lp), dt.tensor(t), [2], [3], reduction="sum")
    assert ours.item() == float("inf")
    zero = F.ctc_loss(dt.tensor(lp), dt.tensor(t), [2], [3], reduction="sum", zero_infinity=True)
    assert zero.item() == 0.0


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_max_unpool_inverts_max_pool_like_pytorch(torch, dims):
    shape = (2, 3) + (6,) * dims
    x = r(*shape)
    pool = {1: "max_pool1d", 2: "max_pool2d", 3: "max_pool3d"}[dims]
    unpool = f"max_unpool{dims}d"

    def run(lib_f):
        def f(v):
            out, idx = getattr(lib_f, pool)(v, 2, return_indices=True)
            return getattr(lib_f, unpool)(out, idx, 2)
        return f
    compare_call(torch, run(F), run(torch.nn.functional), (x,))


@pytest.mark.parametrize("name,shape,kw", [
    ("fractional_max_pool2d", (2, 3, 9, 11), {"kernel_size": 3, "output_size": (4, 5)}),
    ("fractional_max_pool2d", (3, 10, 10), {"kernel_size": (2, 3), "output_ratio": (0.5, 0.6)}),
    ("fractional_max_pool3d", (1, 2, 7, 8, 9), {"kernel_size": 2, "output_size": (3, 4, 5)}),
])
def test_fractional_max_pool_matches_pytorch_for_given_samples(torch, name, shape, kw):
    dims = 3 if "3d" in name else 2
    batch = shape[0] if len(shape) == dims + 2 else 1
    samples = rng.random((batch, shape[-dims - 1], dims)).astype(np.float32)
    compare_call(torch, getattr(F, name), getattr(torch.nn.functional, name), (r(*shape),),
                 {**kw, "return_indices": True, "_random_samples": samples})


def test_linear_cross_entropy_and_conv_grads_match_pytorch(torch):
    kw = {"linear_bias": r(5), "label_smoothing": 0.1}
    compare_call(torch, F.linear_cross_entropy, torch.nn.functional.linear_cross_entropy,
                 (r(4, 3), r(5, 3), Fixed(rng.integers(0, 5, 4))), kw, rtol=1e-4, atol=1e-5)
    import dispatchtorch as dt
    x, w, g = r(2, 3, 6, 6), r(4, 3, 3, 3), r(2, 4, 3, 3)
    for which in ("input", "weight"):
        ours = getattr(dt.nn.grad, f"conv2d_{which}")
        theirs = getattr(torch.nn.grad, f"conv2d_{which}")
        a = (x.shape, dt.tensor(w)) if which == "input" else (dt.tensor(x), w.shape)
        b = (x.shape, torch.tensor(w)) if which == "input" else (torch.tensor(x), w.shape)
        np.testing.assert_allclose(ours(*a, dt.tensor(g), stride=2, padding=1).numpy(),
                                   theirs(*b, torch.tensor(g), stride=2, padding=1).numpy(),
                                   rtol=1e-4, atol=1e-5)


def test_ctc_loss_concatenated_targets_and_blank_match_pytorch(torch):
    logits = r(6, 3, 4)

    def ours(x, t):
        return F.ctc_loss(x.log_softmax(2), t, [6, 6, 5], [3, 1, 3], blank=3,
                          reduction="none", zero_infinity=True)

    def theirs(x, t):
        return torch.nn.functional.ctc_loss(x.log_softmax(2), t, torch.tensor([6, 6, 5]),
                                            torch.tensor([3, 1, 3]), blank=3,
                                            reduction="none", zero_infinity=True)
    targets = Fixed(np.array([1, 2, 2, 0, 1, 1, 0]))          # lengths 3, 1, 3
    compare_call(torch, ours, theirs, (logits, targets), rtol=1e-4, atol=1e-5)
