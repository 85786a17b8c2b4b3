"""The CPU Backend: numpy arrays are the handles, numpy views are the views."""
from __future__ import annotations

import mmap
import os
import warnings

import ml_dtypes
import numpy as np

from dispatchtorch.backend import ALL_DTYPE_NAMES, FLOAT8, Backend, DeviceInfo

from . import float8_casts, fusion
from .complex_kernels import KERNELS as COMPLEX_KERNELS
from .composites import KERNELS as COMPOSITE_KERNELS
from .conv_kernels import KERNELS as CONV_KERNELS
from .fresh import fresh_kernels
from . import parallel
from .gelu import KERNELS as GELU_KERNELS
from .keep_memory import keep_freed_memory
from .kernels import KERNELS
from .norm_backward import KERNELS as NORM_BACKWARD_KERNELS
from .optim_kernels import KERNELS as OPTIM_KERNELS
from .pool_kernels import KERNELS as POOL_KERNELS
from .softmax_backward import KERNELS as SOFTMAX_BACKWARD_KERNELS
from .threaded import threaded_kernels
from .blas_threads import BLAS

NP_DTYPES = {n: np.dtype(getattr(ml_dtypes, n) if n == "bfloat16" or n in FLOAT8 else n)
             for n in ALL_DTYPE_NAMES}

# IEEE results such as 1/0 = inf are the semantics, not accidents: keep numpy's
# floating-point warnings from our kernels out of the user's console (only ours).
_ndarray = np.ndarray
_FLOAT8 = float8_casts.FLOAT8
_BYTE_STRIDES: dict = {}       # (element strides, itemsize) -> byte strides: views repeat

warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"dispatchtorch_cpu(\.|$)")


class _Segment(mmap.mmap):
    """A shared mapping that owns the fd of the memory it maps, so that its storage can
    be sent to another process for as long as any array views it; the fd closes with it."""
    __slots__ = ("fd",)

    def __del__(self, _close=os.close):
        fd = getattr(self, "fd", None)
        if fd is not None:
            _close(fd)


def _segment(storage):
    base = storage
    while isinstance(base, np.ndarray):
        base = base.base
    return base.obj if isinstance(base, memoryview) and isinstance(base.obj, _Segment) else None


