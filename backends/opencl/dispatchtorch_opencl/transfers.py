"""Host reads and writes that wait only for the commands using their buffer.

The device queue is in order, so a read on it waits for every kernel queued before
it: a loss's check of its integer targets (a tensor no kernel writes) idled the
device for the whole forward pass. Reads and writes run on a second queue instead,
after the event of the last command queued that used their buffer
(uses.py: recorded by every launch, copy and fill; a read waits for the last
command writing the buffer, a write for the last one using it). Every one of them is
blocking, so nothing on the side queue is still running when the main queue goes on.

Pool blocks are reused under the same `int_ptr`, so a write into a fresh tensor also
waits for the kernels still using its memory under an earlier tensor.
"""
from __future__ import annotations

import numpy as np

from . import cltypes as T

# a strided view is read as the span of storage it covers when that span is at most
# this many times its size (else a copy kernel packs it first)
SPAN_READ_RATIO = 4


def read(dev, host, buf, byte_offset=0):
    """host[...] := buf's bytes from byte_offset, once the last queued command writing
    buf has run."""
    dev.cl.enqueue_copy(dev.side_queue, host, buf, src_offset=byte_offset,
                        wait_for=dev.wait_list(dev.uses.before_read(buf)), is_blocking=True)


def write(dev, buf, host):
    """buf := host's bytes, once the commands still using buf's memory have run."""
    dev.uses.drop_host_copy(buf.int_ptr)
    dev.cl.enqueue_copy(dev.side_queue, buf, host, wait_for=dev.wait_list(dev.uses.before_write(buf)),
                        is_blocking=True)


def strided_span(handle):
    """(first element, span) when a non-contiguous view is read faster as the whole
    span of storage it covers (no negative strides), else None."""
    if min(handle.strides, default=0) < 0:
        return None
    first, last = handle.span()
    span = last - first + 1
    return (first, span) if span <= SPAN_READ_RATIO * handle.size else None


def read_strided(handle, bits, first, span):
    """bits (a C-order host array of handle's shape) := the view's elements, read as
    one span of storage."""
    item = T.ITEMSIZE[handle.dtype]
    raw = np.empty(span, bits.dtype)
    read(handle.dev, raw, handle.buf, first * item)
    view = np.lib.stride_tricks.as_strided(raw, handle.shape,
                                           tuple(s * item for s in handle.strides))
    bits[...] = view


def from_host_copy(handle, bits):
    """bits (a C-order host array of handle's shape) := the view's elements from its
    storage's host copy."""
    src = handle.storage.host
    item = src.itemsize
    bits[...] = np.lib.stride_tricks.as_strided(src[handle.offset:], handle.shape,
                                                tuple(s * item for s in handle.strides))
