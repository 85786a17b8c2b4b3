"""CPU kernels of max_pool2d and its backward (the max_pool2d and max_pool2d_backward
rows): one numpy call per kernel offset over strided views of the input, instead of the
decomposition's dozen dispatched ops.

Which element gets a window's gradient is PyTorch's choice (its CPU kernel keeps the
index of `val > max || isnan(val)`, scanning the window row-major): the first maximum,
or the last NaN of a window holding one. When windows do not overlap (stride >= kernel
extent, the usual MaxPool2d(2)) each input element has one window, and the gradient is
written straight into the output without a padded accumulator.
"""
from __future__ import annotations

import numpy as np

from . import parallel as P


def _count_extra(size, kernel, stride, padding, dilation, count):
    """The end padding ceil_mode's last windows reach past the padded input."""
    return tuple(max(0, (o - 1) * s + d * (k - 1) + 1 - (n + 2 * p)) for n, k, s, p, d, o in
                 zip(size, kernel, stride, padding, dilation, count))


def _bordered(x, padding, extra, fill):
    """x (N, C, H, W), or a copy with `fill` around it when padded."""
    (ph, pw), (eh, ew) = padding, extra
    if not (ph or pw or eh or ew):
        return x
    n, c, h, w = x.shape
    buf = np.full((n, c, h + 2 * ph + eh, w + 2 * pw + ew), fill, x.dtype)
    buf[:, :, ph:ph + h, pw:pw + w] = x
    return buf


def _offsets(buf, kernel, dilation, stride, count):
    """For each kernel offset, row-major, the (N, C, OH, OW) view of buf it covers (basic
    slices: cheaper than as_strided, and any input strides do)."""
    (kh, kw), (dh, dw), (th, tw), (oh, ow) = kernel, dilation, stride, count
    for i in range(kh):
        rows = slice(i * dh, i * dh + (oh - 1) * th + 1, th)
        for j in range(kw):
            yield buf[:, :, rows, j * dw:j * dw + (ow - 1) * tw + 1:tw]


def _fill(dtype):
    return np.iinfo(dtype).min if dtype.kind in "iu" else -np.inf    # bfloat16's kind is V


def _batches(n, size, part):
    """part(slice) over the batch, cut among the pool's threads for large inputs."""
    if P.POOL.threads == 1 or size < P.THRESHOLD or n < 2:
        part(slice(None))
        return
    bounds = P.bounds(n, min(n, 2 * P.POOL.threads))
    P.POOL.run(len(bounds), lambda i: part(slice(*bounds[i])))


def max_pool2d(out, x, *, kernel_size, stride, padding, dilation, ceil_mode):
    count = out.shape[2:]
    extra = _count_extra(x.shape[2:], kernel_size, stride, padding, dilation, count)

    (kh, kw), (oh, ow) = kernel_size, count
    tiles = (tuple(stride) == (kh, kw) and tuple(dilation) == (1, 1) and not any(padding)
             and x.shape[2:] == (oh * kh, ow * kw) and x.flags.c_contiguous)

    def part(s):
        if tiles:
            _max_tiles(out[s], x[s], kh, kw)
            return
        buf = _bordered(x[s], padding, extra, _fill(x.dtype))
        views = _offsets(buf, kernel_size, dilation, stride, count)
        dst = out[s]
        np.copyto(dst, next(views))
        for v in views:
            np.maximum(dst, v, out=dst)
    _batches(x.shape[0], x.size, part)


def _max_tiles(out, x, kh, kw):
    """Windows that tile a contiguous x exactly (MaxPool2d(k) on a multiple of k): the
    maxima of shifted copies of the whole flat array (long contiguous loops, where the
    per-offset views' loops are ow elements long), then one strided read of the window
    corners. NaN propagates through np.maximum."""
    w = x.shape[3]
    flat = x.reshape(-1)
    size = flat.size - (kh - 1) * w
    rows = flat[:size] if kh == 1 else np.maximum(flat[:size], flat[w:w + size])
    for i in range(2, kh):
        np.maximum(rows, flat[i * w:i * w + size], out=rows)
    size -= kw - 1
    both = rows[:size] if kw == 1 else np.maximum(rows[:size], rows[1:1 + size])
    for j in range(2, kw):
        np.maximum(both, rows[j:j + size], out=both)
    item = both.itemsize
    corners = np.ndarray((out.size // out.shape[3], out.shape[3]), both.dtype,
                         np.ascontiguousarray(both), 0, (kh * w * item, kw * item))
    np.copyto(out.reshape(corners.shape), corners)


def max_pool2d_backward(out, grad_output, x, result, *, kernel_size, stride, padding, dilation,
                        ceil_mode):
    count = result.shape[2:]
    h, w = x.shape[2:]
    extra = _count_extra((h, w), kernel_size, stride, padding, dilation, count)
    (kh, kw), (dh, dw), (sh, sw), (ph, pw) = kernel_size, dilation, stride, padding
    disjoint = sh >= dh * (kh - 1) + 1 and sw >= dw * (kw - 1) + 1
    direct = disjoint and not (ph or pw or any(extra))
    nan = result.dtype.kind not in "iub" and bool(np.isnan(result).any())

    def part(s):
        g, r = grad_output[s], result[s]
        src = _bordered(x[s], padding, extra, _fill(x.dtype))
        if direct:
            acc = out[s]
            acc[...] = 0
        else:
            acc = np.zeros(src.shape, out.dtype)
        taken = np.zeros(r.shape, bool)
        hit = np.empty(r.shape, bool)
        share = np.empty(r.shape, out.dtype)
        pairs = list(zip(_offsets(src, kernel_size, dilation, stride, count),
                         _offsets(acc, kernel_size, dilation, stride, count)))
        for v, dst in pairs:                       # the first maximum
            np.equal(v, r, out=hit)
            hit &= ~taken
            taken |= hit
            if disjoint:                           # each element of acc in one window
                np.multiply(g, hit, out=dst, casting="unsafe")
            else:
                np.multiply(g, hit, out=share, casting="unsafe")
                dst += share
        if nan:                                    # the last NaN, where the window has one
            want = np.isnan(r)
            for v, dst in reversed(pairs):
                np.isnan(v, out=hit)
                hit &= want
                want &= ~hit
                np.multiply(g, hit, out=share, casting="unsafe")
                dst += share
        if not direct:
            out[s] = acc[:, :, ph:ph + h, pw:pw + w]
    _batches(x.shape[0], x.size, part)


KERNELS = {"max_pool2d": max_pool2d, "max_pool2d_backward": max_pool2d_backward}
