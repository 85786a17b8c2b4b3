"""Sliding-window geometry for convolution and pooling, in public ops (views and
copies over an explicitly padded buffer).

Two layouts:
- general: the windows of an (N, C, Hp, Wp) buffer as an (N, C, kh, kw, OH, OW) view;
  any stride, dilation and padding.
- flat plane (stride 1): each window offset (i, j) is one contiguous run of OH*Wp
  elements of the flattened padded plane, so patches copy and gradients accumulate in
  long runs. Outputs are computed at full padded width Wp; the Wp - OW extra columns
  per row are junk that the caller crops (and zeroes in gradients).
"""
from __future__ import annotations

from . import _api


def out_size(n, k, s, p, d, ceil_mode=False):
    """Number of windows along one dim, as PyTorch's conv / pooling_output_shape."""
    span = n + 2 * p - d * (k - 1) - 1
    if not ceil_mode:
        return span // s + 1
    o = -(-span // s) + 1
    if (o - 1) * s >= n + p:
        o -= 1
    return o


def padded(x, ph, pw, value=0.0, eh=0, ew=0):
    """x (N, C, H, W) in a fresh contiguous buffer with a border of `value`: (ph, pw)
    on each side plus (eh, ew) more at the end."""
    if not (ph or pw or eh or ew):
        return x.contiguous()
    n, c, h, w = x._shape
    hp, wp = h + 2 * ph + eh, w + 2 * pw + ew
    out = _api.full((n, c, hp, wp), value, dtype=x._dtype, device=x.device)
    _api.as_strided(out, (n, c, h, w), (c * hp * wp, hp * wp, wp, 1), ph * wp + pw).copy_(x)
    return out


def windows(buf, kernel, dilation, stride, count):
    """The sliding windows of a contiguous (N, C, Hp, Wp) buffer as a view
    (N, C, kh, kw, OH, OW) (no copy; windows may overlap)."""
    n, c, hp, wp = buf._shape
    (kh, kw), (dh, dw), (sh, sw), (oh, ow) = kernel, dilation, stride, count
    return _api.as_strided(buf, (n, c, kh, kw, oh, ow),
                           (c * hp * wp, hp * wp, dh * wp, dw, sh * wp, sw))


def offset_views(buf, kernel, dilation, stride, count):
    """For each kernel offset, in row-major order, the (N, C, OH, OW) view of the
    contiguous buffer buf that this offset of every window covers."""
    n, c, hp, wp = buf._shape
    (kh, kw), (dh, dw), (sh, sw), (oh, ow) = kernel, dilation, stride, count
    st = (c * hp * wp, hp * wp, sh * wp, sw)
    for i in range(kh):
        for j in range(kw):
            yield _api.as_strided(buf, (n, c, oh, ow), st, buf._offset + i * dh * wp + j * dw)


def accumulate_buffer(size, kernel, dilation, padding, stride, count, like):
    """A zero (N, C, Hp, Wp) buffer large enough for every window (ceil_mode included)."""
    n, c = like._shape[:2]
    (h, w), (kh, kw), (dh, dw), (ph, pw), (sh, sw), (oh, ow) = \
        size, kernel, dilation, padding, stride, count
    hp = max(h + 2 * ph, (oh - 1) * sh + dh * (kh - 1) + 1)
    wp = max(w + 2 * pw, (ow - 1) * sw + dw * (kw - 1) + 1)
    return _api.zeros((n, c, hp, wp), dtype=like._dtype, device=like.device)


def crop(buf, size, padding):
    """The (H, W) interior of a padded buffer (a view)."""
    (h, w), (ph, pw) = size, padding
    if buf._shape[2:] == (h, w):
        return buf
    return buf.narrow(2, ph, h).narrow(3, pw, w)


def col2im(cols, size, kernel, dilation, padding, stride):
    """The adjoint of `windows`: cols (N, C, kh, kw, OH, OW) summed into an (N, C, H, W)
    image, overlapping windows adding up (padding cropped away)."""
    count = cols._shape[4:]
    buf = accumulate_buffer(size, kernel, dilation, padding, stride, count, cols)
    views = offset_views(buf, kernel, dilation, stride, count)
    for i in range(kernel[0]):
        row = cols.select(2, i)
        for j in range(kernel[1]):
            next(views).add_(row.select(2, j))
    return crop(buf, size, padding)


# -- the flat-plane layout (stride 1) ----------------------------------------------------------

def flat_geometry(h, w, kernel, dilation, padding):
    """(Hp, Wp, OH, OW) of a stride-1 window sweep."""
    (kh, kw), (dh, dw), (ph, pw) = kernel, dilation, padding
    hp, wp = h + 2 * ph, w + 2 * pw
    return hp, wp, hp - dh * (kh - 1), wp - dw * (kw - 1)


def flat_cols(x, kernel, dilation, padding, groups):
    """x's stride-1 patches at full padded width: (N, C*kh*kw, OH*Wp), or
    (N, G, C/G*kh*kw, OH*Wp). One copy, in runs of OH*Wp elements."""
    n, c, h, w = x._shape
    hp, wp, oh, _ = flat_geometry(h, w, kernel, dilation, padding)
    buf = padded(x, padding[0], padding[1], 0.0, 1, 0)   # a spare zero row: the last
    plane = (hp + 1) * wp                                 # windows run past hp*wp
    (kh, kw), (dh, dw) = kernel, dilation
    win = _api.as_strided(buf, (n, c, kh, kw, oh * wp), (c * plane, plane, dh * wp, dw, 1))
    shape = (n, -1, oh * wp) if groups == 1 else (n, groups, -1, oh * wp)
    return win.reshape(shape)


def full_width(g, wp):
    """g (N, C, OH, OW) widened with zero columns to (N, C, OH, Wp)."""
    ow = g._shape[3]
    return g if ow == wp else padded(g, 0, 0, 0.0, 0, wp - ow)


def flat_fold(cols, c, size, kernel, dilation, padding):
    """The adjoint of flat_cols: cols (N, C*kh*kw, OH*Wp) (junk columns zero) summed
    into an (N, C, H, W) image."""
    n = cols._shape[0]
    h, w = size
    hp, wp, oh, _ = flat_geometry(h, w, kernel, dilation, padding)
    (kh, kw), (dh, dw) = kernel, dilation
    plane = (hp + 1) * wp
    buf = _api.zeros((n, c, hp + 1, wp), dtype=cols._dtype, device=cols.device)
    cols = cols.reshape(n, c, kh, kw, oh * wp)
    for i in range(kh):
        row = cols.select(2, i)
        for j in range(kw):
            _api.as_strided(buf, (n, c, oh * wp), (c * plane, plane, 1),
                            i * dh * wp + j * dw).add_(row.select(2, j))
    return buf.narrow(2, padding[0], h).narrow(3, padding[1], w)


def pool_geometry(x, kernel_size, stride, padding, dilation, ceil_mode):
    """Window counts, and the extra end padding that ceil_mode's last windows need."""
    h, w = x._shape[2:]
    count = tuple(out_size(n, k, s, p, d, ceil_mode) for n, k, s, p, d in
                  zip((h, w), kernel_size, stride, padding, dilation))
    extra = tuple(max(0, (o - 1) * s + d * (k - 1) + 1 - (n + 2 * p)) for o, n, k, s, p, d in
                  zip(count, (h, w), kernel_size, stride, padding, dilation))
    return count, extra
