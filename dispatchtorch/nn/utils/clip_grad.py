"""Gradient clipping as PyTorch does it: the scale is applied as a tensor (no host
round trip), and is clamped to 1 so small gradients are left alone."""
from __future__ import annotations

import math

from ... import ops as _ops
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad


def _tensors(parameters):
    if isinstance(parameters, Tensor):
        return [parameters]
    return list(parameters)


def _vector_norm(x, norm_type):
    if norm_type == math.inf:
        return x.abs().amax()
    if norm_type == -math.inf:
        return x.abs().amin()
    if norm_type == 2:
        return (x * x).sum().sqrt()
    if norm_type == 1:
        return x.abs().sum()
    if norm_type == 0:
        return (x != 0).sum().to(x.dtype)
    return (x.abs() ** norm_type).sum() ** (1.0 / norm_type)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the norms of tensors (the norm of all their elements together)."""
    tensors = [t for t in _tensors(tensors) if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return _ops.tensor(0.0)
    ref = tensors[0]
    with no_grad():
        if all(t._place is ref._place and t.dtype is ref.dtype for t in tensors):
            # one vector of every element: a few ops whatever the number of tensors
            total = _vector_norm(_ops.cat([t.reshape(-1) for t in tensors]), norm_type)
        else:
            norms = [_vector_norm(t, norm_type).to(device=ref.device, dtype=ref.dtype)
                     for t in tensors]
            total = _vector_norm(_ops.stack(norms), norm_type)
    if error_if_nonfinite and not bool(total.isfinite()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` "
                           f"is non-finite, so it cannot be clipped. To disable this error and "
                           f"scale the gradients by the non-finite norm anyway, set "
                           f"`error_if_nonfinite=False`")
    return total


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients in place so that their total norm is at most max_norm.
    Returns the total norm before clipping."""
    params = _tensors(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    if not grads:
        return total
    with no_grad():
        coef = (float(max_norm) / (total + 1e-6)).clamp_max(1.0)
        for g in grads:
            g.mul_(coef if g._place is coef._place else coef.to(g.device))
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients by max_norm / (total_norm + 1e-6), clamped to 1 (the second
    half of clip_grad_norm_, for a total norm computed elsewhere)."""
    grads = [p.grad for p in _tensors(parameters) if p.grad is not None]
    if not grads:
        return
    with no_grad():
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp_max(1.0)
        for g in grads:
            g.mul_(coef if g._place is coef._place else coef.to(g.device))


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    """The deprecated name of clip_grad_norm_."""
    import warnings
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element to [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _tensors(parameters):
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)
