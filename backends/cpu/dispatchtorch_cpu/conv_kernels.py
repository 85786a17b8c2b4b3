"""CPU kernels of conv2d and its backward (the conv2d and conv2d_backward rows): im2col
into a channels-last patch matrix and one BLAS product per group, for the whole batch.

Why channels-last: each patch row (kh, kw, C) of a channels-last padded buffer is kh
runs of kw*C contiguous numbers, so the im2col copy moves long runs, and the products
(N*OH*OW, K) @ (K, O) and (O, N*OH*OW) @ (N*OH*OW, K) are the shapes OpenBLAS runs
fastest (measured: 1.5-2x the channels-first (K, N*L) layout on the digits CNN's second
convolution). The input gradient is a stride-1 convolution of the (spread, padded)
output gradient with the flipped, transposed kernel through the same code, which beats
summing patches back (col2im) by many short strided adds.

Large calls cut the batch into blocks of ~BLOCK_ROWS patch rows (a block's patches are
still in cache for its product: measured 2-9% off the digits CNN step), shared with the
pool's threads. The forward and input gradient write each block's outputs (each output
element comes from the same products whatever the cut); the weight gradient sums the
blocks' partial products in order, and its blocks depend on the shapes alone. Results
therefore do not depend on the thread count.
"""
from __future__ import annotations

import numpy as np

from . import parallel as P

WORK_THRESHOLD = 1 << 22        # multiply-adds: below this one thread is cheaper
BLOCK_ROWS = 1024               # patch rows per block of a large forward / input gradient


MIN_PARTS = 8          # blocks of a large batch: two each for up to four threads


def _compute_dtype(dt):
    """float16 / bfloat16 compute in float32 and round once (as the row's decomposition)."""
    if dt.itemsize == 2 and dt.kind in "fV":                 # bfloat16's numpy kind is V
        return np.dtype(np.float32)
    return dt


def _channels_last(x, lo, hi, spread, dt):
    """x (N, C, H, W) in a zero (N, Hp, Wp, C) buffer: lo = (top, left) and hi =
    (bottom, right) zeros around it, its pixels `spread` apart (a strided convolution's
    gradient); negative borders crop x instead."""
    n, c, h, w = x.shape
    (t, l), (b, r), (sh, sw) = lo, hi, spread
    # crop what a negative border removes (only the unspread case reaches here with one)
    if min(t, l, b, r) < 0:
        x = x[:, :, max(0, -t):h - max(0, -b), max(0, -l):w - max(0, -r)]
        t, l, b, r = max(0, t), max(0, l), max(0, b), max(0, r)
        n, c, h, w = x.shape
    eh, ew = (h - 1) * sh + 1, (w - 1) * sw + 1
    buf = np.zeros((n, t + eh + b, l + ew + r, c), dt)
    buf[:, t:t + eh:sh, l:l + ew:sw, :] = x.transpose(0, 2, 3, 1)
    return buf


def _patch_view(buf, kernel, dilation, stride, count, groups):
    """The windows of a channels-last buffer as a (G, N, OH, OW, kh, kw, C/G) view."""
    n, _, _, c = buf.shape
    sn, sh, sw, sc = buf.strides
    (kh, kw), (dh, dw), (th, tw), (oh, ow) = kernel, dilation, stride, count
    cg = c // groups
    # buf is a fresh contiguous buffer: a view of its memory straight from the constructor
    # (numpy's as_strided costs ~10 us a call)
    return np.ndarray((groups, n, oh, ow, kh, kw, cg), buf.dtype, buf, 0,
                      (cg * sc, sn, th * sh, tw * sw, dh * sh, dw * sw, sc))


def _patches(buf, kernel, dilation, stride, count, groups):
    """The im2col matrix of a channels-last buffer: (G, N*OH*OW, kh*kw*C/G), columns in
    (kh, kw, C/G) order (one copy)."""
    v = _patch_view(buf, kernel, dilation, stride, count, groups)
    g, n, oh, ow, kh, kw, cg = v.shape
    return v.reshape(g, n * oh * ow, kh * kw * cg)


