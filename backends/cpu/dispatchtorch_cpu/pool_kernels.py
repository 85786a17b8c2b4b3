"""CPU kernels of max_pool2d and its backward (the max_pool2d and max_pool2d_backward
rows): one numpy call per kernel offset over strided views, instead of the
decomposition's dozen dispatched ops.

The views are taken of spatial-major copies (H, W, N*C): numpy's loops run along the
last axis, and in NCHW the per-offset views' last axis is only OW long (4 elements on
the digits CNN: 8192 loops per call), while N*C is contiguous and long. Windows that
tile a contiguous input (MaxPool2d(k) on a multiple of k) take a shorter forward:
maxima of shifted copies of the flat array.

Which element gets a window's gradient is PyTorch's choice (its CPU kernel keeps the
index of `val > max || isnan(val)`, scanning the window row-major): the first maximum
(whose value the forward returns too: the sign of a tied zero),
or the last NaN of a window holding one. When windows do not overlap (stride >= kernel
extent, the usual MaxPool2d(2)) each input element has one window, and the gradient is
written without accumulating.
"""
from __future__ import annotations

import numpy as np

from . import parallel as P


def _count_extra(size, kernel, stride, padding, dilation, count):
    """The end padding ceil_mode's last windows reach past the padded input."""
    return tuple(max(0, (o - 1) * s + d * (k - 1) + 1 - (n + 2 * p)) for n, k, s, p, d, o in
                 zip(size, kernel, stride, padding, dilation, count))


_PITCH_PAD = 16     # spare elements per (h, w) row of N*C: see _spatial_major


def _spatial_major(x, padding, extra, fill):
    """x (n, C, H, W) as an (Hp, Wp, n*C) array, `fill` around it when padded. Its rows
    are _PITCH_PAD elements longer than n*C: with a power-of-two n*C (2048 on the digits
    CNN) the copy back to planes would read at a power-of-two stride, every read in one
    cache set (measured 6x slower)."""
    (ph, pw), (eh, ew) = padding, extra
    n, c, h, w = x.shape
    m = n * c
    buf = np.empty((h + 2 * ph + eh, w + 2 * pw + ew, m + _PITCH_PAD), x.dtype)[:, :, :m]
    if ph or pw or eh or ew:
        buf[...] = fill
    buf[ph:ph + h, pw:pw + w] = x.reshape(m, h, w).transpose(1, 2, 0)
    return buf


def _zeros_like(buf, dtype):
    return np.zeros(buf.shape[:2] + (buf.shape[2] + _PITCH_PAD,), dtype)[:, :, :buf.shape[2]]


def _offsets(buf, kernel, dilation, stride, count):
    """For each kernel offset, row-major, the (OH, OW, n*C) view of a spatial-major buffer
    it covers (basic slices: cheaper than as_strided, ~10 us a call)."""
    (kh, kw), (dh, dw), (th, tw), (oh, ow) = kernel, dilation, stride, count
    for i in range(kh):
        rows = slice(i * dh, i * dh + (oh - 1) * th + 1, th)
        for j in range(kw):
            yield buf[rows, j * dw:j * dw + (ow - 1) * tw + 1:tw]


def _to_planes(dst, src):
    """dst (n, C, H, W) = src (H, W, n*C)."""
    n, c, h, w = dst.shape
    np.copyto(dst.reshape(n * c, h, w), src.transpose(2, 0, 1), casting="unsafe")


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

    kh, kw = kernel_size
    tiles = _tiles(x, kernel_size, stride, padding, dilation, count)

    def part(s):
        if tiles:
            _max_tiles(out[s], x[s], kh, kw)
            return
        buf = _spatial_major(x[s], padding, extra, _fill(x.dtype))
        views = _offsets(buf, kernel_size, dilation, stride, count)
        first = next(views)
        dst = _zeros_like(first, out.dtype)
        np.copyto(dst, first)
        for v in views:                 # dst second: numpy's maximum keeps it at a tie
            np.maximum(v, dst, out=dst)
        _to_planes(out[s], dst)
    _batches(x.shape[0], x.size, part)


def _tiles(x, kernel, stride, padding, dilation, count):
    """Whether the windows tile a contiguous x exactly (each element in one window)."""
    (kh, kw), (oh, ow) = kernel, count
    return (tuple(stride) == (kh, kw) and tuple(dilation) == (1, 1) and not any(padding)
            and x.shape[2:] == (oh * kh, ow * kw) and x.flags.c_contiguous)


