"""LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm, CrossMapLRN2d."""
from __future__ import annotations

import numbers

from ... import ops as _ops
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


def _as_shape(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(normalized_shape)


def _check_trailing(module, input, shape):
    if tuple(input.shape[input.dim() - len(shape):]) != shape or input.dim() < len(shape):
        raise RuntimeError(f"{module!r}: expected input with shape [*, "
                           f"{', '.join(map(str, shape))}], got input of shape {list(input.shape)}")


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_ops.ones(self.normalized_shape, **kw))
            if bias:
                self.bias = Parameter(_ops.zeros(self.normalized_shape, **kw))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        _check_trailing(self, input, self.normalized_shape)
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_ops.ones(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        _check_trailing(self, x, self.normalized_shape)
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None,
                 *, bias=True):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        if affine:
            self.weight = Parameter(_ops.ones(num_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        if affine and bias:
            self.bias = Parameter(_ops.zeros(num_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        if input.dim() < 2 or input.shape[1] != self.num_channels:
            raise RuntimeError(f"{self!r}: expected input of shape [N, {self.num_channels}, *], "
                               f"got input of shape {list(input.shape)}")
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class LocalResponseNorm(Module):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _cross_map_window(channels, size):
    """PyTorch's CrossMapLRN2d running-sum recurrence, as a (C, C) 0/1 matrix of
    which squared channels each output channel's scale adds up."""
    import numpy as np
    pre_pad = int((size - 1) / 2 + 1)
    m = np.zeros((channels, channels))
    m[0, :min(pre_pad, channels)] = 1
    for c in range(1, channels):
        m[c] = m[c - 1]
        if c < channels - pre_pad + 1:
            m[c, c + pre_pad - 1] += 1
        if c > pre_pad:
            m[c, c - pre_pad] -= 1
    return m


class CrossMapLRN2d(Module):
    """The legacy (Lua Torch) cross-channel LRN of 4-D inputs, window as PyTorch's."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             f"instead.")
        window = _ops.tensor(_cross_map_window(input.shape[1], self.size), dtype=input.dtype,
                             device=input.device)
        sq = (input * input).movedim(1, -1)
        scale = (sq @ window.T).movedim(-1, 1) * (self.alpha / self.size) + self.k
        return input * scale.pow(-self.beta)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
