"""Keep freed heap memory for reuse instead of handing it back to the OS (glibc only).

A training step allocates its activations fresh in the forward (they live until the
backward), frees them in the backward, and glibc then trims the top of the heap (its
trim threshold follows the largest freed mmap chunk: a few MB), so the next step's
forward takes the same memory back as new pages, each a page fault that zeroes 4 KiB.
The tiny transformer's step took 5992 minor faults and 14 ms of system time a step
(of 80-93 ms) at one thread; with the two settings below 4 faults and 0.1 ms, the
step's CPU time 66-80 ms (min-median of 20 steps, two alternations on the loaded
2-core VM). PyTorch's step faults too (1560-2151 a step, 2-5 ms of system time); in
one process both see the same settings.

mallopt(M_TRIM_THRESHOLD): the heap keeps up to TRIM bytes of free memory at its top;
mallopt(M_MMAP_THRESHOLD): blocks up to MMAP bytes come from the heap, not from a mmap
unmapped at free (which also fixes glibc's otherwise moving threshold). Larger arrays
are still mmapped (numpy madvises those of 4 MiB or more to huge pages, whose faults
are 512x fewer). The process keeps its peak heap, as PyTorch's caching allocators do
on GPUs. DISPATCHTORCH_CPU_KEEP_MEMORY=0 leaves glibc's defaults.
"""
from __future__ import annotations

import ctypes
import os
import sys

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3      # glibc's malloc.h
TRIM = 1 << 30               # bytes of free heap top kept (a step's activations, and more)
MMAP = 32 << 20              # glibc's largest mmap threshold (DEFAULT_MMAP_THRESHOLD_MAX)

applied = False


def keep_freed_memory():
    """Set the two thresholds once per process where libc is glibc; returns whether
    they are set."""
    global applied
    if applied:
        return True
    if os.environ.get("DISPATCHTORCH_CPU_KEEP_MEMORY", "1") == "0" or \
            not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version          # glibc, not musl
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    applied = bool(mallopt(M_TRIM_THRESHOLD, TRIM)) and bool(mallopt(M_MMAP_THRESHOLD, MMAP))
    return applied
