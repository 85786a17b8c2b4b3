"""The CUDA Backend: cupy arrays are the handles, cupy views are the views.

All work is queued on cupy's current stream; only the host transfers (`to_host`,
hence `.item()`, `.numpy()`, `.cpu()`) and `synchronize` wait for it. Memory comes
from cupy's memory pool.
"""
from __future__ import annotations

import numpy as np

from dispatchtorch.backend import COMPLEX, DTYPE_NAMES, Backend

from . import _bf16
from . import _fusion_source
from ._array_module import CupyModule
from .devices import INSTALL_HINT, probe
from .kernels import build_kernels

# what a handle of each dtype holds (bfloat16: its bits, see _bf16)
# (complex storage too, for the FFT prims' tests; the devices do not declare complex yet)
# (the bare dtypes, uint16-64 and float8, are not stored here: devices.py does not list them)
_STORED = DTYPE_NAMES + COMPLEX
STORAGE_DTYPES = {n: _bf16.STORAGE if n == "bfloat16" else np.dtype(n) for n in _STORED}
HOST_DTYPES = {n: _bf16.HOST if n == "bfloat16" else np.dtype(n) for n in _STORED}
_NAMES = {dt: n for n, dt in STORAGE_DTYPES.items()}
_DLPACK_CUDA = (2, 13)           # kDLCUDA, kDLCUDAManaged


class OutOfMemoryError(RuntimeError):
    """A GPU allocation failed even after cupy released its cached blocks."""


class CUDABackend(Backend):
    name = "cuda"
    api_version = (1, 0)          # the backend API this was written against

    def __init__(self, am, devices, reason=None):
        self._am = am
        self._xp = am.xp if am is not None else None
        self._devices = list(devices)
        self.unavailable_reason = reason
        self.kernels = build_kernels(am) if am is not None else {}
        self._guards = None
        if isinstance(am, CupyModule):
            self._oom = (am.xp.cuda.memory.OutOfMemoryError,)
            if len(self._devices) > 1:
                self._guards = {d.index: am.xp.cuda.Device(d.index) for d in self._devices}
                self.kernels = {k: _on_handle_device(fn, am.xp) for k, fn in self.kernels.items()}
        else:
            self._oom = (MemoryError,)

    def devices(self):
        return list(self._devices)

    # -- fused-kernel code generation (dispatchtorch.compile), see _fusion_source.py --------
    def can_fuse(self, op, dtype):
        return isinstance(self._am, CupyModule) and _fusion_source.can_fuse(op, dtype)

    def fuse_elementwise(self, region):
        """One cupy.ElementwiseKernel per region (cupy compiles and caches it on disk)."""
        import hashlib
        in_params, out_params, body = _fusion_source.operation(region)
        name = "dispatchtorch_fused_" + hashlib.sha1(body.encode()).hexdigest()[:12]
        ek = self._xp.ElementwiseKernel(in_params, out_params, body, name)
        n_out, guards, am = len(region.outputs), self._guards, self._am

        def kernel(*handles):
            outs, ins = handles[:n_out], handles[n_out:]
            if guards is None:
                ek(*ins, *outs)
            else:
                with guards[am.device_of(outs[0])]:
                    ek(*ins, *outs)
        kernel.source = f"// cupy.ElementwiseKernel({in_params!r}, {out_params!r})\n{body}"
        return kernel

    # -- memory ------------------------------------------------------------------------
    def empty(self, shape, dtype, device):
        try:
            if self._guards is None:
                return self._xp.empty(shape, STORAGE_DTYPES[dtype])
            with self._guards[device]:
                return self._xp.empty(shape, STORAGE_DTYPES[dtype])
        except self._oom as exc:
            raise self._out_of_memory(shape, dtype, device, exc) from None

    def from_host(self, array, device, copy=True):
        if array.dtype == _bf16.HOST:
            array = _bf16.host_bits(array)
        try:
            if self._guards is None:
                return self._am.upload(array)
            with self._guards[device]:
                return self._am.upload(array)
        except self._oom as exc:
            raise self._out_of_memory(array.shape, _NAMES.get(array.dtype, str(array.dtype)),
                                      device, exc) from None

    def to_host(self, handle):
        host = self._am.download(handle)
        return _bf16.host_view(host) if host.dtype.char == _bf16.CHAR else host

    def as_strided(self, storage, shape, strides, offset):
        return self._am.view(storage, shape, strides, offset)

    def copy_(self, dst, src):
        if self._guards is None:
            return self._copy(dst, src)
        with self._guards[self._am.device_of(dst)]:
            return self._copy(dst, src)

    def _copy(self, dst, src):
        xp = self._xp
        if _overlaps_differently(self._am, dst, src):
            src = src.copy()
        to_bf16, from_bf16 = dst.dtype.char == _bf16.CHAR, src.dtype.char == _bf16.CHAR
        if to_bf16 == from_bf16:
            xp.copyto(dst, src, casting="unsafe")
        elif from_bf16:
            xp.copyto(dst, self._am.bf16_to_f32(src), casting="unsafe")
        else:   # float64 and int64 go through float32 first, as ml_dtypes rounds them
            self._am.f32_to_bf16(src.astype(np.float32), dst)

    def fill_(self, dst, value):
        # convert on the host with numpy's C casts, the reference's semantics
        name = _NAMES[dst.dtype]
        host = np.asarray(value).astype(HOST_DTYPES[name])
        if name == "bfloat16":
            host = _bf16.host_bits(host)
        if self._guards is None:
            dst.fill(host[()])
        else:
            with self._guards[self._am.device_of(dst)]:
                dst.fill(host[()])

    def synchronize(self, device):
        if isinstance(self._am, CupyModule):
            self._xp.cuda.Device(device).synchronize()

    def device_index(self, handle):
        return self._am.device_of(handle)

    # -- collectives: NCCL for dispatchtorch.distributed (see nccl.py) ------------------
    @property
    def collectives_backends(self):
        if not isinstance(self._am, CupyModule):
            return ()
        from .nccl import nccl_module
        return ("nccl",) if nccl_module() is not None else ()

    def collectives_engine(self, backend, comm, device):
        if backend != "nccl" or not isinstance(self._am, CupyModule):
            return None
        from .nccl import NCCLEngine
        return NCCLEngine(comm, device, self._xp)

    # -- DLPack (zero copy with cupy, PyTorch and any CUDA consumer) ---------------------
    def data_ptr(self, storage):
        """The storage's first byte's address, as PyTorch's data_ptr() gives."""
        return storage.data.ptr

    def to_dlpack(self, handle, *args, **kwargs):
        if handle.dtype.char == _bf16.CHAR:
            handle = self._bf16_exchange_view(handle)
        return handle.__dlpack__(*args, **kwargs)

    def dlpack_device(self, handle):
        return handle.__dlpack_device__()

    def from_dlpack(self, ext):
        """Adopt a CUDA tensor without a copy: (handle, shape, dtype name, device index),
        or None when it lives elsewhere. Non-contiguous tensors are copied (a handle
        from here is a whole storage)."""
        if ext.__dlpack_device__()[0] not in _DLPACK_CUDA:
            return None
        xp = self._xp
        arr = xp.from_dlpack(ext)
        if arr.dtype == _bf16.HOST:
            arr = arr.view(_bf16.STORAGE)
        name = _NAMES.get(arr.dtype)
        if name is None:
            raise TypeError(f"from_dlpack: dtype {arr.dtype} is not supported by dispatchtorch "
                            f"(supported: {', '.join(DTYPE_NAMES)})")
        if not arr.flags.c_contiguous:
            arr = xp.ascontiguousarray(arr)
        return arr, arr.shape, name, self._am.device_of(arr)

    def _bf16_exchange_view(self, handle):
        try:     # cupy builds that know ml_dtypes' bfloat16 can export it as kDLBfloat
            return handle.view(_bf16.HOST)
        except Exception:
            raise BufferError("__dlpack__: this cupy cannot export bfloat16 (it has no bfloat16 "
                              "dtype); convert with .float() first") from None

    # -- errors ------------------------------------------------------------------------
    def _out_of_memory(self, shape, dtype, device, exc):
        nbytes = int(np.prod(shape, dtype=np.int64)) * STORAGE_DTYPES.get(dtype, np.dtype("u1")).itemsize
        msg = (f"CUDA out of memory on cuda:{device}: tried to allocate {_gib(nbytes)} for a "
               f"{tuple(shape)} {dtype} tensor")
        if isinstance(self._am, CupyModule):
            cp = self._xp
            try:
                pool = cp.get_default_memory_pool()
                with cp.cuda.Device(device):
                    free, total = cp.cuda.runtime.memGetInfo()
                msg += (f"; {_gib(pool.used_bytes())} in use by live arrays, "
                        f"{_gib(pool.total_bytes() - pool.used_bytes())} cached by cupy's pool, "
                        f"{_gib(free)} free of {_gib(total)}")
            except Exception:
                pass
        return OutOfMemoryError(f"{msg} ({exc})")


