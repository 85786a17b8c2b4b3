"""3-d, adaptive-max, power-average and unpooling, from the 2-d rows.

Max and average pooling are separable: a window over (D, H, W) is a window over
(H, W) followed by one over D (for max, the first maximum in (d, h, w) order still
wins; for averages, each per-dim divisor multiplies). Adaptive max pooling gathers
each bin's positions, padded with -inf, and takes their max, one dim at a time.
"""
from __future__ import annotations

from ... import ops as _ops
from ..._tensor import Tensor
from ...ops._out import takes_out
from .._tuples import adaptive_size, check_nonnegative, single, triple
from ._conv import (_adaptive_matrix, _batched, _half, _unbatch, avg_pool1d, avg_pool2d,
                    max_pool2d)
from ._channels_last import in_input_format


def _pool3d_args(kernel_size, stride, padding, dilation=1):
    kernel = triple(kernel_size)
    stride = kernel if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
        else triple(stride)
    return kernel, stride, triple(padding), triple(dilation)


def _check_max_pool3d(x, kernel, stride, padding, dilation):
    """ATen's max_pool3d checks, in its order and words: pooling_output_shape's for each of
    T, H and W, then pool3d_shape_check's (the 2-D steps below would word them as 2-D)."""
    for k, st, p, d in zip(kernel, stride, padding, dilation):
        if st == 0:
            raise RuntimeError("stride should not be zero")
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > _half((k - 1) * d + 1):
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    for what, values, names in (("kernel size", kernel, ("kT", "kH", "kW")),
                                ("stride", stride, ("dT", "dH", "dW")),
                                ("dilation", dilation, ("dilationT", "dilationH", "dilationW"))):
        if min(values) <= 0:
            got = " ".join(f"{n}: {v}" for n, v in zip(names, values))
            raise RuntimeError(f"{what} should be greater than zero, but got {got}")
    out = [(n + 2 * p - d * (k - 1) - 1) // st + 1
           for n, k, st, p, d in zip(x.shape[2:], kernel, stride, padding, dilation)]
    if min(out) < 1:
        c, t, h, w = x.shape[1:]
        raise RuntimeError(f"Given input size: ({c}x{t}x{h}x{w}). Calculated output size: "
                           f"({c}x{out[0]}x{out[1]}x{out[2]}). Output size is too small")


def _nonempty_3d(input, x):
    """PyTorch's max_pool3d: only the batch dim may be empty."""
    for i, n in enumerate(x.shape[1:]):
        if n == 0:
            raise RuntimeError(f"max_pool3d: Expected input's non-batch dimensions to have "
                               f"positive length, but input has a shape of {list(input.shape)} "
                               f"and non-batch dimension {i + (input.dim() == 5)} has length zero!")


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    x, added = _batched(input, "max_pool3d", 3)
    _nonempty_3d(input, x)
    k, s, p, d = _pool3d_args(kernel_size, stride, padding, dilation)
    _check_max_pool3d(x, k, s, p, d)
    n, c, depth, h, w = x.shape
    v1, i1 = max_pool2d(x.reshape(n, c * depth, h, w), k[1:], s[1:], p[1:], d[1:], ceil_mode,
                        True)
    oh, ow = v1.shape[2:]
    v2, i2 = max_pool2d(v1.reshape(n, c, depth, oh * ow), (k[0], 1), (s[0], 1), (p[0], 0),
                        (d[0], 1), ceil_mode, True)
    od = v2.shape[2]
    out = v2.reshape(n, c, od, oh, ow)
    dep = i2 // (oh * ow)                                              # (N, C, Do, Ho*Wo)
    hw = i1.reshape(n, c, depth, oh * ow).gather(2, dep)
    idx = (dep * (h * w) + hw).reshape(n, c, od, oh, ow)
    return _unbatch(out, added), _unbatch(idx, added)


