"""interpolate (pad lives in _pad.py). Interpolation matrices depend only on sizes, so
they are built once on the host and cached per (sizes, device)."""
from __future__ import annotations

import math

import numpy as np

from ... import ops as _ops
from ..._tensor import Tensor
from . import _pool3d
from ._conv import adaptive_avg_pool1d, adaptive_avg_pool2d
from ._pad import _cached, _index, pad  # noqa: F401  (pad: _vision.pad is imported by others)
from ._channels_last import in_input_format


# -- interpolate ----------------------------------------------------------------------------------

def _sizes(input, size, scale_factor, name):
    spatial = input.dim() - 2
    if spatial < 1:
        raise ValueError(f"{name}: expected a batched input (N, C, ...), got {list(input.shape)}")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = list(size) if isinstance(size, (tuple, list)) else [size] * spatial
        if len(sizes) != spatial:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, "
                             f"but got input with spatial dimensions of {list(input.shape[2:])} "
                             f"and output size of {sizes}.")
        return [int(s) for s in sizes], [None] * spatial
    scales = list(scale_factor) if isinstance(scale_factor, (tuple, list)) else \
        [scale_factor] * spatial
    if len(scales) != spatial:
        raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions,"
                         f" but got input with spatial dimensions of {list(input.shape[2:])} and "
                         f"scale_factor of shape {scales}.")
    return [int(math.floor(n * s)) for n, s in zip(input.shape[2:], scales)], scales


def _nearest_positions(n, o, scale):
    s = (1.0 / scale) if scale is not None else n / o
    return np.minimum(np.floor(np.arange(o, dtype=np.float32) * np.float32(s)).astype(np.int64), n - 1)


def _source_index(i, n, o, scale, align_corners):
    """PyTorch's source coordinate of output index i (o outputs from n inputs), unclamped."""
    if align_corners:
        return i * (n - 1) / (o - 1) if o > 1 else 0.0
    s = (1.0 / scale) if scale is not None else n / o
    return (i + 0.5) * s - 0.5


def _linear_matrix(n, o, scale, align_corners):
    """(o, n) matrix of 1-d linear interpolation with PyTorch's source-index rule."""
    a = np.zeros((o, n))
    for i in range(o):
        src = max(_source_index(i, n, o, scale, align_corners), 0.0)
        i0 = min(int(math.floor(src)), n - 1)
        i1 = min(i0 + 1, n - 1)
        lam = src - i0
        a[i, i0] += 1.0 - lam
        a[i, i1] += lam
    return a


