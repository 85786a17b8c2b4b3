"""affine_grid and grid_sample (4-d: bilinear, nearest, bicubic; 5-d: trilinear,
nearest; zeros, border or reflection padding), with PyTorch's coordinate
conventions; and the deprecated upsample names."""
from __future__ import annotations

import warnings

from ... import ops as _ops
from ..._tensor import Tensor
from ._vision import _cubic_weights, interpolate

GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


def _base(n, align_corners, like):
    if n == 1:
        return _ops.zeros(1, dtype=like.dtype, device=like.device)
    r = _ops.linspace(-1.0, 1.0, n, dtype=like.dtype, device=like.device)
    return r if align_corners else r * (n - 1) / n


def affine_grid(theta, size, align_corners=None):
    if align_corners is None:
        align_corners = False
    if not isinstance(theta, Tensor) or not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got "
                         f"{getattr(theta, 'dtype', type(theta))}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[1:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {list(theta.shape)}.")
        n, _, h, w = size
        xs, ys = _base(w, align_corners, theta), _base(h, align_corners, theta)
        grid = _ops.stack([xs.reshape(1, w).expand(h, w), ys.reshape(h, 1).expand(h, w),
                           _ops.ones((h, w), dtype=theta.dtype, device=theta.device)], -1)
        return (grid.reshape(1, h * w, 3) @ theta.transpose(1, 2)).reshape(n, h, w, 2)
    if len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[1:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {list(theta.shape)}.")
        n, _, d, h, w = size
        xs, ys, zs = (_base(w, align_corners, theta), _base(h, align_corners, theta),
                      _base(d, align_corners, theta))
        shape = (d, h, w)
        grid = _ops.stack([xs.reshape(1, 1, w).expand(shape), ys.reshape(1, h, 1).expand(shape),
                           zs.reshape(d, 1, 1).expand(shape),
                           _ops.ones(shape, dtype=theta.dtype, device=theta.device)], -1)
        return (grid.reshape(1, d * h * w, 4) @ theta.transpose(1, 2)).reshape(n, d, h, w, 3)
    raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine "
                              f"transforms, respectively. Got size {size}.")


def _unnormalize(coord, n, align_corners):
    return (coord + 1) / 2 * (n - 1) if align_corners else ((coord + 1) * n - 1) / 2


def _reflect(coord, lo2, hi2):
    """PyTorch's reflect_coordinates over [lo2/2, hi2/2]."""
    if lo2 == hi2:
        return coord * 0
    lo, span = lo2 / 2, (hi2 - lo2) / 2
    c = (coord - lo).abs()
    extra = _ops.fmod(c, span)
    flips = (c / span).floor()
    return _ops.where(_ops.fmod(flips, 2) == 0, extra + lo, span - extra + lo)


def _source(coord, n, padding_mode, align_corners):
    return _bounded(_unnormalize(coord, n, align_corners), n, padding_mode, align_corners)


def _bounded(x, n, padding_mode, align_corners):
    """ATen's compute_coordinates: a source position moved inside for border and
    reflection padding (zeros padding leaves it, out-of-range taps read zero)."""
    if padding_mode == "border":
        x = x.clamp(0, n - 1)
    elif padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (n - 1)) if align_corners else _reflect(x, -1, 2 * n - 1)
        x = x.clamp(0, n - 1)
    return x


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample input (N, C, H, W) or (N, C, D, H, W) at grid's normalised (x, y[, z])
    positions: bilinear / trilinear (mode "bilinear") or nearest, each tap gathered
    from the flattened input and weighted, taps outside the input counting as zero
    (zeros padding) or moved inside first (border, reflection)."""
    import itertools
    if mode not in GRID_SAMPLE_INTERPOLATION_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if mode == "bicubic" and input.dim() != 4:
        raise ValueError("grid_sample(): bicubic interpolation only supports 4D input")
    if padding_mode not in GRID_SAMPLE_PADDING_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if not isinstance(input, Tensor) or input.dim() not in (4, 5) or grid.dim() != input.dim():
        raise RuntimeError("grid_sampler(): expected 4D or 5D input and grid with same number "
                           "of dimensions")
    align_corners = bool(align_corners)
    dims = input.dim() - 2
    n, c = input.shape[:2]
    spatial = tuple(input.shape[2:])                # (H, W) or (D, H, W)
    if grid.shape[0] != n or grid.shape[-1] != dims:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {n} in first dimension "
                           f"and size {dims} in last dimension, but got grid with sizes "
                           f"{list(grid.shape)}")
    out_shape = tuple(grid.shape[1:-1])
    points = 1
    for v in out_shape:
        points *= v
    # grid's last dim is (x, y[, z]): x indexes the last spatial dim
    if mode == "bicubic":
        coords = [_unnormalize(grid[..., dims - 1 - k], spatial[k], align_corners)
                  for k in range(dims)]
    else:
        coords = [_source(grid[..., dims - 1 - k], spatial[k], padding_mode, align_corners)
                  for k in range(dims)]
    flat = input.reshape(n, c, -1)
    strides = [1] * dims
    for k in range(dims - 2, -1, -1):
        strides[k] = strides[k + 1] * spatial[k + 1]

    def tap(pos, weight):
        inside = None
        index = None
        for k, p in enumerate(pos):
            ok = (p >= 0) & (p <= spatial[k] - 1)
            inside = ok if inside is None else inside & ok
            term = p.clamp(0, spatial[k] - 1) * strides[k]
            index = term if index is None else index + term
        idx = index.long().reshape(n, 1, points)
        vals = flat.gather(2, idx.expand(n, c, points)).reshape((n, c) + out_shape)
        wgt = _ops.where(inside, weight, 0.0) if weight is not None else inside.to(input.dtype)
        return vals * wgt.unsqueeze(1)

    if mode == "nearest":
        return tap([x.round() for x in coords], None)
    if mode == "bicubic":        # 4 x 4 taps, each moved inside by the padding mode
        lows = [x.floor() for x in coords]
        weights = [_cubic_weights(x - lo) for x, lo in zip(coords, lows)]
        out = None
        for a in range(4):
            for b in range(4):
                pos = [_bounded(lows[0] + (a - 1), spatial[0], padding_mode, align_corners),
                       _bounded(lows[1] + (b - 1), spatial[1], padding_mode, align_corners)]
                t = tap(pos, weights[0][a] * weights[1][b])
                out = t if out is None else out + t
        return out
    lows = [x.floor() for x in coords]
    fracs = [x - lo for x, lo in zip(coords, lows)]
    out = None
    for corner in itertools.product((0, 1), repeat=dims):
        pos = [lo + b for lo, b in zip(lows, corner)]
        weight = None
        for f, b in zip(fracs, corner):
            w = f if b else 1 - f
            weight = w if weight is None else weight * w
        t = tap(pos, weight)
        out = t if out is None else out + t
    return out


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
