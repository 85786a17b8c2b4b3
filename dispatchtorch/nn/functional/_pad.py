"""pad, and the host-built index cache it shares with interpolate: index maps depend only on
sizes, so they are built once on the host and cached per (sizes, device). Apart from
_vision.py so that convolution ('same' padding) can pad without importing interpolate,
which pools with convolution's adaptive pooling."""
from __future__ import annotations

import numpy as np

from ... import ops as _ops
from ..._tensor import Tensor
from ...dispatch.loader import on_reset
from ._channels_last import in_input_format

# index and weight tensors of the resampling/padding geometry, per device; they live on a
# loaded backend, so they are forgotten when the backends are reset
_CACHE: dict = {}
_CACHE_LIMIT = 512
on_reset(_CACHE.clear)


def _cached(key, make):
    v = _CACHE.get(key)
    if v is None:
        v = make()
        if len(_CACHE) < _CACHE_LIMIT:
            _CACHE[key] = v
    return v


def _index(positions, device):
    return _ops.tensor(np.asarray(positions, dtype=np.int64), device=device)


@in_input_format()
def pad(input, pad, mode="constant", value=None):
    """PyTorch's F.pad: `pad` lists (left, right) pairs from the last dim backwards;
    negative amounts crop."""
    if not isinstance(input, Tensor):
        raise TypeError(f"pad(): argument 'input' must be Tensor, not {type(input).__name__}")
    pad = [int(p) for p in pad]
    if len(pad) % 2 or len(pad) // 2 > input.dim():
        raise RuntimeError(f"Padding length must be divisible by 2 and at most twice the number of "
                           f"dimensions of the input ({input.dim()}), got {len(pad)}")
    pairs = [(d, pad[2 * i], pad[2 * i + 1]) for i, d in
             enumerate(range(input.dim() - 1, input.dim() - 1 - len(pad) // 2, -1))]
    if mode == "constant":
        return _constant_pad(input, pairs, 0.0 if value is None else value)
    if value not in (None, 0, 0.0):
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"pad: mode {mode!r} is not one of 'constant', 'reflect', "
                                  f"'replicate', 'circular'")
    n_pad = len(pairs)
    if input.dim() not in (n_pad + 1, n_pad + 2):
        raise NotImplementedError(f"Only 2D, 3D, 4D, 5D padding with non-constant padding are "
                                  f"supported for now (got a {input.dim()}-D input with "
                                  f"{n_pad} padded dims)")
    out = input
    for d, left, right in pairs:
        n = input.shape[d]
        if mode == "reflect" and (left >= n or right >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({left}, {right}) at dimension "
                               f"{d} of input {list(input.shape)}")
        idx = _cached(("pad", mode, n, left, right, str(input.device)),
                      lambda: _index(_pad_positions(mode, n, left, right), input.device))
        out = out.index_select(d, idx)
    return out


def _pad_positions(mode, n, left, right):
    pos = np.arange(-left, n + right)
    if mode == "replicate":
        return np.clip(pos, 0, n - 1)
    if mode == "circular":          # negative pads crop first; the wrap is over what is left
        lo, hi = max(-left, 0), n - max(-right, 0)
        return lo + np.arange(-max(left, 0), hi - lo + max(right, 0)) % max(hi - lo, 1)
    period = 2 * (n - 1) if n > 1 else 1                    # reflect (edge not repeated)
    pos = np.abs(pos) % period
    return np.where(pos >= n, period - pos, pos)


def _constant_pad(input, pairs, value):
    """A filled tensor with the input written into its interior: one copy, and under
    autograd one node whose gradient is the interior of the incoming gradient."""
    shape = list(input.shape)
    src = input
    for d, left, right in pairs:
        if left < 0:
            src = src.narrow(d, -left, src.shape[d] + left)
            left = 0
        if right < 0:
            src = src.narrow(d, 0, src.shape[d] + right)
            right = 0
        shape[d] = src.shape[d] + left + right
        if shape[d] < 0:
            raise RuntimeError(f"The input size {input.shape[d]}, plus negative padding {left} and "
                               f"{right} resulted in a negative output size")
    out = _ops.full(shape, value, dtype=input.dtype, device=input.device)
    region = out
    for d, left, right in pairs:
        region = region.narrow(d, max(left, 0), src.shape[d])
    region.copy_(src)
    return out