def _weight_rows(weight, groups, dt):
    """(O, C/G, kh, kw) -> (G, K, O/G) with K in the patches' (kh, kw, C/G) order."""
    o, cg, kh, kw = weight.shape
    w = weight.astype(dt, copy=False).reshape(groups, o // groups, cg, kh, kw)
    return w.transpose(0, 3, 4, 2, 1).reshape(groups, kh * kw * cg, o // groups)


def _conv_into(out, x, wrows, kernel, stride, lo, hi, spread, dilation, groups, bias, dt):
    """out (N, O, OH, OW) = the convolution of x (N, C, H, W) bordered by lo/hi (and
    spread) with wrows (G, K, O/G), plus bias; the batch cut among the pool's threads
    when the work is large."""
    n = x.shape[0]
    oh, ow = out.shape[2:]
    o = out.shape[1]
    k = wrows.shape[1]
    b = None if bias is None else bias.astype(dt, copy=False)

    def part(s):
        buf = _channels_last(x[s], lo, hi, spread, dt)
        cols = _patches(buf, kernel, dilation, stride, (oh, ow), groups)
        y = np.matmul(cols, wrows)                         # (G, n*OH*OW, O/G)
        m = buf.shape[0]
        y = y.reshape(groups, m, oh, ow, o // groups).transpose(1, 0, 4, 2, 3)
        dst = out[s].reshape(m, groups, o // groups, oh, ow)
        if b is None:
            np.copyto(dst, y, casting="unsafe")
        else:
            np.add(y, b.reshape(1, groups, o // groups, 1, 1), out=dst, casting="unsafe")
    _batch_parts(n, oh * ow, n * oh * ow * k * o // groups, part)


def _batch_parts(n, rows_per_image, work, part):
    """part(slice of the batch) over blocks of about BLOCK_ROWS patch rows when the work
    is large (each block's patches still in cache for its product), at least MIN_PARTS
    of them, the blocks shared with the pool's threads. The blocks depend on the shapes
    alone: BLAS may sum a row of a product in another order when the product has another
    number of rows (OpenBLAS's small-matrix kernels do), so blocks cut by the thread count
    would change the bits with it."""
    if work < WORK_THRESHOLD or n < 2:
        part(slice(None))
        return
    threads = P.POOL.threads
    per = min(max(1, BLOCK_ROWS // rows_per_image), -(-n // MIN_PARTS))
    bounds = [(a, min(n, a + per)) for a in range(0, n, per)]
    if threads == 1 or len(bounds) == 1:
        for b in bounds:
            part(slice(*b))
    else:
        P.POOL.run(len(bounds), lambda i: part(slice(*bounds[i])))


def conv2d(out, x, weight, bias, *, stride, padding, dilation, groups):
    dt = _compute_dtype(out.dtype)
    _conv_into(out, x, _weight_rows(weight, groups, dt), weight.shape[2:], stride, padding,
               padding, (1, 1), dilation, groups, bias, dt)


def _input_grad(out, g, weight, stride, padding, dilation, groups, dt):
    """The input gradient as a stride-1 convolution of g, spread `stride` apart and
    bordered by d*(k-1) - p (plus the rows no window reached), with the kernel flipped
    and its in/out channels swapped."""
    h, w = out.shape[2:]
    o, cg, kh, kw = weight.shape
    og = o // groups
    kernel = (kh, kw)
    lo, hi = [], []
    for n, k, d, p, s, c in zip((h, w), kernel, dilation, padding, stride, g.shape[2:]):
        reach = d * (k - 1)
        unseen = n + 2 * p - reach - 1 - (c - 1) * s    # rows past the last window
        lo.append(reach - p)
        hi.append(reach - p + unseen)
    if any(s > 1 for s in stride) and min(lo + hi) < 0:
        # a border thinner than the padding with spread pixels: spread first, then crop
        gs = np.zeros(g.shape[:2] + tuple((c - 1) * s + 1 for c, s in zip(g.shape[2:], stride)),
                      g.dtype)
        gs[:, :, ::stride[0], ::stride[1]] = g
        g, stride = gs, (1, 1)
    # (O, C/G, kh, kw) flipped, as the weight of a conv from O to C channels in groups
    flipped = weight[:, :, ::-1, ::-1].reshape(groups, og, cg, kh, kw).transpose(0, 2, 1, 3, 4)
    wrows = _weight_rows(flipped.reshape(groups * cg, og, kh, kw), groups, dt)
    _conv_into(out, g, wrows, kernel, (1, 1), tuple(lo), tuple(hi), stride, dilation, groups,
               None, dt)


def _weight_grad(out, g, x, stride, padding, dilation, groups, dt):
    """(G, O/G, N*L) @ (G, N*L, K), one product per group. Large batches go in blocks
    that depend on the shapes alone (so the bits do not depend on the thread count), each
    block's patches and product on one of the pool's threads, the partial products
    summed in block order."""
    o, cg, kh, kw = out.shape
    og = o // groups
    n, _, oh, ow = g.shape
    k = kh * kw * cg
    per = max(1, BLOCK_ROWS // (oh * ow)) if n * oh * ow * k * o >= WORK_THRESHOLD else n
    slices = [(a, min(n, a + per)) for a in range(0, n, per)]
    partial = [None] * len(slices)

    def part(i):
        s = slice(*slices[i])
        buf = _channels_last(x[s], padding, padding, (1, 1), dt)
        cols = _patches(buf, (kh, kw), dilation, stride, (oh, ow), groups)   # (G, m*L, K)
        m = buf.shape[0]
        gt = np.ascontiguousarray(g[s].astype(dt, copy=False).reshape(m, groups, og, oh * ow)
                                  .transpose(1, 2, 0, 3)).reshape(groups, og, m * oh * ow)
        partial[i] = np.matmul(gt, cols)                                      # (G, O/G, K)
    if P.POOL.threads > 1 and len(slices) > 1:
        P.POOL.run(len(slices), part)
    else:
        for i in range(len(slices)):
            part(i)
    gw = partial[0]
    for p in partial[1:]:
        gw += p
    np.copyto(out, gw.reshape(groups, og, kh, kw, cg).transpose(0, 1, 4, 2, 3)
              .reshape(o, cg, kh, kw), casting="unsafe")


def conv2d_backward(*args, stride, padding, dilation, groups, output_mask):
    """The outputs output_mask asks for (grad x, grad weight, grad bias), then
    grad_output, x, weight."""
    count = sum(output_mask)
    outs, (g, x, weight) = args[:count], args[count:]
    dt = _compute_dtype(outs[0].dtype)
    it = iter(outs)
    if output_mask[0]:
        _input_grad(next(it), g, weight, stride, padding, dilation, groups, dt)
    if output_mask[1]:
        _weight_grad(next(it), g, x, stride, padding, dilation, groups, dt)
    if output_mask[2]:
        np.copyto(next(it), g.sum(axis=(0, 2, 3), dtype=dt), casting="unsafe")


KERNELS = {"conv2d": conv2d, "conv2d_backward": conv2d_backward}
