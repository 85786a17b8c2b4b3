"""affine_grid and grid_sample (4-d: bilinear / nearest, zeros / border / reflection
padding), with PyTorch's coordinate conventions; and the deprecated upsample names."""
from __future__ import annotations

import warnings

from ... import ops as _ops
from ..._tensor import Tensor
from ._vision import interpolate

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
    x = _unnormalize(coord, n, align_corners)
    if padding_mode == "border":
        x = x.clamp(0, n - 1)
    elif padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (n - 1)) if align_corners else _reflect(x, -1, 2 * n - 1)
        x = x.clamp(0, n - 1)
    return x


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    if mode not in ("bilinear", "nearest"):
        raise NotImplementedError(f"grid_sample: mode {mode!r} is not supported (bilinear and "
                                  f"nearest are)")
    if padding_mode not in GRID_SAMPLE_PADDING_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if not isinstance(input, Tensor) or input.dim() != 4 or grid.dim() != 4:
        raise NotImplementedError("grid_sample: only 4-D input (N, C, H, W) with a grid "
                                  "(N, H_out, W_out, 2) is supported")
    align_corners = bool(align_corners)
    n, c, h, w = input.shape
    if grid.shape[0] != n or grid.shape[3] != 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {n} in first dimension "
                           f"and size 2 in last dimension, but got grid with sizes "
                           f"{list(grid.shape)}")
    ho, wo = grid.shape[1:3]
    x = _source(grid[..., 0], w, padding_mode, align_corners)
    y = _source(grid[..., 1], h, padding_mode, align_corners)
    flat = input.reshape(n, c, h * w)

    def tap(xi, yi, weight):
        inside = (xi >= 0) & (xi <= w - 1) & (yi >= 0) & (yi <= h - 1)
        idx = (yi.clamp(0, h - 1) * w + xi.clamp(0, w - 1)).long().reshape(n, 1, ho * wo)
        vals = flat.gather(2, idx.expand(n, c, ho * wo)).reshape(n, c, ho, wo)
        wgt = _ops.where(inside, weight, 0.0) if weight is not None else inside.to(input.dtype)
        return vals * wgt.unsqueeze(1)

    if mode == "nearest":
        return tap(x.round(), y.round(), None)
    x0, y0 = x.floor(), y.floor()
    x1, y1 = x0 + 1, y0 + 1
    wx1, wy1 = x - x0, y - y0
    wx0, wy0 = 1 - wx1, 1 - wy1
    return (tap(x0, y0, wx0 * wy0) + tap(x1, y0, wx1 * wy0) + tap(x0, y1, wx0 * wy1) +
            tap(x1, y1, wx1 * wy1))


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


