"""Loss functions, with PyTorch's reductions, argument checks and warnings."""
from __future__ import annotations

import warnings

from ... import _dtype as D
from ... import ops as _ops
from ..._tensor import Tensor
from ...autograd.function import Function
from ...autograd.grad_mode import is_grad_enabled
from ...ops._checks import range_check
from ...ops import nn_ops as N
from ...ops.gather_scatter import _bounds
from ._activation import softplus

_REDUCTIONS = ("none", "mean", "sum")


def legacy_reduction(size_average, reduce, reduction):
    """Map the deprecated size_average / reduce flags to a reduction string."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    warnings.warn("size_average and reduce args will be deprecated, please use reduction="
                  f"'{'mean' if size_average and reduce else 'sum' if reduce else 'none'}' "
                  "instead.", UserWarning, stacklevel=3)
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _reduce(loss, reduction, name):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction (in {name})")


def _check_pair(name, input, target, strict=False):
    for what, t in (("input", input), ("target", target)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument '{what}' must be Tensor, not {type(t).__name__}")
    if target.shape != input.shape:
        if strict:
            raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                             f"size ({input.shape}) is deprecated. Please ensure they have the same "
                             f"size.")
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size "
                      f"({input.shape}). This will likely lead to incorrect results due to "
                      f"broadcasting. Please ensure they have the same size.", UserWarning,
                      stacklevel=3)
    if not (target.dtype.is_floating_point or target.dtype.is_complex) and \
            input.dtype.is_floating_point:
        target = target.to(input.dtype)
    return target


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = legacy_reduction(size_average, reduce, reduction)
    target = _check_pair("mse_loss", input, target)
    if _own_difference(input, target):
        loss = _Mse.apply(input, target)
    else:
        d = input - target
        loss = d * d
    return _reduce(loss if weight is None else loss * weight, reduction, "mse_loss")


def _own_difference(input, target):
    """Whether the loss takes PyTorch's rule for each side (same shapes, under grad)."""
    return (is_grad_enabled() and (input.requires_grad or target.requires_grad)
            and input.shape == target.shape)


class _Mse(Function):
    """(x - t)^2 with PyTorch's mse_loss_backward for each side: 2 (x - t) g for the
    input, 2 (t - x) g for the target (its own difference; negating the input's gave
    -0.0 where t == x and PyTorch gives 0)."""

    @staticmethod
    def forward(ctx, input, target):
        ctx.save_for_backward(input, target)
        d = input - target
        return d * d

    @staticmethod
    def backward(ctx, g):
        x, t = ctx.saved_tensors
        nx, nt = ctx.needs_input_grad[:2]
        return (2 * (x - t) * g if nx else None, 2 * (t - x) * g if nt else None)


class _TwoPiece(Function):
    """smooth_l1 / huber (_two_piece) with PyTorch's *_backward for each side, u = x - t
    for the input and t - x for the target: -slope g for u <= -edge, slope g for
    u >= edge, u g / beta (smooth_l1) or u g (huber) between, NaN for a NaN u."""

    @staticmethod
    def forward(ctx, input, target, edge, quad, slope):
        ctx.save_for_backward(input, target)
        ctx.piece = edge, slope
        return _two_piece(input - target, edge, quad, slope)

    @staticmethod
    def backward(ctx, g):
        x, t = ctx.saved_tensors
        edge, slope = ctx.piece

        def side(u):
            inner = u * g / edge if slope == 1.0 else u * g
            return _ops.where(u <= -edge, -slope * g, _ops.where(u >= edge, slope * g, inner))
        nx, nt = ctx.needs_input_grad[:2]
        return (side(x - t) if nx else None, side(t - x) if nt else None, None, None, None)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = legacy_reduction(size_average, reduce, reduction)
    target = _check_pair("l1_loss", input, target)
    loss = (input - target).abs()
    return _reduce(loss if weight is None else loss * weight, reduction, "l1_loss")


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    reduction = legacy_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    target = _check_pair("smooth_l1_loss", input, target)
    if beta == 0:
        return _reduce((input - target).abs(), reduction, "smooth_l1_loss")
    if _own_difference(input, target):
        return _reduce(_TwoPiece.apply(input, target, beta, 0.5 / beta, 1.0), reduction,
                       "smooth_l1_loss")
    return _reduce(_two_piece(input - target, beta, 0.5 / beta, 1.0), reduction,
                   "smooth_l1_loss")


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    target = _check_pair("huber_loss", input, target)
    if _own_difference(input, target):
        loss = _TwoPiece.apply(input, target, delta, 0.5, delta)
    else:
        loss = _two_piece(input - target, delta, 0.5, delta)
    return _reduce(loss if weight is None else loss * weight, reduction, "huber_loss")


