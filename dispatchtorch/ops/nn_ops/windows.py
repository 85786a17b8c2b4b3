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
    out = creation.full((n, c, hp, wp), value, dtype=x._dtype, device=x.device)
    views.as_strided(out, (n, c, h, w), (c * hp * wp, hp * wp, wp, 1), ph * wp + pw).copy_(x)
    return out


def windows(buf, kernel, dilation, stride, count):
    """The sliding windows of a contiguous (N, C, Hp, Wp) buffer as a view
    (N, C, kh, kw, OH, OW) (no copy; windows may overlap)."""
    n, c, hp, wp = buf._shape
    (kh, kw), (dh, dw), (sh, sw), (oh, ow) = kernel, dilation, stride, count
    return views.as_strided(buf, (n, c, kh, kw, oh, ow),
                           (c * hp * wp, hp * wp, dh * wp, dw, sh * wp, sw))


def offset_views(buf, kernel, dilation, stride, count):
    """For each kernel offset, in row-major order, the (N, C, OH, OW) view of the
    contiguous buffer buf that this offset of every window covers."""
    n, c, hp, wp = buf._shape
    (kh, kw), (dh, dw), (sh, sw), (oh, ow) = kernel, dilation, stride, count
    st = (c * hp * wp, hp * wp, sh * wp, sw)
    for i in range(kh):
        for j in range(kw):
            yield views.as_strided(buf, (n, c, oh, ow), st, buf._offset + i * dh * wp + j * dw)


def accumulate_buffer(size, kernel, dilation, padding, stride, count, like):
    """A zero (N, C, Hp, Wp) buffer large enough for every window (ceil_mode included)."""
    n, c = like._shape[:2]
    (h, w), (kh, kw), (dh, dw), (ph, pw), (sh, sw), (oh, ow) = \
        size, kernel, dilation, padding, stride, count
    hp = max(h + 2 * ph, (oh - 1) * sh + dh * (kh - 1) + 1)
    wp = max(w + 2 * pw, (ow - 1) * sw + dw * (kw - 1) + 1)
    return creation.zeros((n, c, hp, wp), dtype=like._dtype, device=like.device)


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
    windows_of = offset_views(buf, kernel, dilation, stride, count)
    for i in range(kernel[0]):
        row = cols.select(2, i)
        for j in range(kernel[1]):
            next(windows_of).add_(row.select(2, j))
    return crop(buf, size, padding)


# -- the flat-plane layout (stride 1) ----------------------------------------------------------
#
# Patches are laid out (C*kh*kw, N*OH*Wp): channels first, so that a convolution is one
# matrix product per group for the whole batch, and its weight gradient is one more
# (no per-sample products, no (N, O, C*kh*kw) temporary).

def flat_geometry(h, w, kernel, dilation, padding):
    """(Hp, Wp, OH, OW) of a stride-1 window sweep."""
    (kh, kw), (dh, dw), (ph, pw) = kernel, dilation, padding
    hp, wp = h + 2 * ph, w + 2 * pw
    return hp, wp, hp - dh * (kh - 1), wp - dw * (kw - 1)


def _grouped_rows(t, groups):
    """(R, L) -> (G, R/G, L) for groups > 1."""
    return t if groups == 1 else t.reshape(groups, t._shape[0] // groups, t._shape[1])


def flat_cols(x, kernel, dilation, padding, groups):
    """x's stride-1 patches at full padded width: (C*kh*kw, N*OH*Wp), or
    (G, C/G*kh*kw, N*OH*Wp). One copy, in runs of OH*Wp elements."""
    n, c, h, w = x._shape
    hp, wp, oh, _ = flat_geometry(h, w, kernel, dilation, padding)
    buf = padded(x, padding[0], padding[1], 0.0, 1, 0)   # a spare zero row: the last
    plane = (hp + 1) * wp                                 # windows run past hp*wp
    (kh, kw), (dh, dw) = kernel, dilation
    win = views.as_strided(buf, (c, kh, kw, n, oh * wp), (plane, dh * wp, dw, c * plane, 1))
    return _grouped_rows(win.reshape(c * kh * kw, n * oh * wp), groups)


def to_flat(t, oh, wp, groups):
    """t (N, C, h, w), h <= OH, w <= Wp, as (C, N*OH*Wp) (or grouped) with zeros in the
    rows and columns past t."""
    n, c, h, w = t._shape
    buf = creation.zeros((c, n, oh, wp), dtype=t._dtype, device=t.device)
    views.as_strided(buf, (n, c, h, w), (oh * wp, n * oh * wp, wp, 1)).copy_(t)
    return _grouped_rows(buf.reshape(c, n * oh * wp), groups)


def from_flat(y, n, oh, ow, wp):
    """(C, N*OH*Wp) (or grouped) -> a contiguous (N, C, OH, OW), junk columns dropped."""
    y = y.reshape(-1, n, oh, wp).permute(1, 0, 2, 3)
    return (y if ow == wp else y.narrow(3, 0, ow)).contiguous()


def flat_fold(cols, n, c, size, kernel, dilation, padding):
    """The adjoint of flat_cols: cols (C*kh*kw, N*OH*Wp) (junk columns zero) summed
    into an (N, C, H, W) image."""
    h, w = size
    hp, wp, oh, _ = flat_geometry(h, w, kernel, dilation, padding)
    (kh, kw), (dh, dw) = kernel, dilation
    plane = (hp + 1) * wp
    # channels first, as cols: the adds walk both operands in the same order
    buf = creation.zeros((c, n, hp + 1, wp), dtype=cols._dtype, device=cols.device)
    cols = cols.reshape(c, kh, kw, n, oh * wp)
    for i in range(kh):
        row = cols.select(1, i)
        for j in range(kw):
            views.as_strided(buf, (c, n, oh * wp), (n * plane, plane, 1),
                            i * dh * wp + j * dw).add_(row.select(1, j))
    return buf.permute(1, 0, 2, 3).narrow(2, padding[0], h).narrow(3, padding[1], w)


def pool_geometry(x, kernel_size, stride, padding, dilation, ceil_mode):
    """Window counts, and the extra end padding that ceil_mode's last windows need."""
    h, w = x._shape[2:]
    count = tuple(out_size(n, k, s, p, d, ceil_mode) for n, k, s, p, d in
                  zip((h, w), kernel_size, stride, padding, dilation))
    extra = tuple(max(0, (o - 1) * s + d * (k - 1) + 1 - (n + 2 * p)) for o, n, k, s, p, d in
                  zip(count, (h, w), kernel_size, stride, padding, dilation))
    return count, extra


# The op modules this one's derivative rules and decompositions call (at run time
# only). Imported last: they import this module in turn (see docs/architecture.md).
from .. import creation, views  # noqa: E402