@in_input_format()
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if return_indices:
        return max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    x, added = _batched(input, "max_pool3d", 3)
    _nonempty_3d(input, x)
    k, s, p, d = _pool3d_args(kernel_size, stride, padding, dilation)
    _check_max_pool3d(x, k, s, p, d)
    n, c, depth, h, w = x.shape
    v1 = max_pool2d(x.reshape(n, c * depth, h, w), k[1:], s[1:], p[1:], d[1:], ceil_mode)
    oh, ow = v1.shape[2:]
    v2 = max_pool2d(v1.reshape(n, c, depth, oh * ow), (k[0], 1), (s[0], 1), (p[0], 0),
                    (d[0], 1), ceil_mode)
    return _unbatch(v2.reshape(n, c, v2.shape[2], oh, ow), added)


@in_input_format()
def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    from ._conv import max_pool1d
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


@takes_out("avg_pool3d")
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    x, added = _batched(input, "avg_pool3d", 3)
    k, s, p, _ = _pool3d_args(kernel_size, stride, padding)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    n, c, depth, h, w = x.shape
    ovr = 1 if divisor_override is not None else None
    v1 = avg_pool2d(x.reshape(n, c * depth, h, w), k[1:], s[1:], p[1:], ceil_mode,
                    count_include_pad, ovr)
    oh, ow = v1.shape[2:]
    v2 = avg_pool2d(v1.reshape(n, c, depth, oh * ow), (k[0], 1), (s[0], 1), (p[0], 0), ceil_mode,
                    count_include_pad, ovr)
    out = v2.reshape(n, c, v2.shape[2], oh, ow)
    if divisor_override is not None:
        out = out / divisor_override
    return _unbatch(out, added)


def adaptive_avg_pool3d(input, output_size):
    output_size = adaptive_size("adaptive_avg_pool3d", output_size, input, 3)
    x, added = _batched(input, "adaptive_avg_pool3d", 3)
    size = triple(output_size) if not isinstance(output_size, (tuple, list)) else \
        tuple(output_size)
    check_nonnegative("adaptive_avg_pool3d", [n if o is None else o for n, o in
                                              zip(x.shape[2:], size)])
    out = x
    for i, (n, o) in enumerate(zip(x.shape[2:], size)):
        o = n if o is None else o
        if o != n:
            out = (out.movedim(2 + i, -1) @ _adaptive_matrix(n, o, x).mT).movedim(-1, 2 + i)
    return _unbatch(out.contiguous() if out is not x else x.clone(), added)


