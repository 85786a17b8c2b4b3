"""Activation functions. The ones backends may fuse (softmax, log_softmax, gelu, silu)
are rows of ops/nn_ops.py; the rest are a few public ops each."""
from __future__ import annotations

import warnings

from ... import ops as _ops
from ..._tensor import Tensor
from ...autograd.function import Function
from ...autograd.grad_mode import is_grad_enabled
from ...ops import nn_ops as N


def _check(input, name):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")


def _inplace(input, result, inplace):
    return input.copy_(result) if inplace else result


def relu(input, inplace=False):
    _check(input, "relu")
    return input.relu_() if inplace else input.relu()


def relu_(input):
    return input.relu_()


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    _check(input, "leaky_relu")
    return _inplace(input, _ops.where(input > 0, input, input * negative_slope), inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    _check(input, "hardtanh")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _inplace(input, input.clamp(min_val, max_val), inplace)


def elu(input, alpha=1.0, inplace=False):
    _check(input, "elu")
    return _inplace(input, _ops.where(input > 0, input, input.expm1() * alpha), inplace)


def _softplus_values(input, beta, threshold):
    scaled = input * beta if beta != 1 else input
    soft = scaled.exp().log1p()
    if beta != 1:
        soft = soft / beta
    return _ops.where(scaled > threshold, input, soft)


class _Softplus(Function):
    """softplus with PyTorch's own derivative, g * z / (z + 1) with z = exp(beta * x) below
    the threshold and g above it: differentiating the formula instead gives 0 * inf = nan
    for beta = inf."""

    @staticmethod
    def forward(ctx, input, beta, threshold):
        ctx.save_for_backward(input)
        ctx.beta, ctx.threshold = beta, threshold
        return _softplus_values(input, beta, threshold)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        scaled = x * ctx.beta if ctx.beta != 1 else x
        z = scaled.exp()
        return _ops.where(scaled > ctx.threshold, g, g * z / (z + 1)), None, None


def softplus(input, beta=1.0, threshold=20.0):
    _check(input, "softplus")
    if input.requires_grad and is_grad_enabled():
        return _Softplus.apply(input, beta, threshold)
    return _softplus_values(input, beta, threshold)


def mish(input, inplace=False):
    return _inplace(input, input * softplus(input).tanh(), inplace)


def logsigmoid(input):
    return -softplus(-input)


def gelu(input, approximate="none"):
    _check(input, "gelu")
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}")
    return N.GELU(input, approximate=approximate)


def silu(input, inplace=False):
    _check(input, "silu")
    return _inplace(input, N.SILU(input), inplace)


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def _softmax_dim(ndim, name):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  f"include dim=X as an argument.", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_input(input, dim, dtype, name):
    _check(input, name)
    if dim is None:
        dim = _softmax_dim(input.dim(), name)
    if dtype is not None:
        input = input.to(dtype)
    elif not input.dtype.is_floating_point:
        raise RuntimeError(f"\"{name}_lastdim_kernel_impl\" not implemented for "
                           f"'{input.dtype.pt_name}'")
    return input, dim


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    input, dim = _softmax_input(input, dim, dtype, "softmax")
    return N.SOFTMAX(input, dim=dim)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    input, dim = _softmax_input(input, dim, dtype, "softmin")
    return N.SOFTMAX(-input, dim=dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    input, dim = _softmax_input(input, dim, dtype, "log_softmax")
    return N.LOG_SOFTMAX(input, dim=dim)
