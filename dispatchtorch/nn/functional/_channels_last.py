"""Channels-last results for the image ops: ATen's convolution, pooling, normalisation,
padding and interpolation kernels allocate their output in the input's suggested memory
format (`suggest_memory_format`), so a channels_last input gives a channels_last result.

Here the op computes as it always does and the result is copied into that layout only
when an input is channels-last-like: a C-contiguous input (the usual case) pays one
attribute check.
"""
from __future__ import annotations

import functools

from ..._layout import channels_last, contiguous_format
from ..._output_strides import channels_last_3d_strides, channels_last_strides, suggested_format
from ..._tensor import Tensor


def _format(x):
    if isinstance(x, Tensor) and x._stride is not None:
        return suggested_format(x._shape, x._stride)
    return contiguous_format


def _laid_out(r, fmt):
    rank = 4 if fmt is channels_last else 5
    if isinstance(r, tuple):
        return type(r)(*(_laid_out(x, fmt) for x in r)) if hasattr(r, "_fields") else \
            tuple(_laid_out(x, fmt) for x in r)
    if not isinstance(r, Tensor) or r.dim() != rank:
        return r
    want = channels_last_strides(r._shape) if rank == 4 else channels_last_3d_strides(r._shape)
    return r if r.stride() == want else r.clone(memory_format=fmt)


def in_input_format(weight=False):
    """Decorate fn(input, weight?, ...) so its result is laid out in input's suggested
    memory format (or weight's, for convolutions, as oneDNN's conv chooses)."""
    def decorate(fn):
        @functools.wraps(fn)
        def laid_out_fn(input, *args, **kwargs):
            r = fn(input, *args, **kwargs)
            fmt = _format(input)
            if fmt is contiguous_format and weight:
                fmt = _format(args[0] if args else kwargs.get("weight"))
            return r if fmt is contiguous_format else _laid_out(r, fmt)
        return laid_out_fn
    return decorate
