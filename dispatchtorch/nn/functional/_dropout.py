"""The dropout variants: channel-wise (dropout1d/2d/3d) and the self-normalising
alpha dropouts, each a Bernoulli mask and an affine map."""
from __future__ import annotations

import warnings

from ... import ops as _ops
from ..._tensor import Tensor

_SELU_ALPHA_PRIME = 1.7580993408473766


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise(input, p, feature):
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2) if feature else tuple(input.shape)
    return _ops.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1.0 - p)


def _feature_dropout(name, input, p, training, inplace, dims):
    """ATen's feature_dropout over (N, C, *spatial): one draw per (n, c). As PyTorch's
    functional.py: dropout1d raises for other ranks; dropout2d/3d only warn, and
    dropout2d reads a 3D input as batched (N, C, L), PyTorch's historical behaviour."""
    _check_p(p)
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    rank = input.dim()
    if rank not in (dims + 1, dims + 2):
        if dims == 1:
            raise RuntimeError(
                f"{name}: Expected {dims + 1}D or {dims + 2}D input, but received a {rank}D "
                "input. ")
        warnings.warn(f"{name}: Received a {rank}-D input to {name}, which is deprecated and "
                      "will result in an error in a future release. To retain the behavior "
                      "and silence this warning, please use dropout instead.", stacklevel=3)
    if rank < 2:
        raise RuntimeError(f"{name}: Feature dropout requires at least 2 dimensions in the input")
    if dims == 2 and rank == 3:
        warnings.warn(f"{name}: Received a 3D input to {name} and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape "
                      "(N, C, L), where C is the channel dim.", stacklevel=3)
    if not training or p == 0.0:
        return input
    unbatched = rank == dims + 1 and not (dims == 2 and rank == 3)
    x = input.unsqueeze(0) if unbatched else input
    out = x * 0.0 if p == 1.0 else x * (_noise(x, p, True) / (1.0 - p))
    out = out.squeeze(0) if unbatched else out
    return input.copy_(out) if inplace else out


def dropout1d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout("dropout1d", input, p, training, inplace, 1)


def dropout2d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout("dropout2d", input, p, training, inplace, 2)


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout("dropout3d", input, p, training, inplace, 3)


def _alpha(input, p, training, inplace, feature):
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        out = input * 0.0
    else:
        noise = _noise(input, p, feature)
        a = 1.0 / ((_SELU_ALPHA_PRIME ** 2 * p + 1) * (1 - p)) ** 0.5
        b = (noise - 1) * (_SELU_ALPHA_PRIME * a) + _SELU_ALPHA_PRIME * a * p
        out = input * (noise * a) + b
    return input.copy_(out) if inplace else out


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha(input, p, training, inplace, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha(input, p, training, inplace, True)


