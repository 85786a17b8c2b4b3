"""Convolution, pooling and sliding blocks. The 1-d forms run as the 2-d rows on a
height-1 image, so a backend that fuses the 2-d rows speeds up both."""
from __future__ import annotations

from ..._tensor import Tensor
from ...ops import nn_ops as N
from ...ops._out import takes_out
from ...ops.nn_ops import windows as W
from .._tuples import adaptive_size, check_nonnegative, pair, single
from ._pad import pad
from ._channels_last import in_input_format


def _batched(input, name, dims):
    """input with its batch dim (unbatched inputs get one), and whether it was added."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.dim() == dims + 2:
        return input, False
    if input.dim() == dims + 1:
        return input.unsqueeze(0), True
    raise RuntimeError(f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to {name}, "
                       f"but got input of size: {list(input.shape)}")


def _unbatch(out, added):
    return out.squeeze(0) if added else out


def _check_weight(name, x, weight, bias, groups, transposed=False):
    if not isinstance(weight, Tensor):
        raise TypeError(f"{name}(): argument 'weight' must be Tensor, not {type(weight).__name__}")
    if weight.dim() != x.dim():
        raise RuntimeError(f"{name}: expected weight to be {x.dim()}-dimensional, but got weight of "
                           f"size {list(weight.shape)}")
    if groups < 1:
        raise RuntimeError("non-positive groups is not supported")
    c = x.shape[1]
    if transposed:
        if c != weight.shape[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected "
                               f"input{list(x.shape)} to have {weight.shape[0]} channels, but got "
                               f"{c} channels instead")
        out_channels = weight.shape[1] * groups
    else:
        if c != weight.shape[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
                               f"input{list(x.shape)} to have {weight.shape[1] * groups} channels, "
                               f"but got {c} channels instead")
        if weight.shape[0] % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                               f"at dimension 0, but got weight of size {list(weight.shape)}")
        out_channels = weight.shape[0]
    if c % groups:
        raise RuntimeError(f"Given groups={groups}, expected input{list(x.shape)} channels to be "
                           f"divisible by {groups}")
    if bias is not None and tuple(bias.shape) != (out_channels,):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be "
                           f"1-dimensional with {out_channels} elements, but got bias of size "
                           f"{list(bias.shape)} instead")
    if x.dtype is not weight.dtype:
        raise RuntimeError(f"expected scalar type {x.dtype.pt_name} but found "
                           f"{weight.dtype.pt_name} (conv: input and weight dtypes differ)")
    if bias is not None and bias.dtype is not x.dtype:
        raise RuntimeError(f"Input type ({x.dtype.pt_name}) and bias type ({bias.dtype.pt_name}) "
                           f"should be the same")


def _same_padding(input, kernel, dilation, stride, name):
    """padding='same' as PyTorch: total d*(k-1) per dim, the odd unit on the far side."""
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    sym, extra = [], []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        sym.append(total // 2)
        extra.append(total - 2 * (total // 2))
    if any(extra):
        spec = []
        for e in reversed(extra):
            spec += [0, e]
        input = pad(input, spec)
    return input, tuple(sym)


def _conv_padding(input, padding, kernel, dilation, stride, name):
    if isinstance(padding, str):
        if padding == "valid":
            return input, (0, 0)
        if padding == "same":
            return _same_padding(input, kernel, dilation, stride, name)
        raise ValueError(f"Invalid padding string {padding!r}, should be one of ['valid', 'same']")
    padding = pair(padding)
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    return input, padding


def _check_size(x, kernel, dilation, padding):
    for n, k, d, p in zip(x.shape[2:], kernel, dilation, padding):
        if n + 2 * p < d * (k - 1) + 1:
            size = " x ".join(str(s + 2 * q) for s, q in zip(x.shape[2:], padding))
            ks = " x ".join(str(d2 * (k2 - 1) + 1) for k2, d2 in zip(kernel, dilation))
            raise RuntimeError(f"Calculated padded input size per channel: ({size}). Kernel size: "
                               f"({ks}). Kernel size can't be greater than actual input size")


@in_input_format(weight=True)
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    x, added = _batched(input, "conv2d", 2)
    _check_weight("conv2d", x, weight, bias, groups)
    stride, dilation = pair(stride), pair(dilation)
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    kernel = tuple(weight.shape[2:])
    x, padding = _conv_padding(x, padding, kernel, dilation, stride, "conv2d")
    _check_size(x, kernel, dilation, padding)
    out = N.CONV2D(x, weight, bias, stride=stride, padding=padding, dilation=dilation, groups=groups)
    return _unbatch(out, added)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    x, added = _batched(input, "conv1d", 1)
    _check_weight("conv1d", x, weight, bias, groups)
    if isinstance(padding, str):
        if padding == "same":
            x, (_, p) = _same_padding(x.unsqueeze(2), (1,) + tuple(weight.shape[2:]),
                                      (1,) + single(dilation), (1,) + single(stride), "conv1d")
            x = x.squeeze(2)
            padding = p
        elif padding == "valid":
            padding = 0
        else:
            raise ValueError(f"Invalid padding string {padding!r}, should be one of ['valid', 'same']")
    out = conv2d(x.unsqueeze(2), weight.unsqueeze(2), bias, (1,) + single(stride),
                 (0,) + single(padding), (1,) + single(dilation), groups)
    return _unbatch(out.squeeze(2), added)


@in_input_format(weight=True)
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    x, added = _batched(input, "conv_transpose2d", 2)
    _check_weight("conv_transpose2d", x, weight, bias, groups, transposed=True)
    stride, padding, dilation = pair(stride), pair(padding), pair(dilation)
    output_padding = pair(output_padding)
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= s and op >= d:
            raise RuntimeError(f"output padding must be smaller than either stride or dilation, "
                               f"but got output_padding={output_padding}, stride={stride}, "
                               f"dilation={dilation}")
    for i in range(2):
        size = N.transposed_size(x.shape[2 + i], weight.shape[2 + i], stride[i], padding[i],
                                 dilation[i], output_padding[i])
        if size <= 0:
            raise RuntimeError(f"conv_transpose2d: the output size {size} along dim {2 + i} is "
                               f"too small (input {list(x.shape)}, padding {padding})")
    out = N.CONV_TRANSPOSE2D(x, weight, bias, stride=stride, padding=padding,
                             output_padding=output_padding, groups=groups, dilation=dilation)
    return _unbatch(out, added)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    x, added = _batched(input, "conv_transpose1d", 1)
    out = conv_transpose2d(x.unsqueeze(2), weight.unsqueeze(2), bias, (1,) + single(stride),
                           (0,) + single(padding), (0,) + single(output_padding), groups,
                           (1,) + single(dilation))
    return _unbatch(out.squeeze(2), added)


# -- pooling -----------------------------------------------------------------------------------------

def _half(v):
    """v / 2 as C++ divides ints (toward zero), for ATen's "at most half" bound."""
    return v // 2 if v >= 0 else -(-v // 2)