def _bins(n, o):
    starts = [(i * n) // o for i in range(o)]
    ends = [-(-((i + 1) * n) // o) for i in range(o)]
    width = max(e - s for s, e in zip(starts, ends))
    return [[s + j if s + j < e else n for j in range(width)] for s, e in zip(starts, ends)]


def _separable_max(x, positions, return_indices):
    """Max over windows that are products of per-dim position lists. positions[k]
    (N, C, o_k, K_k) lists the input positions of each output's window along spatial
    dim k; position n_k (one past the end) reads -inf. Returns values and, when asked,
    each maximum's flat index in the input plane (first maximum in scan order, or the
    last NaN)."""
    dims = len(positions)
    spatial = tuple(x.shape[2:])
    n, c = x.shape[:2]
    out, idx = x, []              # idx: the chosen position along each dim done so far
    for k in reversed(range(dims)):
        dim = 2 + k
        pos = positions[k]
        o, width = pos.shape[-2:]
        moved = out.movedim(dim, -1)
        lead = tuple(moved.shape[:-1])
        fill = _ops.full(lead + (1,), float("-inf"), dtype=x.dtype, device=x.device)
        view = pos.reshape((n, c) + (1,) * (dims - 1) + (o, width)).expand(lead + (o, width))
        gathered = _ops.cat([moved, fill], -1).gather(-1, view.reshape(lead + (o * width,)))
        windows = gathered.reshape(lead + (o, width))
        values, arg = windows.max(-1)
        if x.dtype.is_floating_point:     # a window with NaN: its last NaN, as PyTorch's kernel
            last = (width - 1) - windows.flip(-1).argmax(-1)
            arg = _ops.where(values != values, last, arg)
            values = windows.gather(-1, arg.unsqueeze(-1)).squeeze(-1)   # g goes there too
        chosen = view.gather(-1, arg.unsqueeze(-1)).squeeze(-1).movedim(-1, dim)
        out = values.movedim(-1, dim)
        idx = [t.gather(dim, chosen) for t in idx] + [chosen]
    flat, stride = None, 1
    for k, t in zip(reversed(range(dims)), idx):
        flat = t * stride if flat is None else flat + t * stride
        stride *= spatial[k]
    return out.contiguous(), (flat if return_indices else None)


def _adaptive_max(name, input, output_size, dims, return_indices):
    output_size = adaptive_size(name, output_size, input, dims)
    x, added = _batched(input, name, dims)
    if not isinstance(output_size, (tuple, list)):
        output_size = (output_size,) * dims
    if len(output_size) != dims:
        raise RuntimeError(f"{name}: output_size must be {dims} ints, got {output_size}")
    positions = []
    for k, n in enumerate(x.shape[2:]):
        o = n if output_size[k] is None else int(output_size[k])
        if o <= 0:
            raise RuntimeError(f"{name}: elements of output_size must be greater than or equal "
                               f"to 0 but received {output_size}")
        pos = _ops.tensor(_bins(n, o), device=x.device)
        positions.append(pos.expand((x.shape[0], x.shape[1]) + tuple(pos.shape)))
    out, flat = _separable_max(x, positions, return_indices)
    out = _unbatch(out, added)
    return (out, _unbatch(flat, added)) if return_indices else out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    return _adaptive_max("adaptive_max_pool1d", input, output_size, 1, return_indices)


@in_input_format()
def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _adaptive_max("adaptive_max_pool2d", input, output_size, 2, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _adaptive_max("adaptive_max_pool3d", input, output_size, 3, return_indices)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool3d(input, output_size, True)


# -- power-average pooling ------------------------------------------------------------------------

def _lp(input, norm_type, kernel, pooled):
    """PyTorch's (sign(s) * relu(|s|) * prod(kernel)) ** (1/p) of the window mean s."""
    count = 1
    for k in kernel:
        count *= k
    s = pooled
    return (s.sign() * s.abs().relu() * count).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    k = single(kernel_size)
    pooled = avg_pool1d(input.pow(norm_type), k, stride, 0, ceil_mode)
    return _lp(input, norm_type, k, pooled)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    from .._tuples import pair
    k = pair(kernel_size)
    pooled = avg_pool2d(input.pow(norm_type), k, stride, 0, ceil_mode)
    return _lp(input, norm_type, k, pooled)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    k = triple(kernel_size)
    pooled = avg_pool3d(input.pow(norm_type), k, stride, 0, ceil_mode)
    return _lp(input, norm_type, k, pooled)


# -- unpooling ------------------------------------------------------------------------------------

def _max_unpool(name, input, indices, kernel_size, stride, padding, output_size, dims, tup):
    if not isinstance(input, Tensor) or not isinstance(indices, Tensor):
        raise TypeError(f"{name}(): input and indices must be Tensors")
    x, added = _batched(input, name, dims)
    ind = indices.unsqueeze(0) if added else indices
    if tuple(ind.shape) != tuple(x.shape):
        raise RuntimeError(f"{name}: Expected shape of indices to be same as that of the input "
                           f"tensor ({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    k = tup(kernel_size)
    s = k if stride is None else tup(stride)
    p = tup(padding)
    default = [(n - 1) * si - 2 * pi + ki for n, si, pi, ki in zip(x.shape[2:], s, p, k)]
    if output_size is None:
        size = default
    else:
        size = [int(v) for v in list(output_size)[-dims:]]
        for i, (want, d, si) in enumerate(zip(size, default, s)):
            if not d - si < want < d + si:
                raise ValueError(f"invalid output_size \"{list(output_size)}\" (dim {i} must be "
                                 f"between {d - si} and {d + si})")
    n, c = x.shape[:2]
    total = 1
    for v in size:
        total *= v
    flat_idx = ind.reshape(n, c, -1)
    if flat_idx.numel() and (int(flat_idx.amin().item()) < 0 or
                             int(flat_idx.amax().item()) >= total):
        raise RuntimeError(f"{name}: Found an invalid max index: {int(flat_idx.amax().item())} "
                           f"(output volumes are of size {'x'.join(map(str, size))}")
    out = _ops.zeros((n, c, total), dtype=x.dtype, device=x.device)
    out = out.scatter(2, flat_idx, x.reshape(n, c, -1))
    return _unbatch(out.reshape((n, c) + tuple(size)), added)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool("max_unpool1d", input, indices, kernel_size, stride, padding,
                       output_size, 1, single)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    from .._tuples import pair
    return _max_unpool("max_unpool2d", input, indices, kernel_size, stride, padding,
                       output_size, 2, pair)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool("max_unpool3d", input, indices, kernel_size, stride, padding,
                       output_size, 3, triple)


# -- fractional max pooling -------------------------------------------------------------------------

def _intervals(sample, n, o, k):
    """ATen's generate_intervals, in float32 as its float kernel computes it."""
    import numpy as np
    seq = np.zeros(o, dtype=np.int64)
    if o > 1:
        alpha = np.float32(n - k) / np.float32(o - 1)
        for i in range(o - 1):
            seq[i] = int(np.float32(i + sample) * alpha) - int(np.float32(sample) * alpha)
    if o > 0:
        seq[o - 1] = n - k
    return seq


def _fractional(name, input, kernel_size, output_size, output_ratio, return_indices, samples,
                dims, tup, sample_order):
    import numpy as np
    x, added = _batched(input, name, dims)
    kernel = tup(kernel_size)
    spatial = tuple(x.shape[2:])
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output_size or an "
                             f"output_ratio")
        ratio = (output_ratio,) * dims if not isinstance(output_ratio, (tuple, list)) else \
            tuple(output_ratio)
        output_size = [int(n * r) for n, r in zip(spatial, ratio)]
    out_size = tup(output_size) if not isinstance(output_size, (tuple, list)) else \
        tuple(output_size)
    for n, o, k in zip(spatial, out_size, kernel):
        if o + k - 1 > n:
            raise RuntimeError(f"{name}(): pool size {k} too large relative to input size {n} "
                               f"for output size {o}")
    n_batch, c = x.shape[:2]
    if samples is None:
        samples = _ops.rand((n_batch, c, dims), dtype=x.dtype, device=x.device)
    s = samples.detach().cpu().numpy().astype(np.float32).reshape(n_batch, c, dims)
    positions = []
    for k in range(dims):
        col = sample_order[k]
        pos = np.zeros((n_batch, c, out_size[k], kernel[k]), dtype=np.int64)
        for b in range(n_batch):
            for ch in range(c):
                seq = _intervals(s[b, ch, col], spatial[k], out_size[k], kernel[k])
                pos[b, ch] = seq[:, None] + np.arange(kernel[k])[None, :]
        positions.append(_ops.tensor(pos, device=x.device))
    out, flat = _separable_max(x, positions, return_indices)
    out = _unbatch(out, added)
    return (out, _unbatch(flat, added)) if return_indices else out


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Max over pseudo-random overlapping windows (Graham, 2014); the window starts
    follow ATen's intervals for the given (N, C, 2) samples (width first)."""
    from .._tuples import pair
    return _fractional("fractional_max_pool2d", input, kernel_size, output_size, output_ratio,
                       return_indices, _random_samples, 2, pair, (1, 0))


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    return _fractional("fractional_max_pool3d", input, kernel_size, output_size, output_ratio,
                       return_indices, _random_samples, 3, triple, (0, 1, 2))


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=True, _random_samples=None):
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=True, _random_samples=None):
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)