@in_input_format()
def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    if not isinstance(input, Tensor):
        raise TypeError(f"interpolate(): argument 'input' must be Tensor, not {type(input).__name__}")
    if antialias and not (mode in ("bilinear", "bicubic") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and "
                         "requires a 4-D tensor as input")
    sizes, scales = _sizes(input, size, scale_factor, "interpolate")
    if recompute_scale_factor:
        scales = [None] * len(scales)
    dev = input.device
    if antialias:
        out = input
        for i, (n, o, s) in enumerate(zip(input.shape[2:], sizes, scales)):
            m = _cached(("aa", mode, n, o, s, bool(align_corners), str(dev), input.dtype),
                        lambda: _ops.tensor(_antialias_matrix(n, o, s, bool(align_corners), mode),
                                            dtype=input.dtype, device=dev))
            out = (out.movedim(2 + i, -1) @ m.mT).movedim(-1, 2 + i)
        return out.contiguous()
    if mode in ("nearest", "nearest-exact", "area") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if mode == "area":
        pool = {1: adaptive_avg_pool1d, 2: adaptive_avg_pool2d,
                3: _pool3d.adaptive_avg_pool3d}[input.dim() - 2]
        return pool(input, sizes)
    if mode == "nearest-exact":
        out = input
        for i, (n, o, s) in enumerate(zip(input.shape[2:], sizes, scales)):
            idx = _cached(("nearest-exact", n, o, s, str(dev)),
                          lambda: _index(_nearest_exact_positions(n, o, s), dev))
            out = out.index_select(2 + i, idx)
        return out
    if mode == "bicubic":
        if input.dim() != 4:
            raise NotImplementedError(f"Got {input.dim()}D input, but bicubic mode needs 4D input")
        out = input
        for i, (n, o, s) in enumerate(zip(input.shape[2:], sizes, scales)):
            m = _cached(("cubic", n, o, s, bool(align_corners), str(dev), input.dtype),
                        lambda: _ops.tensor(_cubic_matrix(n, o, s, bool(align_corners)),
                                            dtype=input.dtype, device=dev))
            out = (out.movedim(2 + i, -1) @ m.mT).movedim(-1, 2 + i)
        return out.contiguous()
    if mode == "nearest":
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
        out = input
        for i, (n, o, s) in enumerate(zip(input.shape[2:], sizes, scales)):
            idx = _cached(("nearest", n, o, s, str(dev)),
                          lambda: _index(_nearest_positions(n, o, s), dev))
            out = out.index_select(2 + i, idx)
        return out
    if mode in ("linear", "bilinear", "trilinear"):
        want = {"linear": 1, "bilinear": 2, "trilinear": 3}[mode]
        if input.dim() - 2 != want:
            raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                      f"{want + 2}D input")
        out = input
        for i, (n, o, s) in enumerate(zip(input.shape[2:], sizes, scales)):
            m = _cached(("linear", n, o, s, bool(align_corners), str(dev), input.dtype),
                        lambda: _ops.tensor(_linear_matrix(n, o, s, bool(align_corners)),
                                            dtype=input.dtype, device=dev))
            out = (out.movedim(2 + i, -1) @ m.mT).movedim(-1, 2 + i)
        return out.contiguous()
    raise NotImplementedError(f"interpolate: mode {mode!r} is not supported (nearest, "
                              f"nearest-exact, area, linear, bilinear, bicubic, trilinear are)")


def _nearest_exact_positions(n, o, scale):
    s = (1.0 / scale) if scale is not None else n / o
    pos = np.floor((np.arange(o, dtype=np.float32) + np.float32(0.5)) * np.float32(s))
    return np.minimum(pos.astype(np.int64), n - 1)


def _cubic_weights(t, a=-0.75):
    """The four cubic-convolution weights (Keys, a=-0.75 as PyTorch) of taps -1, 0, 1, 2 at
    fraction t; interpolate(mode='bicubic') and grid_sample share them."""
    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _cubic_matrix(n, o, scale, align_corners):
    """(o, n) matrix of PyTorch's bicubic (A = -0.75) with clamped border taps."""
    a = np.zeros((o, n))
    for i in range(o):
        src = _source_index(i, n, o, scale, align_corners)
        i0 = int(math.floor(src))
        for k, wgt in enumerate(_cubic_weights(src - i0)):
            a[i, min(max(i0 - 1 + k, 0), n - 1)] += wgt
    return a



def _antialias_matrix(n, o, scale_factor, align_corners, mode):
    """(o, n) matrix of PyTorch's anti-aliased (PIL-style) resampling: a triangle
    (bilinear) or a = -0.5 cubic (bicubic) filter widened by the downscale factor,
    each row normalised to sum 1."""
    if align_corners:
        scale = (n - 1) / (o - 1) if o > 1 else 0.0
    else:
        scale = (1.0 / scale_factor) if scale_factor is not None else n / o
    wide = scale if scale >= 1.0 else 1.0
    support = (1.0 if mode == "bilinear" else 2.0) * wide
    invscale = 1.0 / wide

    def filt(x):
        x = abs(x)
        if mode == "bilinear":
            return max(0.0, 1.0 - x)
        a = -0.5
        if x < 1:
            return ((a + 2) * x - (a + 3)) * x * x + 1
        if x < 2:
            return (((x - 5) * x + 8) * x - 4) * a
        return 0.0
    m = np.zeros((o, n))
    for i in range(o):
        center = scale * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), n)
        w = np.array([filt((j + lo - center + 0.5) * invscale) for j in range(hi - lo)])
        total = w.sum()
        m[i, lo:hi] = w / total if total != 0 else w
    return m
