"""Argument normalisation shared by layers and functions: `2` -> `(2, 2)`."""
from __future__ import annotations

import operator


def ntuple(n, name="argument"):
    def parse(v):
        if isinstance(v, (tuple, list)):
            if len(v) == 1:           # as ATen's int[n] arguments: one value for every dim
                v = tuple(v) * n
            if len(v) != n:
                raise ValueError(f"{name} must be an int or a sequence of {n} ints, got {v!r}")
            return tuple(operator.index(x) for x in v)
        return (operator.index(v),) * n
    return parse


def adaptive_size(name, output_size, input, dims):
    """An adaptive pool's output_size as PyTorch reads it: an int stays; a sequence needs
    more input dims than it has entries (ValueError, _list_with_default), then exactly
    `dims` entries; None entries take the input's size."""
    if not isinstance(output_size, (tuple, list)):
        return output_size
    if dims == 1:
        if len(output_size) != 1:
            raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got "
                               f"{len(output_size)})")
        return tuple(output_size)
    if input.dim() <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    if len(output_size) != dims:
        raise RuntimeError(f"{name}: output_size must be {dims}")
    return tuple(v if v is not None else d
                 for v, d in zip(output_size, tuple(input.shape)[-len(output_size):]))


def check_nonnegative(name, sizes):
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{', '.join(map(str, sizes))}}}")


single = ntuple(1)
pair = ntuple(2)
triple = ntuple(3)
