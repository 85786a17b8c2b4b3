"""The OpenCL Backend: devices, memory methods, and the kernel table."""
from __future__ import annotations

from math import prod

import numpy as np

from dispatchtorch.backend import Backend

from . import cltypes as T
from .device import discover
from .handle import CLArray, contiguous_strides, overlaps
from . import fusion, transfers
from .kernels import KERNELS
from .kernels.elementwise import copy_kernel, fill_kernel

_BY_NUMPY = {v: k for k, v in T.NUMPY.items()}
# host arrays up to this size become buffers at creation (no queue round trip)
_SMALL_UPLOAD = 1 << 16


class OpenCLBackend(Backend):
    name = "opencl"
    api_version = (1, 0)          # the backend API this was written against
    kernels = KERNELS

    def __init__(self):
        self._devices, self.unavailable_reason = discover()

    def devices(self):
        return [d.info() for d in self._devices]

    def device(self, index):
        """The Device object for an index (used by tests and tools)."""
        try:
            return self._devices[index]
        except IndexError:
            raise RuntimeError(f"opencl:{index} does not exist; {len(self._devices)} OpenCL "
                               f"device(s) found") from None

    # -- fused-kernel code generation (dispatchtorch.compile), see fusion.py ------------
    def can_fuse(self, op, dtype):
        return fusion.can_fuse(op, dtype)

    def fuse_elementwise(self, region):
        return fusion.fuse_elementwise(region)

    def fuse_epilogue(self, op, epilogue, dtype):
        return fusion.fuse_epilogue(op, epilogue, dtype)

    # -- memory ----------------------------------------------------------------------
    def empty(self, shape, dtype, device):
        dev = self.device(device)
        if dtype not in dev.dtypes:
            raise TypeError(f"opencl:{device} ({dev.name}) does not support dtype {dtype}"
                            + (" (the device has no cl_khr_fp64)" if dtype == "float64" else ""))
        shape = tuple(shape)
        buf = dev.alloc(prod(shape) * T.ITEMSIZE[dtype])
        return CLArray(buf, dev, dtype, shape, contiguous_strides(shape), 0)

    def from_host(self, array, device, copy=True):
        dev = self.device(device)
        arr = np.asarray(array)
        if not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr)          # (ascontiguousarray makes 0-d 1-d)
        dtype = _BY_NUMPY.get(arr.dtype)
        if dtype is None:
            raise TypeError(f"opencl: cannot hold numpy dtype {arr.dtype}")
        if dtype not in dev.dtypes:
            raise TypeError(f"opencl:{device} ({dev.name}) does not support dtype {dtype}")
        shape = arr.shape
        bits = arr.reshape(-1).view(T.BITS_NUMPY[dtype])
        nbytes = arr.nbytes
        cl = dev.cl
        if nbytes == 0:
            buf = None
        elif nbytes <= _SMALL_UPLOAD:
            buf = cl.Buffer(dev.ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=bits)
            h = CLArray(buf, dev, dtype, shape, contiguous_strides(shape), 0)
            dev.uses.keep_host_copy(h, bits)
            return h
        else:
            buf = dev.alloc(nbytes)
            transfers.write(dev, buf, bits)
        return CLArray(buf, dev, dtype, shape, contiguous_strides(shape), 0)

    def to_host(self, handle):
        out = np.empty(handle.shape, T.NUMPY[handle.dtype])
        if handle.size == 0:
            return out
        bits = out.view(T.BITS_NUMPY[handle.dtype])
        if handle.storage.host is not None:          # no command has written it
            transfers.from_host_copy(handle, bits)
            return out
        if handle.contiguous:
            src = handle
        else:
            span = transfers.strided_span(handle)
            if span is not None:
                transfers.read_strided(handle, bits, *span)
                return out
            dev = handle.dev
            src = CLArray(dev.fresh_buffer(handle.size * T.ITEMSIZE[handle.dtype]), dev,
                          handle.dtype, handle.shape, contiguous_strides(handle.shape), 0)
            with dev.aside(handle.buf):           # packed beside the queue's kernels
                copy_kernel(src, handle)
        transfers.read(src.dev, bits.reshape(-1), src.buf, src.offset * T.ITEMSIZE[src.dtype])
        return out

    def memory_stats(self, device):
        """The pool's counters: bytes in blocks tensors hold (each rounded up to the pool's
        bin size) and bytes the pool holds; small uploads (their own buffers) not counted."""
        dev = self.device(device)
        pool = dev.pool
        now = (pool.active_bytes, pool.managed_bytes)
        return {"allocated_bytes.all.current": now[0],
                "allocated_bytes.all.peak": max(dev.peak[0], now[0]),
                "reserved_bytes.all.current": now[1],
                "reserved_bytes.all.peak": max(dev.peak[1], now[1])}

    def reset_peak_memory_stats(self, device):
        dev = self.device(device)
        dev.peak = [dev.pool.active_bytes, dev.pool.managed_bytes]

    def empty_cache(self):
        """The pools' held (free) blocks go back to the driver."""
        for index in range(len(self.devices())):
            dev = self.device(index)
            if dev._pool is not None:
                dev._pool.free_held()

    def reinterpret(self, storage, dtype):
        """view(dtype): a storage handle of `dtype` on the same buffer object. Host reads
        wait for, and host copies are dropped by, writes to the buffer (uses.py keys
        both by the buffer), and the buffer returns to the pool only when neither
        handle holds it, so the two handles stay one memory."""
        if dtype not in storage.dev.dtypes:
            return None
        n = storage.capacity * T.ITEMSIZE[storage.dtype] // T.ITEMSIZE[dtype]
        return CLArray(storage.buf if n else None, storage.dev, dtype, (n,), (1,), 0)

    def as_strided(self, storage, shape, strides, offset):
        root = storage.storage
        shape, strides = tuple(shape), tuple(strides)
        if prod(shape) and offset + sum((n - 1) * s for n, s in zip(shape, strides)) >= root.capacity:
            raise ValueError(f"opencl as_strided: sizes {list(shape)}, strides {list(strides)}, "
                             f"offset {offset} reach past the storage ({root.capacity} elements)")
        return CLArray(root.buf, root.dev, root.dtype, shape, strides, offset, root, root.capacity)

    def copy_(self, dst, src):
        if dst.size == 0:
            return
        if src.dev is not dst.dev:
            src = self.from_host(self.to_host(src), dst.dev.index)
        elif overlaps(dst, src):
            if (dst.offset, dst.strides, dst.dtype) == (src.offset, src.strides, src.dtype):
                return
            src = self._contiguous_copy(src)
        if dst.dtype == src.dtype and dst.contiguous and src.contiguous:
            item = T.ITEMSIZE[dst.dtype]
            dev = dst.dev
            ev = dev.cl.enqueue_copy(dev.queue, dst.buf, src.buf, byte_count=dst.size * item,
                                     src_offset=src.offset * item, dst_offset=dst.offset * item)
            dev.uses.record(ev, (dst.buf,))
            return
        copy_kernel(dst, src)

    def fill_(self, dst, value):
        if dst.size == 0:
            return
        dt = dst.dtype
        bits = np.asarray(value, dtype=T.NUMPY[dt]).view(T.BITS_NUMPY[dt])[()]
        if dst.contiguous:
            item = T.ITEMSIZE[dt]
            dev = dst.dev
            ev = dev.cl.enqueue_fill_buffer(dev.queue, dst.buf, bits, dst.offset * item,
                                            dst.size * item)
            dev.uses.record(ev, (dst.buf,))
        else:
            fill_kernel(dst, bits)

    def synchronize(self, device):
        self.device(device).synchronize()

    def device_index(self, handle):
        return handle.dev.index

    # -- helpers ---------------------------------------------------------------------
    def _contiguous_copy(self, h):
        out = self.empty(h.shape, h.dtype, h.dev.index)
        copy_kernel(out, h)
        return out
