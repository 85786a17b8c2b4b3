"""dispatchtorch.nn.functional: PyTorch's functional layer API.

Everything here is written in public ops; the ops that backends may replace with
fused kernels are the rows of dispatchtorch/ops/nn_ops.py, which these call.
"""
from ._activation import (elu, gelu, hardtanh, leaky_relu, log_softmax, logsigmoid, mish, relu,
                         relu6, relu_, sigmoid, silu, softmax, softmin, softplus, tanh)
from ._attention import multi_head_attention_forward, scaled_dot_product_attention
from ._conv import (adaptive_avg_pool1d, adaptive_avg_pool2d, avg_pool1d, avg_pool2d, conv1d,
                   conv2d, conv_transpose1d, conv_transpose2d, fold, max_pool1d, max_pool2d,
                   unfold)
from ._linear import bilinear, dropout, embedding, linear, one_hot
from ._loss import (binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy,
                   huber_loss, kl_div, l1_loss, mse_loss, nll_loss, smooth_l1_loss)
from ._norm import batch_norm, group_norm, layer_norm, normalize, rms_norm
from ._vision import interpolate, pad

__all__ = [name for name in dir() if not name.startswith("_")]
