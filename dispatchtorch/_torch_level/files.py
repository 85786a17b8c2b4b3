"""torch.from_file: a CPU tensor over a memory-mapped file, as PyTorch's MapAllocator
makes it. shared=True maps the file MAP_SHARED (created, or grown to size elements, when
needed): writes reach the file and other processes mapping it. Otherwise the mapping is
private copy-on-write: the file must hold size elements and is never written."""
from __future__ import annotations

import mmap
import os

from .. import _dtype as D
from ..ops.buffer_factory import frombuffer


def _open_error(filename, mode, err):
    return RuntimeError(f"unable to open file <{filename}> in {mode} mode: "
                        f"{os.strerror(err.errno)} ({err.errno})")


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=False, requires_grad=False):
    """size elements of dtype (the default dtype) read from the start of filename."""
    if not isinstance(filename, str):
        raise TypeError(f"from_file(): argument 'filename' (position 1) must be str, not "
                        f"{type(filename).__name__}")
    dt = D.to_dtype(dtype) if dtype is not None else D.get_default_dtype()
    nbytes = int(size) * dt.itemsize
    if nbytes < 0:
        raise RuntimeError(f"unable to mmap {nbytes} bytes from file <{filename}>: Cannot "
                           f"allocate memory (12)")
    shared = bool(shared)
    try:
        fd = os.open(filename, os.O_RDWR | os.O_CREAT if shared else os.O_RDONLY, 0o600)
    except OSError as e:
        raise _open_error(filename, "read-write" if shared else "read-only", e) from None
    try:
        have = os.fstat(fd).st_size
        if have < nbytes:
            if not shared:
                raise RuntimeError(f"file <{filename}> size <{have}> is smaller than the "
                                   f"required mapping size <{nbytes}>")
            os.ftruncate(fd, nbytes)
        if nbytes == 0:
            from .. import ops as _ops
            out = _ops.empty(0, dtype=dt)
        else:
            mm = mmap.mmap(fd, nbytes, access=mmap.ACCESS_WRITE if shared else mmap.ACCESS_COPY)
            out = frombuffer(mm, dtype=dt, count=int(size))
    finally:
        os.close(fd)
    if device is not None:
        out = out.to(device)
    return out.requires_grad_() if requires_grad else out


PUBLIC = {"from_file": from_file}