def _two_piece(x, edge, quad, slope):
    """quad * x^2 where |x| < edge, else slope * (|x| - edge / 2): smooth_l1 and huber.
    The quadratic piece sees x only where it is taken (0 elsewhere), so an infinite x
    gives the linear piece's gradient, +-slope * g, as PyTorch's *_backward (not 0 * inf),
    and a NaN x is in the quadratic piece: its gradient is NaN, as PyTorch's."""
    big = x.abs() >= edge
    xs = _ops.where(big, 0.0, x)
    return _ops.where(big, (x.abs() - 0.5 * edge) * slope, xs * xs * quad)


def _class_target(name, input, target):
    if not isinstance(input, Tensor) or not isinstance(target, Tensor):
        raise TypeError(f"{name}(): input and target must be Tensors")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{name}: expected a floating point input, got {input.dtype}")
    if target.dtype is D.uint8:
        target = target.long()
    if target.dtype is not D.int64:
        raise RuntimeError(f"{name}: expected target dtype to be Long (int64) class indices, but "
                           f"got {target.dtype.pt_name}")
    if input.dim() == 0:
        raise RuntimeError(f"{name}: input must have at least one dimension (the classes)")
    expected = (input.shape[:1] + input.shape[2:]) if input.dim() > 1 else ()
    if tuple(target.shape) != tuple(expected):
        raise ValueError(f"{name}: expected target of shape {list(expected)} for input of shape "
                         f"{list(input.shape)}, got {list(target.shape)}")
    return target


def _check_classes(name, input, target, ignore_index):
    """Every target not equal to ignore_index is a class (PyTorch's IndexError); a
    range check, so a compiled graph keeps it (checked on replay) instead of breaking."""
    if not target.numel():
        return
    classes = input.shape[1] if input.dim() > 1 else input.shape[0]
    range_check(target, 0, classes, lambda bad: IndexError(f"Target {bad} is out of bounds."),
                lambda t: _class_bounds(t, classes, ignore_index), ignore_index)


def _class_bounds(target, classes, ignore_index):
    """(min, max) of the targets, looking past the ignored ones only when needed: one host
    read (min and max together), and one more with the ignored ones read as class 0."""
    lo, hi = _bounds(target, target.numel())
    if 0 <= lo and hi < classes:
        return lo, hi
    if classes:
        return _bounds(_ops.where(target != ignore_index, target, 0), target.numel())
    valid = target[target != ignore_index]
    return _bounds(valid, valid.numel()) if valid.numel() else (0, -1)


