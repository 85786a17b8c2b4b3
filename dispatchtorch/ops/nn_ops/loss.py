"""The nn rows of nll_loss and cross_entropy."""
from __future__ import annotations

from ...autograd.grad_mode import STATE
from ._row import Composite
from .softmax import LOG_SOFTMAX


# -- losses ----------------------------------------------------------------------------------------


def _nll_parts(x, target, weight, ignore_index):
    """Per-element weights (0 where ignored) and the safe class index."""
    cdim = 1 if x.dim() > 1 else 0
    valid = target != ignore_index
    safe = pointwise.where(valid, target, 0)
    w = valid.to(x._dtype) if weight is None else weight.index_select(0, safe.reshape(-1)) \
        .reshape(safe._shape) * valid
    return cdim, safe, w


def _nll_loss(x, target, weight, reduction, ignore_index):
    cdim, safe, w = _nll_parts(x, target, weight, ignore_index)
    # the callers checked target's range (F.nll_loss, F.cross_entropy): no second
    # index check, which is a host read on a device
    picked = gather_scatter._gather(x, cdim, safe.unsqueeze(cdim)).squeeze(cdim) \
        if x.dim() > 1 else x[safe]
    losses = -(picked * w)
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return losses.sum() / w.sum()


def _nll_loss_grad(g, x, target, weight, reduction, ignore_index):
    if not STATE.enabled and g._dtype is x._dtype:
        # no graph records the backward: one row, which a backend may fuse (its eleven
        # frontend ops were about 70 us of cross_entropy's backward on (128, 10))
        return NLL_LOSS_BACKWARD(g, x, target, weight, reduction=reduction,
                                 ignore_index=ignore_index), None, None
    return _nll_loss_backward(g, x, target, weight, reduction, ignore_index), None, None


def _nll_loss_backward(g, x, target, weight, reduction, ignore_index):
    """The nll_loss_backward row's decomposition and the rule's formula under
    create_graph=True: PyTorch's nll_loss_backward, -weight[t] * g (/ total weight) at
    each kept target and +0.0 at an ignored one, whatever g and the total (a batch all
    ignored divides by 0)."""
    cdim, safe, w = _nll_parts(x, target, weight, ignore_index)
    scale = g / w.sum() if reduction == "mean" else g
    coef = pointwise.where(target != ignore_index, -(w * scale), 0.0).unsqueeze(cdim)
    gx = creation.zeros(x._shape, dtype=x._dtype, device=x.device)
    return gather_scatter._scatter(gx, cdim, safe.unsqueeze(cdim), coef, "none",
                                   gather_scatter.SCATTER, checked=True)


def _nll_meta(x, target, weight, reduction, ignore_index):
    return ((target._shape if reduction == "none" else (), x._dtype),)


NLL_LOSS_BACKWARD = Composite(
    "nll_loss_backward", ("grad_output", "x", "target", "weight"), _nll_loss_backward, None,
    lambda g, x, *_, **kw: ((x._shape, x._dtype),),
    "nll_loss_backward(grad_output, x, target: int64, weight, *, reduction, ignore_index)",
    "nll_loss's gradient: -weight[target[n]] * g (/ the summed weights for mean) at each "
    "kept target, +0.0 elsewhere (its backward without a graph)")
NLL_LOSS = Composite("nll_loss", ("x", "target", "weight"), _nll_loss, _nll_loss_grad, _nll_meta,
                     "nll_loss(x, target: int64, weight, *, reduction, ignore_index)",
                     "-x[n, target[n]] * weight[target[n]], class dim 1; mean divides by the "
                     "summed weights of the non-ignored targets")


def _cross_entropy(x, target, weight, reduction, ignore_index, label_smoothing):
    cdim = 1 if x.dim() > 1 else 0
    logp = LOG_SOFTMAX(x, dim=cdim)
    n_classes = x._shape[cdim]
    wshape = (n_classes,) + (1,) * (x.dim() - cdim - 1)
    if target._dtype.is_floating_point:           # class probabilities
        if label_smoothing:
            target = target * (1 - label_smoothing) + label_smoothing / n_classes
        terms = logp * target
        if weight is not None:
            terms = terms * weight.reshape(wshape)
        losses = -terms.sum(cdim)
        if reduction == "none":
            return losses
        return losses.sum() if reduction == "sum" else losses.sum() / max(losses.numel(), 1)
    nll = NLL_LOSS(logp, target, weight, reduction=reduction, ignore_index=ignore_index)
    if not label_smoothing:
        return nll
    _, _, w = _nll_parts(x, target, weight, ignore_index)
    valid = target != ignore_index
    terms = logp if weight is None else logp * weight.reshape(wshape)
    smooth = pointwise.where(valid, -terms.sum(cdim), 0.0)   # masked_fill, as PyTorch's
    if reduction == "sum":
        smooth = smooth.sum()
    elif reduction == "mean":
        smooth = smooth.sum() / w.sum()
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / n_classes)


def _cross_entropy_meta(x, target, weight, reduction, **kw):
    shape = (x._shape[:1] + x._shape[2:]) if x.dim() > 1 else ()
    return ((shape if reduction == "none" else (), x._dtype),)


CROSS_ENTROPY = Composite(
    "cross_entropy", ("x", "target", "weight"), _cross_entropy, None, _cross_entropy_meta,
    "cross_entropy(x, target, weight, *, reduction, ignore_index, label_smoothing)",
    "log_softmax over dim 1 then nll_loss; target int64 class indices or float probabilities")


# The op modules this one's derivative rules and decompositions call (at run time only).
from .. import creation, gather_scatter, pointwise  # noqa: E402
