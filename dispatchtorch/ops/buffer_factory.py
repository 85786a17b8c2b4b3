"""torch.frombuffer: a 1-D cpu tensor over the memory of any object with the Python
buffer protocol (bytes, bytearray, array.array, mmap, memoryview, ...).

The buffer is read through memoryview (the protocol's own checks: contiguous, writable)
and handed to the CPU backend as a host array over the same memory, so writes through
the tensor or the buffer are seen by the other, as in PyTorch. A read-only buffer is
copied instead (the CPU backend keeps only writable host arrays), with PyTorch's
once-only warning saying so."""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from ..dispatch.warn_once import warn_once
from .creation import from_numpy

_READONLY = ("The given buffer is not writable, and PyTorch does not support non-writable "
             "tensors; dispatchtorch copies it, so later changes to the buffer are not seen "
             "by the tensor. This type of warning will be suppressed for the rest of this "
             "program.")


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """`count` elements of `dtype` (all that fit with count=-1) from byte `offset` on."""
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    if not view.c_contiguous:
        raise RuntimeError("could not retrieve buffer from object")
    dt = D.to_dtype(dtype)
    size, length = dt.itemsize, view.nbytes
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0 and (length - offset) % size:
        raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                         f"bytes) must be a multiple of element size ({size})")
    if count < 0:
        count = (length - offset) // size
    if offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    if view.readonly:
        warn_once("frombuffer-readonly", _READONLY)
    host = np.frombuffer(view.cast("B"), dtype=dt.np, count=count, offset=offset)
    out = from_numpy(host)
    return out.requires_grad_() if requires_grad else out


PUBLIC = {"frombuffer": frombuffer}
