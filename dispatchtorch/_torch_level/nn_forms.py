"""The torch-level forms of the nn functions (torch.conv2d, torch.layer_norm,
torch.embedding, torch.dropout, torch.kl_div, ...) with ATen's signatures, which differ
from torch.nn.functional's: weight first in embedding, the batch_norm argument order,
dropout(input, p, train), losses' reduction as an int (0 none, 1 mean, 2 sum), pooling's
values only. Each calls the nn.functional implementation."""
from __future__ import annotations

import numbers

from .. import ops as _ops
from .._tensor import Tensor
from ..nn import functional as F

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(reduction, fn, pos):
    """ATen's int reduction as F's string: 1 mean, 2 sum, and any other int none (ATen's
    apply_loss_reduction reduces only for Mean and Sum); a non-int is the parser's
    TypeError."""
    if isinstance(reduction, bool) or not isinstance(reduction, numbers.Integral):
        raise TypeError(f"{fn}(): argument 'reduction' (position {pos}) must be int, not "
                        f"{type(reduction).__name__}")
    return _REDUCTIONS.get(int(reduction), "none")


# convolutions, shuffles, distances, bilinear, avg pools: the same signature as F's

conv1d, conv2d, conv3d = F.conv1d, F.conv2d, F.conv3d
conv_transpose1d, conv_transpose2d, conv_transpose3d = (
    F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)
pixel_shuffle, pixel_unshuffle, channel_shuffle = (
    F.pixel_shuffle, F.pixel_unshuffle, F.channel_shuffle)
cosine_similarity, pairwise_distance, bilinear = (
    F.cosine_similarity, F.pairwise_distance, F.bilinear)
avg_pool1d, adaptive_avg_pool1d = F.avg_pool1d, F.adaptive_avg_pool1d
hardshrink, prelu = F.hardshrink, F.prelu


# normalisation

def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    return F.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return F.rms_norm(input, normalized_shape, weight, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """ATen's embedding: weight first; padding_idx < 0 (or past the table) is no padding."""
    if isinstance(padding_idx, bool) or not isinstance(padding_idx, numbers.Integral):
        raise TypeError(f"embedding(): argument 'padding_idx' (position 3) must be int, not "
                        f"{type(padding_idx).__name__}")
    num = weight.shape[0] if isinstance(weight, Tensor) and weight.dim() else 0
    pad = padding_idx if padding_idx is not None and 0 <= padding_idx < num else None
    return F.embedding(indices, weight, pad, scale_grad_by_freq=scale_grad_by_freq,
                       sparse=sparse)


# the dropout family: (input, p, train), and the in-place forms

def _dropout_prelude(fn, input, p, train, feature, inplace):
    """ATen's _dropout_impl before any draw, with its parser's and its own errors:
    (True, result) where it returns early (input itself for no dropout, zeros for p=1),
    else (False, None)."""
    if not isinstance(p, numbers.Real):                  # a bool is a float to the parser
        raise TypeError(f"{fn}(): argument 'p' (position 2) must be float, not "
                        f"{type(p).__name__}")
    if not isinstance(train, bool):
        raise TypeError(f"{fn}(): argument 'train' (position 3) must be bool, not "
                        f"{type(train).__name__}")
    if not 0.0 <= p <= 1.0:                               # C++ prints the double as %g
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")
    if p == 0 or not train or input.numel() == 0:
        return True, input
    if p == 1:
        return True, (input.mul_(0) if inplace else input * 0)
    if feature and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return False, None


def _dropout_form(name, run, feature=False, inplace=False):
    def form(input, p, train):
        done, out = _dropout_prelude(name, input, p, train, feature, inplace)
        return out if done else run(input, p, inplace)
    form.__name__ = form.__qualname__ = name
    form.__doc__ = f"ATen's {name}(input, p, train)."
    return form


def _feature_noise_dropout(input, p, inplace):
    """One Bernoulli draw per (n, c) of an (N, C, *) input, as ATen's feature_dropout."""
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    noise = _ops.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1.0 - p)
    out = input * (noise / (1.0 - p))
    return input.copy_(out) if inplace else out


dropout = _dropout_form("dropout", lambda x, p, inplace: F.dropout(x, p, True, inplace))
dropout_ = _dropout_form("dropout_", lambda x, p, inplace: F.dropout(x, p, True, inplace),
                         inplace=True)
