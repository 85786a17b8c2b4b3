"""Fold an eval-mode BatchNorm into the Conv or Linear before it (inference only)."""
from __future__ import annotations

import copy

from ... import ops as _ops
from ..parameter import Parameter


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    if conv_b is None:
        conv_b = _ops.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = _ops.ones_like(bn_rm)
    if bn_b is None:
        bn_b = _ops.zeros_like(bn_rm)
    rsqrt = (bn_rv + bn_eps).rsqrt()
    shape = [1, -1] if transpose else [-1, 1]
    shape += [1] * (conv_w.dim() - 2)
    fused_w = (conv_w * (bn_w * rsqrt).reshape(shape)).to(w_dtype)
    fused_b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).to(b_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_conv_bn_eval(conv, bn, transpose=False):
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("fuse_conv_bn_eval: the BatchNorm must track running statistics")
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    w_dtype = linear_w.dtype
    b_dtype = linear_b.dtype if linear_b is not None else w_dtype
    if linear_b is None:
        linear_b = _ops.zeros_like(bn_rm)
    scale = bn_w * (bn_rv + bn_eps).rsqrt()
    fused_w = (linear_w * scale.unsqueeze(-1)).to(w_dtype)
    fused_b = ((linear_b - bn_rm) * scale + bn_b).to(b_dtype)
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features must equal bn.num_features or "
                             "bn.num_features must be 1")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("fuse_linear_bn_eval: the BatchNorm must track running statistics")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused
