"""Handles: one OpenCL buffer per storage, plus a (shape, strides, offset, dtype) layout.

Views share their storage's buffer; strides and offset are in elements. The
frontend never looks inside a handle.
"""
from __future__ import annotations

from math import prod

from .cltypes import ITEMSIZE


def contiguous_strides(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n
    return tuple(reversed(strides))


class CLArray:
    __slots__ = ("buf", "dev", "dtype", "shape", "strides", "offset", "size", "_root",
                 "capacity", "host", "__weakref__")

    def __init__(self, buf, dev, dtype, shape, strides, offset, storage=None, capacity=None):
        self.buf = buf                   # pyopencl buffer (None when the storage is empty)
        self.dev = dev                   # the Device it lives on
        self.dtype = dtype               # dtype name
        self.shape = shape
        self.strides = strides
        self.offset = offset
        self.size = prod(shape)
        self._root = storage          # None for a storage itself (no reference cycle, so
        #                               a dropped tensor's buffer goes back to the pool at once)
        self.capacity = self.size if capacity is None else capacity   # elements in the buffer
        self.host = None                 # storages only: a host copy of the buffer's bits
        #                                  while no command has written it (uses.py)

    def __repr__(self):
        return (f"<opencl:{self.dev.index} {self.dtype} shape={self.shape} strides={self.strides} "
                f"offset={self.offset}>")

    @property
    def storage(self):
        """The handle of the storage this one views (itself for a storage)."""
        return self if self._root is None else self._root

    @property
    def contiguous(self):
        return is_contiguous(self.shape, self.strides)

    def span(self):
        """(first, last) element positions this layout touches (size > 0)."""
        last = self.offset + sum((n - 1) * s for n, s in zip(self.shape, self.strides))
        return self.offset, last


def is_contiguous(shape, strides):
    acc = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != acc:
            return False
        acc *= n
    return True


def coalesce(shape, strides_list):
    """Merge dims that every operand steps through as one, drop size-1 dims.

    Returns (shape, [strides per operand]) with at least one dim; the C-order
    linear index of an element is unchanged."""
    dims = [(n, [st[i] for st in strides_list]) for i, n in enumerate(shape) if n != 1]
    if not dims:
        return (1,), [(0,)] * len(strides_list)
    merged = [dims[0]]
    for n, sts in dims[1:]:
        pn, psts = merged[-1]
        if all(ps == s * n for ps, s in zip(psts, sts)):
            merged[-1] = (pn * n, sts)
        else:
            merged.append((n, sts))
    return tuple(n for n, _ in merged), [tuple(sts[k] for _, sts in merged)
                                         for k in range(len(strides_list))]


def overlaps(a, b):
    """Whether two non-empty layouts may touch a common byte of one buffer (two storage
    handles share one when one is the other's memory as another dtype: view(dtype))."""
    if a.buf is not b.buf:
        return False
    a0, a1 = a.span()
    b0, b1 = b.span()
    if a.dtype != b.dtype:
        ia, ib = ITEMSIZE[a.dtype], ITEMSIZE[b.dtype]
        a0, a1, b0, b1 = a0 * ia, (a1 + 1) * ia - 1, b0 * ib, (b1 + 1) * ib - 1
    return a0 <= b1 and b0 <= a1
