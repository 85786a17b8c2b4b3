"""pixel_shuffle, pixel_unshuffle, channel_shuffle: reshapes and one permute each."""
from __future__ import annotations

from ..._tensor import Tensor


def _need(name, input, dims):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.dim() < dims:
        raise RuntimeError(f"{name} expects input to have at least {dims} dimensions, but got "
                           f"input with {input.dim()} dimension(s)")


def pixel_shuffle(input, upscale_factor):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r)."""
    _need("pixel_shuffle", input, 3)
    r = int(upscale_factor)
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    oc = c // (r * r)
    x = input.reshape(tuple(lead) + (oc, r, r, h, w))
    k = len(lead)
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return x.reshape(tuple(lead) + (oc, h * r, w * r))


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W)."""
    _need("pixel_unshuffle", input, 3)
    r = int(downscale_factor)
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by "
                           f"downscale_factor, but input.size(-2)={h} and input.size(-1)={w} "
                           f"are not divisible by {r}")
    x = input.reshape(tuple(lead) + (c, h // r, r, w // r, r))
    k = len(lead)
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return x.reshape(tuple(lead) + (c * r * r, h // r, w // r))


def channel_shuffle(input, groups):
    """(N, g*k, *) -> channels regrouped as (k, g)."""
    _need("channel_shuffle", input, 3)
    g = int(groups)
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{g}")
    n, c = input.shape[:2]
    if c % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {g} groups.")
    rest = tuple(input.shape[2:])
    x = input.reshape((n, g, c // g) + rest).transpose(1, 2)
    return x.reshape((n, c) + rest)


native_channel_shuffle = channel_shuffle
