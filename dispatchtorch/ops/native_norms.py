"""torch.native_layer_norm / native_group_norm / native_batch_norm: the normalisations
with the statistics ATen saves for backward (mean and 1/std), as decompositions and
functorch code call them. Written over mean, var and rsqrt: autograd reaches every
output."""
from __future__ import annotations

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import creation


def _affine(y, weight, bias, shape):
    if weight is not None:
        y = y * weight.reshape(shape)
    return y if bias is None else y + bias.reshape(shape)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(out, mean, rstd) over the last len(normalized_shape) dims; mean and rstd keep
    those dims as size 1."""
    if not isinstance(input, Tensor):
        raise TypeError(f"native_layer_norm(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    shape = tuple(normalized_shape)
    if not shape:
        raise RuntimeError(f"Expected normalized_shape to be at least 1-dimensional, i.e., "
                           f"containing at least one element, but got normalized_shape = []")
    axis = input.dim() - len(shape)
    if axis < 0 or tuple(input.shape[axis:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    dims = tuple(range(axis, input.dim()))
    mean = input.mean(dims, keepdim=True)
    var = input.var(dims, correction=0, keepdim=True)
    rstd = (var + eps).rsqrt()
    out = _affine((input - mean) * rstd, weight, bias, shape)
    return out, mean, rstd


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(out, mean, rstd): input (N, C, *) in `group` groups; mean and rstd are (N, group)."""
    if input.numel() != N * C * HxW:
        raise RuntimeError(f"Expected input to have {N * C * HxW} elements, but got "
                           f"{input.numel()}")
    if C % group:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={group}")
    x = input.reshape(N, group, (C // group) * HxW)
    mean = x.mean(2, keepdim=True)
    rstd = (x.var(2, correction=0, keepdim=True) + eps).rsqrt()
    y = ((x - mean) * rstd).reshape(tuple(input.shape))
    out = _affine(y, weight, bias, (1, C) + (1,) * (input.dim() - 2))
    return out, mean.reshape(N, group), rstd.reshape(N, group)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(out, save_mean, save_invstd): in training the batch's statistics (and the running
    ones updated in place, with the unbiased variance); in eval the running statistics,
    with empty save_mean / save_invstd as ATen."""
    c = input.shape[1]
    dims = (0,) + tuple(range(2, input.dim()))
    shape = (1, c) + (1,) * (input.dim() - 2)
    if training:
        mean = input.mean(dims)
        var = input.var(dims, correction=0)
        invstd = (var + eps).rsqrt()
        n = input.numel() // c
        with no_grad():
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
            if running_var is not None:
                unbiased = var.detach() * (n / max(n - 1, 1))
                running_var.mul_(1 - momentum).add_(unbiased * momentum)
        out = _affine((input - mean.reshape(shape)) * invstd.reshape(shape), weight, bias, shape)
        return out, mean, invstd
    if running_mean is None or running_var is None:
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    scale = (running_var + eps).rsqrt()
    out = _affine((input - running_mean.reshape(shape)) * scale.reshape(shape), weight, bias,
                  shape)
    empty = creation.zeros(0, dtype=input.dtype, device=input.device)
    return out, empty, empty.clone()


PUBLIC = {"native_layer_norm": native_layer_norm, "native_group_norm": native_group_norm,
          "native_batch_norm": native_batch_norm}