def _check_weight(name, weight, classes):
    if weight is not None and (weight.dim() != 1 or weight.shape[0] != classes):
        raise RuntimeError(f"{name}: weight tensor should be defined either for all {classes} "
                           f"classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    reduction = legacy_reduction(size_average, reduce, reduction)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    target = _class_target("nll_loss", input, target)
    _check_weight("nll_loss", weight, input.shape[1] if input.dim() > 1 else input.shape[0])
    _check_classes("nll_loss", input, target, ignore_index)
    return N.NLL_LOSS(input, target, weight, reduction=reduction, ignore_index=ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    reduction = legacy_reduction(size_average, reduce, reduction)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if not isinstance(target, Tensor):
        raise TypeError(f"cross_entropy(): argument 'target' must be Tensor, not "
                        f"{type(target).__name__}")
    classes = input.shape[1] if input.dim() > 1 else input.shape[0]
    _check_weight("cross_entropy", weight, classes)
    if target.dtype.is_floating_point:
        if tuple(target.shape) != tuple(input.shape):
            raise RuntimeError(f"cross_entropy: class-probability target must have the input's "
                               f"shape {list(input.shape)}, got {list(target.shape)}")
        if target.dtype is not input.dtype:
            raise RuntimeError(f"expected scalar type {input.dtype.pt_name} but found "
                               f"{target.dtype.pt_name}")
    else:
        if target.dtype not in (D.int64, D.uint8):
            raise RuntimeError(f"cross_entropy: expected target dtype to be Long (int64) class "
                               f"indices or a floating point tensor of class probabilities, but "
                               f"got {target.dtype.pt_name}")
        target = _class_target("cross_entropy", input, target)
        _check_classes("cross_entropy", input, target, ignore_index)
    return N.CROSS_ENTROPY(input, target, weight, reduction=reduction, ignore_index=ignore_index,
                           label_smoothing=label_smoothing)


def _bce_values(input, target):
    # PyTorch clamps each log at -100 so that 0 * log(0) stays finite
    log_p = input.log().clamp_min(-100.0)
    log_q = (1 - input).log().clamp_min(-100.0)
    return -(target * log_p + (1 - target) * log_q)


_BCE_EPSILON = 9.999999960041972e-13      # PyTorch's EPSILON: the float32 literal 1e-12f


class _BinaryCrossEntropy(Function):
    """The unreduced loss with PyTorch's derivatives: binary_cross_entropy_backward,
    g (x - y) / max(x (1 - x), EPSILON), and binary_cross_entropy_target_backward,
    -logit(x) g. Differentiating the clamped logs instead gave NaN at x = 0 or 1 (a
    saturated sigmoid) and a finite target gradient where PyTorch's is infinite."""

    @staticmethod
    def forward(ctx, input, target):
        ctx.save_for_backward(input, target)
        return _bce_values(input, target)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        gx = g * (x - y) / ((1 - x) * x).clamp_min(_BCE_EPSILON)
        return gx, -_ops.logit(x) * g


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    reduction = legacy_reduction(size_average, reduce, reduction)
    target = _check_pair("binary_cross_entropy", input, target, strict=True)
    if input.numel() and (float(input.amin().item()) < 0 or float(input.amax().item()) > 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if target.numel() and (float(target.amin().item()) < 0 or float(target.amax().item()) > 1):
        raise RuntimeError("binary_cross_entropy: all elements of target should be between 0 "
                           "and 1")
    if (input.requires_grad or target.requires_grad) and is_grad_enabled():
        loss = _BinaryCrossEntropy.apply(input, target)
    else:
        loss = _bce_values(input, target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy")


class _BCEWithLogits(Function):
    """The unreduced loss (1 - y) x + softplus(-x) with PyTorch's derivatives,
    binary_cross_entropy_with_logits_backward (sigmoid(x) - y) g and its target's -x g
    (the formula's own, g (1 - y) - g sigmoid(-x), is inf - inf for an infinite g)."""

    @staticmethod
    def forward(ctx, input, target):
        ctx.save_for_backward(input, target)
        return (1 - target) * input + softplus(-input)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return (_ops.sigmoid(x) - y) * g, -x * g


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    reduction = legacy_reduction(size_average, reduce, reduction)
    target = _check_pair("binary_cross_entropy_with_logits", input, target, strict=True)
    # -log(sigmoid(x)) as softplus(-x), PyTorch's log_sigmoid: stable for every x, and its
    # gradient at x = 0 is -sigmoid(0) (max(-x, 0) + log1p(exp(-|x|)) gave 0 there)
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * target + 1
        loss = (1 - target) * input + log_weight * softplus(-input)
    elif (input.requires_grad or target.requires_grad) and is_grad_enabled():
        loss = _BCEWithLogits.apply(input, target)
    else:
        loss = (1 - target) * input + softplus(-input)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    reduction = legacy_reduction(size_average, reduce, reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        # PyTorch's xlogy(t, t) - t x: 0 where t == 0, NaN where t < 0, and xlogy's
        # derivatives (the target's is NaN at t = 0, as PyTorch's)
        loss = _ops.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.dim() else 1)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", UserWarning, stacklevel=2)
    return _reduce(loss, reduction, "kl_div")


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target); with `options`
    (LinearCrossEntropyOptions) the batch is processed in chunks, as PyTorch's."""
    if input.dim() not in (1, 2):
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions "
                           f"(in_features), got {input.shape[-1]} and {linear_weight.shape[-1]}, "
                           f"respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes,) + out_features:
        raise RuntimeError(f"expected linear_bias shape {(num_classes,) + out_features}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and input.dim() == 1:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, (N, "
                           f"{in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = tuple(input.shape[:-1]) + (num_classes,) + out_features
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if options is not None:
        from . import _linear_cross_entropy_chunked as C
        if not out_features and reduction in _REDUCTIONS and label_smoothing == 0.0 and \
                target.dtype is D.int64:
            return C.chunked(input, linear_weight, target, linear_bias, weight, reduction,
                             ignore_index, options)
        warnings.warn(f"linear_cross_entropy: ``options`` ignored; chunked path needs reduction "
                      f"in {{'mean','sum','none'}}, label_smoothing == 0, target.dtype == int64, "
                      f"out_features == (). Got reduction={reduction!r}, label_smoothing="
                      f"{label_smoothing}, target.dtype={target.dtype}, out_features="
                      f"{out_features}", stacklevel=2)
    from ._linear import linear
    rows = num_classes
    for f in out_features:
        rows *= f
    logits = linear(input, linear_weight.reshape(rows, in_features),
                    None if linear_bias is None else linear_bias.reshape(rows))
    return cross_entropy(logits.reshape(logits_shape), target, weight=weight,
                         reduction=reduction, ignore_index=ignore_index,
                         label_smoothing=label_smoothing)