def _pool_args(name, x, kernel_size, stride, padding, dilation=1):
    """ATen's 2-D pooling checks, in its order and words: pooling_output_shape's for each
    of H and W (stride not zero, the padding's bounds), pool2d_shape_check's (kernel,
    stride and dilation positive, an output of at least 1x1)."""
    kernel = pair(kernel_size)
    stride = kernel if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
        else pair(stride)
    padding, dilation = pair(padding), pair(dilation)
    for k, st, p, d in zip(kernel, stride, padding, dilation):
        if st == 0:
            raise RuntimeError("stride should not be zero")
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > _half((k - 1) * d + 1):
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    for what, (h, w), names in (("kernel size", kernel, ("kH", "kW")),
                                ("stride", stride, ("dH", "dW")),
                                ("dilation", dilation, ("dilationH", "dilationW"))):
        if h <= 0 or w <= 0:
            raise RuntimeError(f"{what} should be greater than zero, but got {names[0]}: {h} "
                               f"{names[1]}: {w}")
    out = [(n + 2 * p - d * (k - 1) - 1) // st + 1
           for n, k, st, p, d in zip(x.shape[2:], kernel, stride, padding, dilation)]
    if min(out) < 1:
        c, h, w = x.shape[1:]
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{out[0]}x{out[1]}). Output size is too small")
    return kernel, stride, padding, dilation


