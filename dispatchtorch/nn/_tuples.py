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


single = ntuple(1)
pair = ntuple(2)
triple = ntuple(3)
