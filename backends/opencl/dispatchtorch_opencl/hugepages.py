"""Ask Linux for transparent huge pages under large buffers of CPU devices.

On a CPU device (PoCL) a buffer is ordinary host memory. Streaming ops over tens of
megabytes are bound by memory and TLB misses, and numpy gets ~10% more bandwidth from
its arrays because it advises huge pages for large allocations; doing the same for a
fresh buffer, before anything touches it, gives our kernels the same footing. Best
effort: elsewhere (other OSes, a driver whose map is a copy) it does nothing harmful.
"""
from __future__ import annotations

import ctypes
import sys

import numpy as np

HUGE = 2 << 20
MADV_HUGEPAGE = 14
_madvise = None


def _libc_madvise():
    global _madvise
    if _madvise is None:
        _madvise = False
        if sys.platform.startswith("linux"):
            try:
                fn = ctypes.CDLL(None, use_errno=True).madvise
                fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
                _madvise = fn
            except (OSError, AttributeError):
                pass
    return _madvise


def advise(cl, queue, buf, nbytes):
    """madvise(MADV_HUGEPAGE) over the 2 MiB-aligned interior of buf's memory."""
    madvise = _libc_madvise()
    if not madvise or nbytes < 2 * HUGE:
        return
    mapped, _ = cl.enqueue_map_buffer(queue, buf, cl.map_flags.WRITE_INVALIDATE_REGION, 0,
                                      (nbytes,), np.uint8)
    try:
        addr = mapped.ctypes.data
        start = -(-addr // HUGE) * HUGE
        end = (addr + nbytes) // HUGE * HUGE
        if end > start:
            madvise(start, end - start, MADV_HUGEPAGE)
    finally:
        mapped.base.release(queue)