@in_input_format()
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    x, added = _batched(input, "max_pool2d", 2)
    kernel, stride, padding, dilation = _pool_args("max_pool2d", x, kernel_size, stride, padding,
                                                   dilation)
    out = N.MAX_POOL2D(x, kernel_size=kernel, stride=stride, padding=padding, dilation=dilation,
                       ceil_mode=bool(ceil_mode))
    if not return_indices:
        return _unbatch(out, added)
    return _unbatch(out, added), _unbatch(_max_indices(x, kernel, stride, padding, dilation,
                                                       ceil_mode), added)


def _max_indices(x, kernel, stride, padding, dilation, ceil_mode):
    """PyTorch's return_indices: each maximum's flat position in its (H, W) plane."""
    from ... import ops
    from ...autograd.grad_mode import no_grad
    with no_grad():
        pos = N.max_pool_argmax(x, kernel, stride, padding, dilation, bool(ceil_mode))
        oh, ow = pos.shape[2:]
        i, j = pos // kernel[1], pos % kernel[1]
        rows = ops.arange(oh, device=x.device).reshape(oh, 1) * stride[0] - padding[0]
        cols = ops.arange(ow, device=x.device) * stride[1] - padding[1]
        return (rows + i * dilation[0]) * x.shape[3] + cols + j * dilation[1]


def _check_max_pool1d(kernel, stride, padding, dilation):
    """ATen's check_max_pool1d, in its order and wording (not max_pool2d's)."""
    for name, value in (("kernel_size", kernel), ("stride", stride)):
        if value <= 0:
            raise RuntimeError(f"max_pool1d() {name} must be greater than zero, but got {value}")
    if padding < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {padding}")
    if padding > kernel // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but "
                           f"got padding={padding} and kernel_size={kernel}")
    if dilation <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {dilation}")


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    x, added = _batched(input, "max_pool1d", 1)
    if 0 in x.shape[1:]:              # only the batch dim may be empty
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")
    step = kernel_size if stride is None else stride
    k, st, p, d = (single(v)[0] for v in (kernel_size, step, padding, dilation))
    _check_max_pool1d(k, st, p, d)
    num = x.shape[-1] + 2 * p - d * (k - 1) - 1 + (st - 1 if ceil_mode else 0)
    width = num // st + 1                     # ATen's pooling_output_shape
    if ceil_mode and (width - 1) * st >= x.shape[-1] + p:
        width -= 1
    if width <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {width}")
    stride = None if stride is None else (1,) + single(stride)
    r = max_pool2d(x.unsqueeze(2), (1,) + single(kernel_size), stride, (0,) + single(padding),
                   (1,) + single(dilation), ceil_mode, return_indices)
    if return_indices:
        return _unbatch(r[0].squeeze(2), added), _unbatch(r[1].squeeze(2), added)
    return _unbatch(r.squeeze(2), added)


@takes_out("avg_pool2d")
@in_input_format()
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    x, added = _batched(input, "avg_pool2d", 2)
    kernel, stride, padding, _ = _pool_args("avg_pool2d", x, kernel_size, stride, padding)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    out = N.AVG_POOL2D(x, kernel_size=kernel, stride=stride, padding=padding,
                       ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
                       divisor_override=divisor_override)
    return _unbatch(out, added)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    x, added = _batched(input, "avg_pool1d", 1)
    stride = None if stride is None else (1,) + single(stride)
    out = avg_pool2d(x.unsqueeze(2), (1,) + single(kernel_size), stride, (0,) + single(padding),
                     ceil_mode, count_include_pad)
    return _unbatch(out.squeeze(2), added)


_ADAPTIVE: dict = {}


