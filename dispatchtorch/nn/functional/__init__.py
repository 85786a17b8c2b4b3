"""dispatchtorch.nn.functional: PyTorch's functional layer API.

Everything here is written in public ops; the ops that backends may replace with
fused kernels are the rows of dispatchtorch/ops/nn_ops/ (one module per subject), which these call.
"""
from ._activation import (celu, celu_, elu, elu_, gelu, glu, gumbel_softmax, hardshrink,
                          hardsigmoid, hardswish, hardtanh, hardtanh_, leaky_relu, leaky_relu_,
                          log_softmax, logsigmoid, mish, prelu, relu, relu6, relu_, rrelu, rrelu_,
                          selu, selu_, sigmoid, silu, softmax, softmin, softplus, softshrink,
                          softsign, tanh, tanhshrink, threshold, threshold_)
from ._attention import multi_head_attention_forward, scaled_dot_product_attention
from ._conv import (adaptive_avg_pool1d, adaptive_avg_pool2d, avg_pool1d, avg_pool2d, conv1d,
                    conv2d, conv_transpose1d, conv_transpose2d, fold, max_pool1d, max_pool2d,
                    unfold)
from ._conv3d import conv3d, conv_tbc, conv_transpose3d
from ._distance import cosine_similarity, pairwise_distance, pdist
from ._dropout import (alpha_dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout)
from ._embedding_bag import embedding_bag
from ._likelihood import ctc_loss, gaussian_nll_loss, poisson_nll_loss
from ._linear import bilinear, dropout, embedding, linear, one_hot
from ._loss import (binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy,
                    huber_loss, kl_div, l1_loss, linear_cross_entropy, mse_loss, nll_loss,
                    smooth_l1_loss)
from ._margin_loss import (cosine_embedding_loss, hinge_embedding_loss, margin_ranking_loss,
                           multi_margin_loss, multilabel_margin_loss, multilabel_soft_margin_loss,
                           soft_margin_loss, triplet_margin_loss,
                           triplet_margin_with_distance_loss)
from ._norm import (batch_norm, group_norm, instance_norm, layer_norm, local_response_norm,
                    normalize, rms_norm)
from ._pool3d import (adaptive_avg_pool3d, adaptive_max_pool1d, adaptive_max_pool1d_with_indices,
                      adaptive_max_pool2d, adaptive_max_pool2d_with_indices, adaptive_max_pool3d,
                      adaptive_max_pool3d_with_indices, avg_pool3d, fractional_max_pool2d,
                      fractional_max_pool2d_with_indices, fractional_max_pool3d,
                      fractional_max_pool3d_with_indices, lp_pool1d, lp_pool2d,
                      lp_pool3d, max_pool1d_with_indices, max_pool2d_with_indices, max_pool3d,
                      max_pool3d_with_indices, max_unpool1d, max_unpool2d, max_unpool3d)
from ._sampling import (GRID_SAMPLE_INTERPOLATION_MODES, GRID_SAMPLE_PADDING_MODES, affine_grid,
                        grid_sample, upsample, upsample_bilinear, upsample_nearest)
from ._shuffle import channel_shuffle, native_channel_shuffle, pixel_shuffle, pixel_unshuffle
from ._vision import interpolate, pad


def assert_int_or_pair(arg, arg_name, message):
    """PyTorch's argument check: an int or a pair."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))

__all__ = [name for name in dir() if not name.startswith("_")]
