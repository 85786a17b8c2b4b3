"""The torch-level forms of the nn functions (torch.conv2d, torch.layer_norm,
torch.embedding, torch.dropout, torch.kl_div, ...) with ATen's signatures, which differ
from torch.nn.functional's: weight first in embedding, the batch_norm argument order,
dropout(input, p, train), losses' reduction as an int (0 none, 1 mean, 2 sum), pooling's
values only. Each calls the nn.functional implementation. Also a few small torch.* names:
detach, empty_strided, unravel_index, the deterministic-algorithms flag, get_device,
is_storage, set_default_tensor_type. attach() binds them into the dispatchtorch namespace."""
from __future__ import annotations

import numbers
import warnings

from . import _dtype as D
from . import ops as _ops
from ._tensor import Tensor
from .nn import functional as F

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(reduction):
    """ATen's int reduction (at::Reduction: 0 none, 1 mean, 2 sum) as F's string."""
    if isinstance(reduction, bool) or reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction "
                         "(expected 0 (none), 1 (mean) or 2 (sum))")
    return _REDUCTIONS[reduction]


# convolutions, shuffles, distances, bilinear, avg pools: the same signature as F's

conv1d, conv2d, conv3d = F.conv1d, F.conv2d, F.conv3d
conv_transpose1d, conv_transpose2d, conv_transpose3d = (
    F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)
pixel_shuffle, pixel_unshuffle, channel_shuffle = (
    F.pixel_shuffle, F.pixel_unshuffle, F.channel_shuffle)
cosine_similarity, pairwise_distance, bilinear = (
    F.cosine_similarity, F.pairwise_distance, F.bilinear)
avg_pool1d, adaptive_avg_pool1d = F.avg_pool1d, F.adaptive_avg_pool1d


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
    num = weight.shape[0] if isinstance(weight, Tensor) and weight.dim() else 0
    pad = padding_idx if padding_idx is not None and 0 <= padding_idx < num else None
    return F.embedding(indices, weight, pad, scale_grad_by_freq=scale_grad_by_freq,
                       sparse=sparse)


# the dropout family: (input, p, train), and the in-place forms

def dropout(input, p, train):
    return F.dropout(input, p, train)


def dropout_(input, p, train):
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout(input, p, train):
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    return F.alpha_dropout(input, p, train, inplace=True)


def _feature_dropout(input, p, train, inplace):
    """ATen's feature_dropout: one Bernoulli draw per (n, c) of an (N, C, *) input."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not train or p == 0.0 or input.numel() == 0:
        return input
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if p == 1.0:
        out = input * 0.0
    else:
        shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
        noise = _ops.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1.0 - p)
        out = input * (noise / (1.0 - p))
    return input.copy_(out) if inplace else out


def feature_dropout(input, p, train):
    return _feature_dropout(input, p, train, False)


def feature_dropout_(input, p, train):
    return _feature_dropout(input, p, train, True)


def feature_alpha_dropout(input, p, train):
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    return F.feature_alpha_dropout(input, p, train, inplace=True)


# pooling: values only (adaptive_max_pool1d: values and indices, as ATen)

def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool2d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool3d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


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
    red = _reduction(reduction)
    loss = F.kl_div(input, target, reduction="none" if red == "mean" else red,
                    log_target=log_target)
    return loss.mean() if red == "mean" else loss


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    return F.binary_cross_entropy_with_logits(input, target, weight, pos_weight=pos_weight,
                                              reduction=_reduction(reduction))


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False,
                        reduction=0):
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction))


# small torch.* names

def detach(input):
    return input.detach()


def detach_(input):
    return input.detach_()


def get_device(input):
    """The device index: -1 for a CPU tensor."""
    return input.get_device()


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialised tensor with the given strides: a view of a storage just large
    enough for them."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(size)} sizes, "
                           f"{len(stride)} strides")
    extent = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    out = _ops.empty(extent, dtype=dtype, device=device).as_strided(size, stride)
    return out.requires_grad_() if requires_grad else out


def unravel_index(indices, shape):
    """The coordinates of flat `indices` in a tensor of `shape`, one tensor per dim
    (as PyTorch's: negative indices wrap)."""
    if not isinstance(indices, Tensor) or indices.dtype.is_floating_point or \
            indices.dtype.is_complex or indices.dtype is D.bool_:
        got = indices.dtype if isinstance(indices, Tensor) else type(indices).__name__
        raise TypeError(f"expected 'indices' to be integer dtype, but got {got}")
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (int(shape),)
    elif isinstance(shape, (list, tuple)):
        for dim in shape:
            if not isinstance(dim, numbers.Integral) or isinstance(dim, bool):
                raise TypeError(f"expected 'shape' sequence to only contain ints, but got "
                                f"{type(dim).__name__}")
        shape = tuple(int(d) for d in shape)
    else:
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got "
                        f"{type(shape).__name__}")
    if any(d < 0 for d in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    coefs, c = [], 1
    for d in reversed(shape[1:] + (1,)):
        c *= d
        coefs.append(c)
    coefs.reverse()
    dev = indices.device
    res = indices.unsqueeze(-1).floor_divide(_ops.tensor(coefs, dtype=D.int64, device=dev)) \
        % _ops.tensor(list(shape), dtype=D.int64, device=dev)
    return res.unbind(-1)


_deterministic = {"mode": False, "warn_only": False}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Recorded only: every kernel here is deterministic."""
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    _deterministic["mode"], _deterministic["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled():
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled():
    return _deterministic["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    """0 / "default", 1 / "warn", 2 / "error", as PyTorch's: the same flag."""
    names = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in names:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = names[debug_mode]
    elif not isinstance(debug_mode, numbers.Integral) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError("invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not _deterministic["mode"]:
        return 0
    return 1 if _deterministic["warn_only"] else 2


def is_storage(obj):
    """False: dispatchtorch has no storage objects (tensors hold backend handles)."""
    return False


_tensor_type_device = [False]     # whether set_default_tensor_type last set a device


def set_default_tensor_type(t):
    """The legacy default type (torch.DoubleTensor, "torch.cuda.FloatTensor", ...) as
    set_default_dtype, and set_default_device for a non-CPU type."""
    from ._legacy_types import _TensorType, _from_name
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                  UserWarning, stacklevel=2)
    if isinstance(t, str):
        target = _from_name(t)
        if target is None:
            raise AttributeError(f"invalid type: {t!r}")
    elif isinstance(t, _TensorType):
        target = (t._device_type, t.dtype)
    else:
        raise TypeError(f"invalid type: {t!r}")
    device_type, dtype = target
    if not dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    D.set_default_dtype(dtype)
    from . import ops
    if device_type != "cpu":
        ops.set_default_device(device_type)
        _tensor_type_device[0] = True
    elif _tensor_type_device[0]:
        ops.set_default_device(None)
        _tensor_type_device[0] = False


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
    "triplet_margin_loss", "poisson_nll_loss", "bilinear", "detach", "detach_",
    "empty_strided", "unravel_index", "use_deterministic_algorithms",
    "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled",
    "set_deterministic_debug_mode", "get_deterministic_debug_mode", "get_device",
    "is_storage", "set_default_tensor_type",
)


def attach(ns):
    """Bind the names into the dispatchtorch namespace dict `ns` (not over existing ones)."""
    g = globals()
    for name in NAMES:
        ns.setdefault(name, g[name])
