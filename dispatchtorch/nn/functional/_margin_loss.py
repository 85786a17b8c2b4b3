"""The margin, ranking and embedding losses (hinge, triplet, multi-label, ...), written
as PyTorch's ATen defines them."""
from __future__ import annotations

from ... import ops as _ops
from ..._tensor import Tensor
from ._activation import logsigmoid
from ._distance import pairwise_distance
from ._loss import _reduce, legacy_reduction

_EPS = 1e-12


def _tensors(name, **tensors):
    for what, t in tensors.items():
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument '{what}' must be Tensor, not {type(t).__name__}")


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    reduction = legacy_reduction(size_average, reduce, reduction)
    _tensors("margin_ranking_loss", input1=input1, input2=input2, target=target)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.shape}, input2: {input2.shape}, "
                           f"target: {target.shape} ")
    loss = (-target * (input1 - input2) + margin).clamp_min(0)
    return _reduce(loss, reduction, "margin_ranking_loss")


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    reduction = legacy_reduction(size_average, reduce, reduction)
    _tensors("hinge_embedding_loss", input=input, target=target)
    margin_part = _ops.where(target != 1, (margin - input).clamp_min(0), 0.0)
    self_part = _ops.where(target != -1, input, 0.0)
    return _reduce(margin_part + self_part, reduction, "hinge_embedding_loss")


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = legacy_reduction(size_average, reduce, reduction)
    _tensors("soft_margin_loss", input=input, target=target)
    return _reduce((-target * input).exp().log1p(), reduction, "soft_margin_loss")


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    reduction = legacy_reduction(size_average, reduce, reduction)
    _tensors("cosine_embedding_loss", input1=input1, input2=input2, target=target)
    if input1.dim() not in (1, 2) or input1.shape != input2.shape:
        raise RuntimeError(f"cosine_embedding_loss: expected 1D or 2D inputs of the same shape, "
                           f"got {list(input1.shape)} and {list(input2.shape)}")
    dim = target.dim()
    if dim != input1.dim() - 1:
        raise RuntimeError(f"{input1.dim()}D target tensor expects {input1.dim() - 1}D input "
                           f"tensors, but found inputs with sizes {list(input1.shape)} and "
                           f"{list(input2.shape)}.")
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + _EPS
    mag2 = (input2 * input2).sum(dim) + _EPS
    cos = prod / (mag1 * mag2).sqrt()
    loss = _ops.where(target == 1, 1 - cos, 0.0) + \
        _ops.where(target == -1, (cos - margin).clamp_min(0), 0.0)
    return _reduce(loss, reduction, "cosine_embedding_loss")


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    reduction = legacy_reduction(size_average, reduce, reduction)
    _tensors("multilabel_soft_margin_loss", input=input, target=target)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    return _reduce(loss, reduction, "multilabel_soft_margin_loss")


def _rows(name, input, target):
    """input as (N, C): a 0-d input is one sample of one class, a 1-d one one sample."""
    if input.dim() > 2 or (input.dim() and input.shape[-1] == 0):
        raise RuntimeError(f"{name}: Expected non-empty vector or matrix with optional 0-dim "
                           f"batch size, but got: {list(input.shape)}")
    return input.reshape(1, -1) if input.dim() < 2 else input


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """sum over j != y of max(0, margin - x[y] + x[j])^p / C, times weight[y]."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _tensors("multi_margin_loss", input=input, target=target)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    if reduction not in ("none", "mean", "sum"):      # PyTorch checks it before the kernel
        raise ValueError(f"{reduction} is not a valid value for reduction")
    x = _rows("multi_margin_loss", input, target)
    y = target.reshape(-1).long()
    n, c = x.shape
    if target.dim() > 1 or y.shape[0] != n:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to "
                           f"the number of input samples (batch size). Expected target size "
                           f"[{n}], but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    if y.numel() and (int(y.amin().item()) < 0 or int(y.amax().item()) >= c):
        raise RuntimeError("multi_margin_loss: target out of range")
    x_y = x.gather(1, y.unsqueeze(1))
    z = (margin - x_y + x).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.index_select(0, y).unsqueeze(1)
    not_target = _ops.arange(c, device=x.device) != y.unsqueeze(1)
    loss = _ops.where(not_target, z, 0.0).sum(1) / c
    if input.dim() < 2 and target.dim() == 0:     # ATen: one sample keeps target's rank
        loss = loss.reshape(())
    return _reduce(loss, reduction, "multi_margin_loss")


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Targets are class indices up to the first -1; the loss sums
    max(0, 1 - (x[j] - x[i])) over target classes j and non-target classes i, over C."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _tensors("multilabel_margin_loss", input=input, target=target)
    x = _rows("multilabel_margin_loss", input, target)
    if (target.dim() > 1 if input.dim() < 2 else tuple(target.shape) != tuple(x.shape)) or \
            target.numel() != x.numel():
        raise RuntimeError(f"multilabel_margin_loss: inconsistent target size: "
                           f"{list(target.shape)} for input of size: {list(input.shape)}")
    t = target.reshape(x.shape).long()
    n, c = x.shape
    valid = (t >= 0).long().cumprod(1).bool()          # entries before the first -1
    onehot = (t.clamp_min(0).unsqueeze(-1) == _ops.arange(c, device=x.device)) & \
        valid.unsqueeze(-1)
    count_j = onehot.to(x.dtype).sum(1)                  # (N, C): times class j is listed
    is_target = count_j > 0
    pair = (1 - x.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0)     # [n, j, i]
    w = count_j.unsqueeze(2) * (~is_target).to(x.dtype).unsqueeze(1)
    loss = (pair * w).sum((1, 2)) / c
    if input.dim() < 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction, "multilabel_margin_loss")


def _check_triplet(margin, anchor, positive, negative):
    """The argument checks both triplet losses make, with PyTorch's messages."""
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.dim() == positive.dim() == negative.dim():
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {anchor.dim()}D, positive "
                           f"{positive.dim()}D, and negative {negative.dim()}D inputs")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    reduction = legacy_reduction(size_average, reduce, reduction)
    _tensors("triplet_margin_loss", anchor=anchor, positive=positive, negative=negative)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    _check_triplet(margin, anchor, positive, negative)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _ops.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction, "triplet_margin_loss")


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    _check_triplet(margin, anchor, positive, negative)
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos, d_neg = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_neg = _ops.minimum(d_neg, dist(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction,
                   "triplet_margin_with_distance_loss")