def _max_tiles(out, x, kh, kw):
    """Windows that tile a contiguous x exactly (MaxPool2d(k) on a multiple of k): the
    maxima of shifted copies of the whole flat array (long contiguous loops, where the
    per-offset views' loops are ow elements long), then one strided read of the window
    corners. NaN propagates through np.maximum."""
    w = x.shape[3]
    flat = x.reshape(-1)
    # along each window row first, then across rows, the earlier operand second (numpy's
    # maximum keeps its second at a tie): a tie keeps the row-major first element, as
    # PyTorch's `val > max` scan (max_pool2d of [0, -0.0] is 0, of [-0.0, 0] -0.0)
    size = flat.size - (kw - 1)
    cols = flat[:size] if kw == 1 else np.maximum(flat[1:1 + size], flat[:size])
    for j in range(2, kw):
        np.maximum(flat[j:j + size], cols, out=cols)
    size -= (kh - 1) * w
    both = cols[:size] if kh == 1 else np.maximum(cols[w:w + size], cols[:size])
    for i in range(2, kh):
        np.maximum(cols[i * w:i * w + size], both, out=both)
    item = both.itemsize
    corners = np.ndarray((out.size // out.shape[3], out.shape[3]), both.dtype,
                         np.ascontiguousarray(both), 0, (kh * w * item, kw * item))
    np.copyto(out.reshape(corners.shape), corners)


def _at(hit, g):
    """g where hit, +0.0 elsewhere, as PyTorch's gradient (g * hit would turn an inf g
    into NaN and a negative one into -0.0 off the maximum)."""
    return np.where(hit, g, g.dtype.type(0))


def _plus_zero(g):
    """g + 0.0 in place (a copy of grad_output): PyTorch adds each g into a zeroed
    grad_input, so a -0.0 g gives the maximum +0.0; written as is it stayed -0.0."""
    if g.dtype.kind not in "iub":
        g += 0


def max_pool2d_backward(out, grad_output, x, result, *, kernel_size, stride, padding, dilation,
                        ceil_mode):
    count = result.shape[2:]
    h, w = x.shape[2:]
    extra = _count_extra((h, w), kernel_size, stride, padding, dilation, count)
    (kh, kw), (dh, dw), (sh, sw), (ph, pw) = kernel_size, dilation, stride, padding
    disjoint = sh >= dh * (kh - 1) + 1 and sw >= dw * (kw - 1) + 1
    nan = result.dtype.kind not in "iub" and bool(np.isnan(result).any())
    tiles = _tiles(x, kernel_size, stride, padding, dilation, count)

    def part(s):
        if tiles:
            _max_tiles_backward(out[s], grad_output[s], x[s], result[s], kh, kw, nan)
            return
        # padding never takes the gradient (PyTorch looks at the input's elements only):
        # NaN there never equals a maximum, and the NaN pass reads a zero-padded copy
        float_fill = _fill(x.dtype) == -np.inf
        src = _spatial_major(x[s], padding, extra, np.nan if float_fill else _fill(x.dtype))
        g = _spatial_major(grad_output[s], (0, 0), (0, 0), 0)
        _plus_zero(g)
        r = _spatial_major(result[s], (0, 0), (0, 0), 0)
        acc = _zeros_like(src, out.dtype)
        taken = np.zeros(r.shape, bool)
        hit = np.empty(r.shape, bool)
        pairs = list(zip(_offsets(src, kernel_size, dilation, stride, count),
                         _offsets(acc, kernel_size, dilation, stride, count)))
        for v, dst in pairs:                       # the first maximum
            np.equal(v, r, out=hit)
            hit &= ~taken
            taken |= hit
            if disjoint:                           # each element of acc in one window
                np.copyto(dst, _at(hit, g), casting="unsafe")
            else:
                np.add(dst, _at(hit, g), out=dst, casting="unsafe")
        if nan:                                    # the last NaN, where the window has one
            want = np.isnan(r)
            if float_fill and (any(padding) or any(extra)):
                pairs = list(zip(_offsets(_spatial_major(x[s], padding, extra, 0), kernel_size,
                                          dilation, stride, count),
                                 _offsets(acc, kernel_size, dilation, stride, count)))
            for v, dst in reversed(pairs):
                np.isnan(v, out=hit)
                hit &= want
                want &= ~hit
                np.add(dst, _at(hit, g), out=dst, casting="unsafe")
        _to_planes(out[s], acc[ph:ph + h, pw:pw + w])
    _batches(x.shape[0], x.size, part)


def _max_tiles_backward(out, g, x, r, kh, kw, nan):
    """The tiling case without copies of x: with M = N*C*OH, x is (M, kh, OW, kw) and each
    offset's view (M, OW); the work runs on their transposes (OW, M), so that with a
    contiguous (OW, M) operand first numpy loops along M (long) instead of OW."""
    ow = r.shape[3]
    m = r.size // ow
    x4, gx4 = x.reshape(m, kh, ow, kw), out.reshape(m, kh, ow, kw)
    rt = np.ascontiguousarray(r.reshape(m, ow).T)
    gt = np.array(g.reshape(m, ow).T, order="C")
    _plus_zero(gt)
    taken = np.zeros(rt.shape, bool)
    hit = np.empty(rt.shape, bool)
    for i in range(kh):
        for j in range(kw):
            np.equal(rt, x4[:, i, :, j].T, out=hit)        # the first maximum
            hit &= ~taken
            taken |= hit
            np.copyto(gx4[:, i, :, j].T, _at(hit, gt), casting="unsafe")  # every element once
    if nan:                                                 # the last NaN of a NaN window
        want = np.isnan(rt)
        for i in reversed(range(kh)):
            for j in reversed(range(kw)):
                np.isnan(x4[:, i, :, j].T, out=hit)
                hit &= want
                want &= ~hit
                dst = gx4[:, i, :, j].T
                np.add(dst, _at(hit, gt), out=dst, casting="unsafe")


KERNELS = {"max_pool2d": max_pool2d, "max_pool2d_backward": max_pool2d_backward}
