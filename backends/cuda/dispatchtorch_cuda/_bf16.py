"""bfloat16 as 16-bit patterns: a bfloat16 handle is a uint16 array of its bits.

cupy has no bfloat16 dtype in every version we support, and none of our dtypes is
uint16, so a uint16 handle always means bfloat16. Arithmetic widens to float32 and
rounds once on the way back (round to nearest even, NaN kept quiet and signed),
which is exactly what ml_dtypes does on the CPU reference. These are the xp-op
versions (numpy or cupy); the cupy module swaps in one fused kernel each
(`_fused.py`), checked against these on a GPU.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

STORAGE = np.dtype(np.uint16)             # what a bfloat16 handle holds
HOST = np.dtype(ml_dtypes.bfloat16)       # what the frontend sees on the host
CHAR = STORAGE.char                       # 'H': the test every kernel makes

_SHIFT = np.uint32(16)
_HALF_MINUS_ONE = np.uint32(0x7FFF)
_ONE = np.uint32(1)
_QUIET = np.uint32(0x40)


def to_f32(xp, bits):
    """float32 values of a bfloat16 bit array (exact: bfloat16 is float32's top half)."""
    return (bits.astype(xp.uint32) << _SHIFT).view(xp.float32)


def from_f32(xp, values):
    """bfloat16 bits of float32 values, rounded to nearest even; NaN stays NaN."""
    f = xp.asarray(values, dtype=xp.float32)
    if not f.flags.c_contiguous:
        f = f.copy()
    u = f.view(xp.uint32)
    high = u >> _SHIFT
    rounded = (u + (_HALF_MINUS_ONE + (high & _ONE))) >> _SHIFT
    return xp.where(f != f, high | _QUIET, rounded).astype(xp.uint16)


def host_view(array):
    """A host uint16 bit array seen as ml_dtypes bfloat16 (no copy)."""
    return array.view(HOST)


def host_bits(array):
    """A host bfloat16 array seen as its uint16 bits (no copy)."""
    return array.view(STORAGE)
