"""Helpers of PyTorch's torch/distributions/utils.py the distributions here share."""
from __future__ import annotations

from functools import update_wrapper
from numbers import Number

from .. import _dtype as D
from .. import autograd as _autograd
from .. import ops as _ops
from .._tensor import Tensor

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs",
           "probs_to_logits"]


def broadcast_all(*values):
    """Numbers become tensors of the first tensor's dtype and device (else the default
    dtype); all are broadcast to one shape."""
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or "
                         "objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        options = dict(dtype=D.get_default_dtype())
        for value in values:
            if isinstance(value, Tensor):
                options = dict(dtype=value.dtype, device=value.device)
                break
        values = [v if isinstance(v, Tensor) else _ops.tensor(v, **options) for v in values]
    return _ops.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    return _ops.empty(shape, dtype=dtype, device=device).normal_()


def logits_to_probs(logits, is_binary=False):
    if is_binary:
        return _ops.sigmoid(logits)
    return _ops.softmax(logits, dim=-1)


def clamp_probs(probs):
    eps = D.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return _ops.log(ps_clamped) - _ops.log1p(-ps_clamped)
    return _ops.log(ps_clamped)


class lazy_property:
    """Computed on first access (with grad enabled, as PyTorch's) and then stored on the
    instance, so `probs` and `logits` are derived from each other only when read."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with _autograd.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value