def _memory_file(nbytes):
    """An fd of `nbytes` of zeroed memory with no name anywhere (memfd on Linux; an
    unlinked temporary file elsewhere)."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("dispatchtorch-shared", os.MFD_CLOEXEC)
    else:
        import tempfile
        with tempfile.TemporaryFile() as f:
            fd = os.dup(f.fileno())
    try:
        os.ftruncate(fd, nbytes)
    except BaseException:
        os.close(fd)
        raise
    return fd


class CPUBackend(Backend):
    name = "cpu"
    api_version = (1, 0)
    kernels = threaded_kernels({**KERNELS, **COMPOSITE_KERNELS, **OPTIM_KERNELS,
                                **COMPLEX_KERNELS, **GELU_KERNELS, **CONV_KERNELS,
                                **POOL_KERNELS, **NORM_BACKWARD_KERNELS,
                                **SOFTMAX_BACKWARD_KERNELS})
    fresh_kernels = fresh_kernels(kernels)

    def __init__(self):
        super().__init__()
        # freed activations stay in the heap for the next step (keep_memory.py)
        keep_freed_memory()
        # BLAS rests on one thread; blas_threads.py sets the pool's count around the
        # large GEMMs and sums it chooses
        BLAS.rest()

    def devices(self):
        return [DeviceInfo(0, f"host CPU (numpy {np.__version__})", frozenset(ALL_DTYPE_NAMES),
                           {"threads": os.cpu_count(), "fp64": True, "fp16": True})]

    def empty(self, shape, dtype, device):
        return np.empty(shape, NP_DTYPES[dtype])

    def from_host(self, array, device, copy=True):
        if copy or not array.flags.c_contiguous or not array.flags.writeable:
            return np.array(array, order="C", copy=True)
        return array

    def to_host(self, handle):
        return handle

    def share_memory(self, storage):
        # a MAP_SHARED mapping of a nameless memory file (PyTorch's file_descriptor
        # strategy): forked children inherit the mapping, others get the fd itself
        # (multiprocessing's fd passing, see shared_fd) and map the same pages. Nothing
        # is named in /dev/shm, so nothing can leak: the kernel frees the memory when the
        # last mapping and fd anywhere are gone.
        fd = _memory_file(max(storage.nbytes, 1))
        shared = self.open_shared(fd, storage.shape, storage.dtype)
        np.copyto(shared, storage)
        return shared

    def is_shared(self, storage):
        return _segment(storage) is not None

    def shared_fd(self, storage):
        return _segment(storage).fd

    def open_shared(self, fd, shape, dtype):
        dtype = NP_DTYPES[dtype] if isinstance(dtype, str) else np.dtype(dtype)
        size = 1
        for n in shape:
            size *= n
        nbytes = os.fstat(fd).st_size
        if nbytes < size * dtype.itemsize:
            os.close(fd)
            raise RuntimeError(f"share_memory_: the shared memory received holds {nbytes} "
                               f"bytes, fewer than a {dtype} storage of shape {tuple(shape)}")
        try:
            seg = _Segment(fd, nbytes)
        except BaseException:
            os.close(fd)
            raise
        seg.fd = fd
        return np.frombuffer(seg, dtype, size).reshape(shape)

    def as_strided(self, storage, shape, strides, offset):
        item = storage.itemsize
        if 0 in shape:
            offset = 0      # an empty view reads nothing; its offset may lie past the end
        key = (strides, item)
        byte_strides = _BYTE_STRIDES.get(key)
        if byte_strides is None:
            byte_strides = tuple([s * item for s in strides])
            if len(_BYTE_STRIDES) < 8192:
                _BYTE_STRIDES[key] = byte_strides
        return _ndarray(shape, storage.dtype, storage, offset * item, byte_strides)

    def copy_(self, dst, src):
        if dst.dtype is not src.dtype and (dst.dtype in _FLOAT8 or src.dtype in _FLOAT8):
            float8_casts.copy(dst, src)     # rounded as c10 rounds (a same-dtype copy: one test)
            return
        np.copyto(dst, src, casting="unsafe")

    def fill_(self, dst, value):
        if dst.dtype in _FLOAT8:
            float8_casts.copy(dst, np.asarray(value))
            return
        dst.fill(value)

    def reinterpret(self, storage, dtype):
        """view_as_real / view_as_complex / view(dtype): the same bytes as a flat array
        of `dtype` (trailing bytes too few for one more element left out)."""
        flat = storage.reshape(-1)
        to = NP_DTYPES[dtype]
        if flat.dtype.itemsize == to.itemsize:
            return flat.view(to)
        nbytes = flat.nbytes - flat.nbytes % to.itemsize
        return flat.view(np.uint8)[:nbytes].view(to)

    def set_num_threads(self, n):
        """Threads the large-array kernels and the fused regions of compiled graphs
        (fusion.py) share their chunks among (parallel.py)."""
        parallel.POOL.resize(int(n))

    def get_num_threads(self):
        return parallel.POOL.threads

    # fused-kernel code generation (dispatchtorch.compile): tiled numpy, see fusion.py
    def can_fuse(self, op, dtype):
        return fusion.can_fuse(op, dtype)

    def fuse_elementwise(self, region):
        return fusion.fuse_elementwise(region, NP_DTYPES)

    def fuse_epilogue(self, op, epilogue, dtype):
        return fusion.fuse_epilogue(self.kernels, op, epilogue, dtype)

    def data_ptr(self, storage):
        """The storage's first byte's address, as PyTorch's data_ptr() gives."""
        return storage.ctypes.data if storage.nbytes else 0      # PyTorch: 0 when unallocated

    def to_dlpack(self, handle, *args, **kwargs):
        return handle.__dlpack__(*args, **kwargs)

    def dlpack_device(self, handle):
        return handle.__dlpack_device__()