def _gib(n):
    return f"{n / 2**30:.2f} GiB"


def _span(am, a):
    """[first byte, one past the last byte] that a view touches."""
    lo = hi = am.ptr(a)
    for n, s in zip(a.shape, a.strides):
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return lo, hi + a.itemsize


def _overlaps_differently(am, dst, src):
    """src shares bytes with dst but not element for element (a race on a GPU)."""
    if dst.size == 0 or src.size == 0:
        return False
    d0, d1 = _span(am, dst)
    s0, s1 = _span(am, src)
    if d1 <= s0 or s1 <= d0:
        return False
    return not (d0 == s0 and dst.strides == src.strides and dst.itemsize == src.itemsize)


def _on_handle_device(fn, cupy):
    """With several GPUs: run fn on the device of its first handle (its output)."""
    get_device, Device = cupy.cuda.runtime.getDevice, cupy.cuda.Device

    def kernel(*args, **kwargs):
        dev = args[0].data.device_id
        if dev == get_device():
            return fn(*args, **kwargs)
        with Device(dev):
            return fn(*args, **kwargs)
    return kernel


def create_backend():
    """The backend the hook returns: zero devices and the reason when cupy or the
    driver is missing."""
    try:
        import cupy
    except Exception as exc:         # not installed, or a wheel for another CUDA
        return CUDABackend(None, [], f"cupy is not importable ({type(exc).__name__}: {exc}); "
                                     f"{INSTALL_HINT}")
    devices, reason = probe(cupy)
    return CUDABackend(CupyModule(), devices, reason)
