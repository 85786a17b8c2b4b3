"""The torch-level nn forms that reshape F's arguments or results: convolution (one entry
for every rank, transposed or not), conv_tbc, max_pool1d_with_indices, embedding_bag's
four results, native_dropout's (output, mask), ctc_loss with an int reduction,
grid_sampler's int modes (and its 2-D / 3-D forms), embedding_renorm_. Each runs the
nn.functional implementation."""
from __future__ import annotations

import numbers

from .. import _dtype as D
from .. import ops as _ops
from .._tensor import Tensor
from ..nn import functional as F
from ..nn.functional._embedding_bag import _bags
from ..nn.functional._linear import embedding_renorm_
from ._args import bool_arg
from .nn_forms import _reduction, pool_stride

_CONV = {1: (F.conv1d, F.conv_transpose1d), 2: (F.conv2d, F.conv_transpose2d),
         3: (F.conv3d, F.conv_transpose3d)}


def _int_list(value, n, name, position):
    """ATen's int[] argument: a list or tuple of ints (one value stands for every dim)."""
    if not isinstance(value, (list, tuple)) or not all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in value):
        raise TypeError(f"convolution(): argument '{name}' (position {position}) must be tuple "
                        f"of ints, not {type(value).__name__}")
    if len(value) == 1:
        return tuple(value) * n
    if len(value) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={list(value)}")
    return tuple(int(v) for v in value)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """ATen's convolution: batched input of 1, 2 or 3 spatial dims, int lists for the
    geometry, `transposed` choosing conv_transpose."""
    bool_arg("convolution", "transposed", 7, transposed)
    nd = weight.dim() - 2
    if nd < 1:
        raise RuntimeError("weight should have at least three dimensions")
    if nd not in _CONV:
        raise RuntimeError("unsupported ConvNd parameters")
    if input.dim() != weight.dim():
        raise RuntimeError(f"Expected {weight.dim()}-dimensional input for {weight.dim()}-"
                           f"dimensional weight {list(weight.shape)}, but got {input.dim()}-"
                           f"dimensional input of size {list(input.shape)} instead")
    stride = _int_list(stride, nd, "stride", 4)
    padding = _int_list(padding, nd, "padding", 5)
    dilation = _int_list(dilation, nd, "dilation", 6)
    output_padding = _int_list(output_padding, nd, "output_padding", 8)
    conv, conv_t = _CONV[nd]
    if transposed:
        return conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation)
    return conv(input, weight, bias, stride, padding, dilation, groups)


def conv_tbc(input, weight, bias, pad=0):
    """A 1-D convolution over (time, batch, channels) input with a (kernel, in, out)
    weight: conv1d over the transposed operands."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if not isinstance(bias, Tensor):
        raise TypeError(f"conv_tbc(): argument 'bias' (position 3) must be Tensor, not "
                        f"{type(bias).__name__}")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    if isinstance(pad, bool) or not isinstance(pad, numbers.Integral):
        raise TypeError(f"conv_tbc(): argument 'pad' (position 4) must be int, not "
                        f"{type(pad).__name__}")
    steps = input.shape[0] + 2 * pad - weight.shape[0] + 1
    if steps < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {steps}: "
                           f"[{steps}, {input.shape[1]}, {weight.shape[2]}]")
    if pad < 0:                          # ATen's negative pad crops the time dim
        input, pad = input[-pad:input.shape[0] + pad], 0
    out = F.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1).contiguous()


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    return tuple(F.max_pool1d_with_indices(input, kernel_size, pool_stride(stride), padding,
                                           dilation, ceil_mode, return_indices=True))


_BAG_MODES = {0: "sum", 1: "mean", 2: "max"}
_FAST_SUM = (D.float32, D.float16, D.bfloat16)


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """ATen's embedding_bag: (output, offset2bag, bag_size, max_indices). The three index
    results are ATen's CPU ones: offset2bag (each index's bag) is empty where ATen's sum
    takes its fast path (a float32/16 or bfloat16 table, no padding_idx); bag_size and
    max_indices are zeros for sum (one per offset), the bags' sizes (padding left out) for
    mean, and for max the sizes and each output element's row. Indices (1-D, or 2-D taken
    flat) are split by `offsets` as given."""
    if not isinstance(offsets, Tensor):
        raise TypeError(f"embedding_bag(): argument 'offsets' (position 3) must be Tensor, not "
                        f"{type(offsets).__name__}")
    for name, pos, value in (("scale_grad_by_freq", 4, scale_grad_by_freq), ("sparse", 6, sparse),
                             ("include_last_offset", 8, include_last_offset)):
        bool_arg("embedding_bag", name, pos, value)
    if mode not in _BAG_MODES or isinstance(mode, bool):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    num = weight.shape[0]
    pad = None
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} "
                               f"through {num - 1}, but got {padding_idx}")
        pad = padding_idx % num
    flat = indices.reshape(-1) if indices.dim() == 2 else indices
    output = F.embedding_bag(flat, weight, offsets, None, 2, scale_grad_by_freq,
                             _BAG_MODES[mode], sparse, per_sample_weights,
                             include_last_offset, pad)
    _, bag, nbags = _bags(flat, offsets, include_last_offset)
    itype, dev = indices.dtype, indices.device
    if mode == 0:                       # one zero per offset, the last one included
        zeros = _ops.zeros(offsets.shape[0], dtype=itype, device=dev)
        fast = weight.dtype in _FAST_SUM and pad is None
        offset2bag = _ops.empty(0, dtype=itype, device=dev) if fast else bag.to(itype)
        return output, offset2bag, zeros, zeros.clone()
    keep = _ops.ones(flat.shape[0], dtype=itype, device=dev) if pad is None else \
        (flat != pad).to(itype)
    bag_size = _ops.zeros(nbags, dtype=itype, device=dev).index_add(0, bag, keep)
    if mode == 1:
        return output, bag.to(itype), bag_size, bag_size.clone()
    return output, bag.to(itype), bag_size, _max_rows(weight, flat, bag, keep, output, nbags)


def _max_rows(weight, flat, bag, keep, output, nbags):
    """Each max output element's table row: the first index of its bag whose row holds
    the maximum (0 for an empty bag), as ATen's CPU kernel keeps the first."""
    n = flat.shape[0]
    rows = weight.detach().index_select(0, flat.long())
    hit = (rows == output.detach().index_select(0, bag)) & (keep != 0).unsqueeze(1)
    position = _ops.arange(n, device=flat.device).unsqueeze(1).expand(n, weight.shape[1])
    candidates = _ops.where(hit, position, _ops.full_like(position, n))
    first = _ops.full((nbags, weight.shape[1]), n, dtype=D.int64, device=flat.device)
    first = first.scatter_reduce(0, bag.unsqueeze(1).expand_as(candidates), candidates, "amin")
    padded = _ops.cat([flat.long(), _ops.zeros(1, dtype=D.int64, device=flat.device)])
    return padded[first].to(flat.dtype)


