"""Host reads that wait only for the command writing their buffer; uploads that do
not wait at all.

The device queue is in order, so a read on it waits for every kernel queued before
it: a loss's check of its integer targets (a tensor no kernel writes) idled the
device for the whole forward pass. Reads run on a second queue instead, blocking,
after the event of the last queued command writing their buffer (uses.py: recorded
by every launch, copy and fill), so nothing on the side queue still runs when the
main queue goes on. A small tensor made from host values is read from its host copy
(uses.py) without any queue.

An upload is queued on the main queue without blocking: in order, so it lands after
every kernel still using the pool block under an earlier tensor and before every
kernel that reads it. The transfer reads a private copy of the host values, which
pyopencl's event keeps alive until it has run (the caller may change its array).
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
    """Queue buf := host's bytes (a copy taken now) on the main queue; returns at once."""
    ev = dev.cl.enqueue_copy(dev.queue, buf, host.copy(), is_blocking=False)
    dev.uses.record(ev, (buf,))


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