alpha_dropout = _dropout_form("alpha_dropout",
                              lambda x, p, inplace: F.alpha_dropout(x, p, True, inplace))
alpha_dropout_ = _dropout_form("alpha_dropout_",
                               lambda x, p, inplace: F.alpha_dropout(x, p, True, inplace),
                               inplace=True)
feature_dropout = _dropout_form("feature_dropout", _feature_noise_dropout, feature=True)
feature_dropout_ = _dropout_form("feature_dropout_", _feature_noise_dropout, feature=True,
                                 inplace=True)
feature_alpha_dropout = _dropout_form(
    "feature_alpha_dropout", lambda x, p, inplace: F.feature_alpha_dropout(x, p, True, inplace),
    feature=True)
feature_alpha_dropout_ = _dropout_form(
    "feature_alpha_dropout_", lambda x, p, inplace: F.feature_alpha_dropout(x, p, True, inplace),
    feature=True, inplace=True)


# pooling: values only (adaptive_max_pool1d: values and indices, as ATen)

def pool_stride(stride):
    """ATen's int[] stride: an empty list means the kernel size (F's None); 0 stays 0,
    for F to refuse."""
    return None if isinstance(stride, (tuple, list)) and len(stride) == 0 else stride


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, pool_stride(stride), padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool2d(input, kernel_size, pool_stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool3d(input, kernel_size, pool_stride(stride), padding, dilation, ceil_mode)


def adaptive_max_pool1d(input, output_size):
    return tuple(F.adaptive_max_pool1d(input, output_size, return_indices=True))


# activations

def selu(input):
    return F.selu(input)


def selu_(input):
    return F.selu_(input)


def celu(input, alpha=1.0):
    return F.celu(input, alpha)


def celu_(input, alpha=1.0):
    return F.celu_(input, alpha)


def threshold(input, threshold, value):
    return F.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    return F.threshold_(input, threshold, value)


def _rrelu(input, lower, upper, training, generator, inplace):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if generator is None or not training:
        return F.rrelu(input, lower, upper, training, inplace)
    slope = _ops.empty(input.shape, dtype=input.dtype, device=input.device).uniform_(
        lower, upper, generator=generator)
    out = _ops.where(input >= 0, input, input * slope)
    return input.copy_(out) if inplace else out


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return _rrelu(input, lower, upper, training, generator, False)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return _rrelu(input, lower, upper, training, generator, True)


# losses: reduction as ATen's int. The schemas' default is 1 (mean), but PyTorch's Python
# binding of torch.kl_div / torch.margin_ranking_loss / ... reads an omitted reduction as 0
# (none: an elementwise loss), so the default here is 0, as a PyTorch program sees it

def kl_div(input, target, reduction=0, *, log_target=False):
    # ATen's mean is over every element, without F's "use batchmean" warning
    red = _reduction(reduction, "kl_div", 3)
    loss = F.kl_div(input, target, reduction="none" if red == "mean" else red,
                    log_target=log_target)
    return loss.mean() if red == "mean" else loss


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    red = _reduction(reduction, "binary_cross_entropy_with_logits", 5)
    return F.binary_cross_entropy_with_logits(input, target, weight, pos_weight=pos_weight,
                                              reduction=red)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    red = _reduction(reduction, "cosine_embedding_loss", 5)
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=red)


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    red = _reduction(reduction, "hinge_embedding_loss", 4)
    return F.hinge_embedding_loss(input, target, margin, reduction=red)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    red = _reduction(reduction, "margin_ranking_loss", 5)
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=red)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False,
                        reduction=0):
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction(reduction, "triplet_margin_loss", 8))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction, "poisson_nll_loss", 6))


NAMES = (
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "layer_norm", "group_norm", "batch_norm", "instance_norm", "rms_norm", "embedding",
    "dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_dropout",
    "feature_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_",
    "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "adaptive_avg_pool1d",
    "adaptive_max_pool1d", "selu", "selu_", "celu", "celu_", "threshold", "threshold_",
    "rrelu", "rrelu_", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
    "cosine_similarity", "pairwise_distance", "kl_div", "binary_cross_entropy_with_logits",
    "cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss",
    "triplet_margin_loss", "poisson_nll_loss", "bilinear", "hardshrink", "prelu",
)
PUBLIC = {name: globals()[name] for name in NAMES}