def _adaptive_matrix(n, o, x):
    """(o, n) averaging matrix of PyTorch's adaptive bins [floor(i*n/o), ceil((i+1)*n/o))."""
    key = (n, o, x._place, x.dtype)
    m = _ADAPTIVE.get(key)
    if m is None:
        import numpy as np
        from ... import ops
        a = np.zeros((o, n))
        for i in range(o):
            start, end = (i * n) // o, -(-((i + 1) * n) // o)
            a[i, start:end] = 1.0 / (end - start)
        m = ops.tensor(a, dtype=x.dtype, device=x.device)
        if len(_ADAPTIVE) < 256:
            _ADAPTIVE[key] = m
    return m


@in_input_format()
def adaptive_avg_pool2d(input, output_size):
    """Adaptive average pooling is separable: rows then columns, two small matmuls."""
    output_size = adaptive_size("adaptive_avg_pool2d", output_size, input, 2)
    x, added = _batched(input, "adaptive_avg_pool2d", 2)
    size = output_size if isinstance(output_size, (tuple, list)) else (output_size, output_size)
    h, w = x.shape[2:]
    oh, ow = (h if s is None else s for s, h in zip(size, (h, w)))
    if oh < 0 or ow < 0:
        raise RuntimeError(f"adaptive_avg_pool2d: elements of output_size must be greater than "
                           f"or equal to 0 but received {{{oh}, {ow}}}")
    if oh == 0 or ow == 0:      # an empty result, as PyTorch's
        return _unbatch((x[:, :, :1, :1] * 0).expand(*x.shape[:2], oh, ow).contiguous(), added)
    if oh == h and ow == w:
        return _unbatch(x.clone(), added)
    if h % oh == 0 and w % ow == 0:
        out = N.AVG_POOL2D(x, kernel_size=(h // oh, w // ow), stride=(h // oh, w // ow),
                           padding=(0, 0), ceil_mode=False, count_include_pad=True,
                           divisor_override=None)
        return _unbatch(out, added)
    out = _adaptive_matrix(h, oh, x) @ x @ _adaptive_matrix(w, ow, x).mT
    return _unbatch(out, added)


def adaptive_avg_pool1d(input, output_size):
    output_size = adaptive_size("adaptive_avg_pool1d", output_size, input, 1)
    x, added = _batched(input, "adaptive_avg_pool1d", 1)
    o = output_size[0] if isinstance(output_size, (tuple, list)) else output_size
    check_nonnegative("adaptive_avg_pool1d", (o,))
    return _unbatch(x @ _adaptive_matrix(x.shape[-1], o, x).mT, added)


# -- sliding blocks -------------------------------------------------------------------------------

def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    x, added = _batched(input, "unfold", 2)
    kernel, dilation, padding, stride = pair(kernel_size), pair(dilation), pair(padding), pair(stride)
    _check_size(x, kernel, dilation, padding)
    out = N.IM2COL(x, kernel_size=kernel, dilation=dilation, padding=padding, stride=stride)
    return _unbatch(out, added)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    if not isinstance(input, Tensor):
        raise TypeError(f"fold(): argument 'input' must be Tensor, not {type(input).__name__}")
    added = input.dim() == 2
    x = input.unsqueeze(0) if added else input
    if x.dim() != 3:
        raise RuntimeError(f"Expected 2D (unbatched) or 3D (batched) input to fold, but got input "
                           f"of size: {list(input.shape)}")
    size, kernel = pair(output_size), pair(kernel_size)
    dilation, padding, stride = pair(dilation), pair(padding), pair(stride)
    kk = kernel[0] * kernel[1]
    if x.shape[1] % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of "
                           f"kernel_size, but got input.size(1)={x.shape[1]} and kernel_size={kernel}")
    blocks = 1
    for o, k, s, p, d in zip(size, kernel, stride, padding, dilation):
        blocks *= W.out_size(o, k, s, p, d)
    if x.shape[2] != blocks:
        raise RuntimeError(f"Given output_size={size}, kernel_size={kernel}, dilation={dilation}, "
                           f"padding={padding}, stride={stride}, expected size of input's dimension "
                           f"2 to match the calculated number of sliding blocks {blocks}, but got "
                           f"input.size(2)={x.shape[2]}.")
    out = N.COL2IM(x, output_size=size, kernel_size=kernel, dilation=dilation, padding=padding,
                   stride=stride)
    return _unbatch(out, added)