def native_dropout(input, p, train):
    """(output, mask): in training (train true or None) a Bernoulli(1 - p) bool mask and
    input * mask * (1 / (1 - p)), as ATen's CPU kernel computes them; else a copy and an
    all-true mask."""
    if input.numel() == 0:
        return input, _ops.empty_like(input)
    if train is None or train:
        p1m = 1.0 - p
        scale = 0.0 if p1m == 0 else 1.0 / p1m
        mask = _ops.empty(input.shape, dtype=D.bool_, device=input.device).bernoulli_(p1m)
        return input * mask * scale, mask
    return input.clone(), _ops.ones(input.shape, dtype=D.bool_, device=input.device)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
             zero_infinity=False):
    """F.ctc_loss with ATen's int reduction; omitted, it is 0 (none), as PyTorch's Python
    binding reads it (see the losses in nn_forms)."""
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction(reduction, "ctc_loss", 6), zero_infinity)


_INTERPOLATION = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """F.grid_sample with ATen's enums: interpolation 0 bilinear, 1 nearest, 2 bicubic;
    padding 0 zeros, 1 border, 2 reflection (another value raises here, where ATen's CPU
    kernel reads memory it never wrote)."""
    bool_arg("grid_sampler", "align_corners", 5, align_corners)
    if interpolation_mode not in _INTERPOLATION or isinstance(interpolation_mode, bool):
        raise RuntimeError(f"grid_sampler(): expected interpolation_mode to be 0 (bilinear), "
                           f"1 (nearest) or 2 (bicubic), but got: '{interpolation_mode}'")
    if padding_mode not in _PADDING or isinstance(padding_mode, bool):
        raise RuntimeError(f"grid_sampler(): expected padding_mode to be 0 (zeros), 1 "
                           f"(border) or 2 (reflection), but got: '{padding_mode}'")
    return F.grid_sample(input, grid, _INTERPOLATION[interpolation_mode],
                         _PADDING[padding_mode], bool(align_corners))


def _grid_sampler_nd(nd):
    def sampler(input, grid, interpolation_mode, padding_mode, align_corners):
        bool_arg(f"grid_sampler_{nd}d", "align_corners", 5, align_corners)
        if input.dim() != nd + 2 or grid.dim() != nd + 2:
            raise RuntimeError(f"grid_sampler(): expected {nd + 2}D input and grid with same "
                               f"number of dimensions, but got input with sizes "
                               f"{list(input.shape)} and grid with sizes {list(grid.shape)}")
        return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)
    sampler.__name__ = sampler.__qualname__ = f"grid_sampler_{nd}d"
    sampler.__doc__ = f"grid_sampler for {nd + 2}-D input only."
    return sampler


def affine_grid_generator(theta, size, align_corners):
    bool_arg("affine_grid_generator", "align_corners", 3, align_corners)
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    return F.affine_grid(theta, list(size), bool(align_corners))


PUBLIC = {
    "convolution": convolution, "conv_tbc": conv_tbc,
    "max_pool1d_with_indices": max_pool1d_with_indices, "embedding_bag": embedding_bag,
    "native_dropout": native_dropout, "ctc_loss": ctc_loss,
    "native_channel_shuffle": F.native_channel_shuffle, "grid_sampler": grid_sampler,
    "grid_sampler_2d": _grid_sampler_nd(2), "grid_sampler_3d": _grid_sampler_nd(3),
    "embedding_renorm_": embedding_renorm_,
    "affine_grid_generator": affine_grid_generator,
}
