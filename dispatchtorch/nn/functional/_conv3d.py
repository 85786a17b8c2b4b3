"""3-d convolutions as sums of 2-d ones: one conv2d per kernel depth tap, with the
output depths folded into the batch, so a backend's fused conv2d serves both."""
from __future__ import annotations

from ... import ops as _ops
from ..._tensor import Tensor
from .._tuples import triple
from ._conv import _batched, _check_weight, _unbatch, conv1d, conv2d, conv_transpose2d
from ._channels_last import in_input_format


def _same_pad3d(x, kernel, dilation, stride):
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    from ._vision import pad
    spec = []
    for k, d in zip(reversed(kernel), reversed(dilation)):
        total = d * (k - 1)
        spec += [total // 2, total - total // 2]
    return pad(x, spec)


@in_input_format(weight=True)
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    x, added = _batched(input, "conv3d", 3)
    _check_weight("conv3d", x, weight, bias, groups)
    stride, dilation = triple(stride), triple(dilation)
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    kernel = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                             f"['valid', 'same']")
        if padding == "same":
            x = _same_pad3d(x, kernel, dilation, stride)
        padding = (0, 0, 0)
    padding = triple(padding)
    if padding[0]:
        x = _pad_depth(x, padding[0])
    n, c, depth = x.shape[:3]
    kd, sd, dd = kernel[0], stride[0], dilation[0]
    out_d = (depth - dd * (kd - 1) - 1) // sd + 1
    if out_d <= 0:
        raise RuntimeError(f"conv3d: calculated output depth {out_d} is too small (input "
                           f"{list(input.shape)}, kernel {list(kernel)})")
    total = None
    for k in range(kd):
        start = k * dd
        xs = x[:, :, start:start + (out_d - 1) * sd + 1:sd]          # (N, C, Do, H, W)
        xs = xs.transpose(1, 2).reshape((n * out_d, c) + tuple(x.shape[3:]))
        y = conv2d(xs, weight[:, :, k], None, stride[1:], padding[1:], dilation[1:], groups)
        total = y if total is None else total + y
    o = total.shape[1]
    out = total.reshape((n, out_d, o) + tuple(total.shape[2:])).transpose(1, 2)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1, 1)
    return _unbatch(out.contiguous(), added)


def _pad_depth(x, p):
    from ._vision import pad
    return pad(x, (0, 0, 0, 0, p, p))


@in_input_format(weight=True)
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    x, added = _batched(input, "conv_transpose3d", 3)
    _check_weight("conv_transpose3d", x, weight, bias, groups, transposed=True)
    stride, padding, dilation = triple(stride), triple(padding), triple(dilation)
    output_padding = triple(output_padding)
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= s and op >= d:
            raise RuntimeError(f"output padding must be smaller than either stride or dilation, "
                               f"but got output_padding={output_padding}, stride={stride}, "
                               f"dilation={dilation}")
    n, c, depth = x.shape[:3]
    kd, sd, dd = weight.shape[2], stride[0], dilation[0]
    full = (depth - 1) * sd + dd * (kd - 1) + 1 + output_padding[0]
    out_d = full - 2 * padding[0]
    if out_d <= 0:
        raise RuntimeError(f"conv_transpose3d: the output depth {out_d} is too small")
    planes = x.transpose(1, 2).reshape((n * depth, c) + tuple(x.shape[3:]))
    acc = None
    for k in range(kd):
        y = conv_transpose2d(planes, weight[:, :, k], None, stride[1:], padding[1:],
                             output_padding[1:], groups, dilation[1:])
        y = y.reshape((n, depth) + tuple(y.shape[1:]))
        idx = _ops.arange(depth, device=x.device) * sd + k * dd
        if acc is None:
            acc = _ops.zeros((n, full) + tuple(y.shape[2:]), dtype=y.dtype, device=y.device)
        acc = acc.index_add(1, idx, y)
    out = acc.narrow(1, padding[0], out_d).transpose(1, 2)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1, 1)
    return _unbatch(out.contiguous(), added)


def conv_tbc(input, weight, bias, pad=0):
    """Time-batch-channel convolution: input (T, B, C_in), weight (k, C_in, C_out)."""
    if not isinstance(input, Tensor) or input.dim() != 3 or weight.dim() != 3:
        raise RuntimeError("conv_tbc: input must be 3-D (time, batch, channel) and weight 3-D "
                           "(kernel, in, out)")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)
