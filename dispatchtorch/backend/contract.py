"""The Backend contract: what the core asks of every backend package."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

# major: incompatible contract changes; minor: additions a newer core understands.
# A backend built for (M, m) loads in a core with the same M and a minor >= m.
API_VERSION = (1, 0)


def parse_version(version):
    """(major, minor) as ints, or None when `version` is not a pair of ints."""
    try:
        major, minor = version
    except (TypeError, ValueError):
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (major, minor)):
        return None
    return major, minor


def compatible(backend_version, core_version=None) -> bool:
    """Whether a backend built for `backend_version` runs on a core providing
    `core_version` (default: this core's API_VERSION)."""
    core = API_VERSION if core_version is None else core_version
    v = parse_version(backend_version)
    return v is not None and v[0] == core[0] and v[1] <= core[1]


class BackendError(RuntimeError):
    """Raised by the core when a backend cannot do what was asked (no device,
    unsupported dtype, a kernel failure); the message names op and backend."""


@dataclass(frozen=True)
class DeviceInfo:
    index: int
    name: str
    dtypes: frozenset            # dtype names this device computes in
    properties: Mapping[str, Any] = field(default_factory=dict)


class Backend:
    """Subclass and fill in. Handles are backend-native objects (a numpy array, an
    OpenCL buffer plus layout, a cupy array) that know their shape, strides and
    dtype; the frontend never looks inside them.

    Memory methods (required, no fallback): empty, from_host, to_host, as_strided,
    copy_, fill_. Kernels: `kernels` maps prim or composite names to functions
    `fn(*outs, *inputs, **params)` that write into preallocated outputs; see
    `dispatchtorch.backend.prims.PRIMS` for each prim's exact semantics.

    Everything else the core calls is declared below with a default that is correct
    for a backend without the feature (DLPack, memory pool, threads, collectives,
    fused kernels), so the core calls it directly and never probes with getattr.
    """

    name: str = ""                       # the device type, e.g. "opencl"
    # The contract this backend was written against, as a literal: `api_version = (1, 0)`.
    # Required. (Not `= API_VERSION`: that is the running core's version, whatever it is.)
    api_version: tuple | None = None
    kernels: Mapping[str, Callable] = {}
    # Optional: elementwise kernels that allocate their result, `fn(*inputs) -> handle`
    # (a new C-contiguous handle of the inputs' shape, in the dtype the `kernels` entry
    # would be given as output), called only for inputs already of one non-0-d shape and
    # the compute dtype. Where a numpy ufunc allocates its own output, a 10-element add
    # costs 0.13 us (a tenth) less than `empty` and then the kernel. The core uses one
    # only while the op calls `kernels[name]` itself (not through a tracer's, a
    # recorder's or the fallback's wrapper), so what those see is unchanged.
    fresh_kernels: Mapping[str, Callable] = {}
    # Set when the backend loads but has no usable device (driver missing, ...).
    unavailable_reason: str | None = None

    def devices(self) -> list[DeviceInfo]:
        raise NotImplementedError

    # -- memory ------------------------------------------------------------------
    def empty(self, shape: tuple, dtype: str, device: int):
        """A fresh C-contiguous storage of `shape` on device index `device`."""
        raise NotImplementedError

    def from_host(self, array, device: int, copy: bool = True):
        """A storage holding the values of `array`, a C-contiguous numpy array.

        copy=True (the default, and what the core passes to every backend but the CPU
        reference): a fresh copy; the caller may reuse `array`. copy=False
        (`torch.from_numpy`, on the cpu only): the storage may share `array`'s memory
        where the device addresses host memory; a backend that cannot share copies."""
        raise NotImplementedError

    def to_host(self, handle):
        """A numpy array with the handle's values (shape and strides as a C-contiguous
        array of the handle's shape). Synchronises."""
        raise NotImplementedError

    def as_strided(self, storage, shape: tuple, strides: tuple, offset: int):
        """A view aliasing the memory of `storage` (a handle returned by `empty`,
        `from_host` or a previous allocation): element strides and element offset
        are counted from the start of that storage. Writes through the view
        must be visible in the storage."""
        raise NotImplementedError

    def copy_(self, dst, src) -> None:
        """dst[...] = src for handles of one shape, any layouts, possibly different
        dtypes (C casts: float to int truncates, to bool is `!= 0`)."""
        raise NotImplementedError

    def fill_(self, dst, value) -> None:
        """Set every element of the (possibly strided) handle to a Python scalar."""
        raise NotImplementedError

    def synchronize(self, device: int) -> None:
        """Wait for all queued work on the device."""

    def device_index(self, handle) -> int:
        """The device index a handle lives on (backends with one device keep this)."""
        return 0

    def data_ptr(self, storage) -> int:
        """`Tensor.data_ptr()` of a storage's first element: its address where the device
        has one (the CPU's memory, CUDA's device pointer). Default, for a device whose
        buffers have no address the host can name: a number unique to the storage
        among live ones, spaced 2**32 bytes apart from any other so that a view's
        `data_ptr()` (this plus its offset in bytes) never equals another storage's."""
        return id(storage) << 32

    # -- optional: DLPack exchange (Tensor.__dlpack__, torch.from_dlpack) -------------------
    def to_dlpack(self, handle, *args, **kwargs):
        """`Tensor.__dlpack__(*args, **kwargs)` for a tensor of this device: the handle's
        DLPack capsule. Default: this backend exports no DLPack (BufferError, as
        DLPack's protocol says)."""
        raise BufferError(f"__dlpack__: backend '{self.name}' does not export DLPack")

    def dlpack_device(self, handle) -> tuple:
        """`Tensor.__dlpack_device__()`: the handle's (DLPack device type, device id).
        Default: none (BufferError)."""
        raise BufferError(f"__dlpack_device__: backend '{self.name}' has no DLPack device")

    def from_dlpack(self, ext):
        """Adopt `ext` (an object with `__dlpack__` and `__dlpack_device__`, not on the
        host) without a copy: `(handle, shape, dtype name, device index)`, or None to
        decline, the default (`torch.from_dlpack` then asks the next backend)."""
        return None

    # -- optional: memory pool and threads ----------------------------------------------
    def empty_cache(self) -> None:
        """Give memory cached by this backend's allocator back to the driver
        (`torch.cuda.empty_cache()`, `torch.accelerator.empty_cache()`). Default: nothing
        is cached."""

    def memory_stats(self, device: int):
        """The device's memory counters in PyTorch's `torch.cuda.memory_stats()` keys:
        at least "allocated_bytes.all.current" / ".peak" (bytes tensors hold) and
        "reserved_bytes.all.current" / ".peak" (held by the allocator). Default None: the
        backend does not count, and the `memory_*` functions say so (NotImplementedError)
        instead of reporting 0."""
        return None

    def reset_peak_memory_stats(self, device: int) -> None:
        """Start the ".peak" counters of memory_stats again from the current values."""

    def set_num_threads(self, n: int) -> None:
        """Threads this backend's host-side kernels may use (`torch.set_num_threads`,
        which the core passes to the CPU reference). Default: ignored (kernels that do not
        run on host threads)."""

    def get_num_threads(self) -> int:
        """What `set_num_threads` set (`torch.get_num_threads`). Default: 1."""
        return 1

    # -- optional: memory shared with child processes (Tensor.share_memory_) ----------
    def share_memory(self, storage):
        """A storage holding `storage`'s values (same shape and dtype, C-contiguous) in
        memory that processes forked after this call share with this one and that other
        processes map from `shared_fd` (see `open_shared`); the core puts it in place of `storage`.
        Default: NotImplementedError naming the device."""
        raise NotImplementedError(
            f"share_memory_: tensors on device '{self.name}' cannot be moved to memory "
            f"shared across processes in dispatchtorch (cpu tensors can)")

    def is_shared(self, storage) -> bool:
        """Whether `storage` lives in memory `share_memory` made. Default: False."""
        return False

    def shared_fd(self, storage) -> int:
        """An fd of the memory a shared `storage` maps (owned by the storage: the caller
        duplicates it to send it to another process, see multiprocessing's DupFd)."""
        raise NotImplementedError(f"shared_fd: device '{self.name}' has no shared memory")

    def open_shared(self, fd, shape, dtype):
        """A storage of `shape` and `dtype` (a dtype name) mapping the memory of `fd`, an
        fd received from another process's `shared_fd`; it owns `fd` from now on."""
        raise NotImplementedError(f"open_shared: device '{self.name}' has no shared memory")

    # -- optional: views as another dtype (view_as_real, view_as_complex, .real, .imag,
    # Tensor.view(dtype)) --------------------------------------------------------------
    def reinterpret(self, storage, dtype: str):
        """The memory of `storage` (a root handle, C-contiguous) as a flat storage of
        `dtype`, aliasing it: any two of the backend's dtypes (complex64 <-> float32 for
        the complex views; float32 -> uint8, float16 -> int16, ... for view(dtype));
        trailing bytes too few for one element of `dtype` are left out. None (the
        default): those views raise a RuntimeError naming the backend."""
        return None

    # -- optional: collectives (dispatchtorch.distributed) ---------------------------
    # Process-group backend names this package brings its own engine for, preferred
    # first (the CUDA package: ("nccl",)); the first is the default for its tensors.
    collectives_backends: tuple = ()

    def collectives_engine(self, backend: str, comm, device: int):
        """An engine running the process-group backend `backend` (one of
        `collectives_backends`) on this backend's handles of device `device`, over the
        ranks of `comm` (an mpi4py communicator the ranks already share: use it to swap a
        bootstrap id). None (the default): the core's MPI engine serves this backend's
        tensors through host transfers. The engine's methods: docs/distributed.md."""
        return None

    # -- optional: fused-kernel code generation (dispatchtorch.compile) ------------
    def can_fuse(self, op: str, dtype: str) -> bool:
        """Whether fuse_elementwise handles FusedOp `op` computing in `dtype`; the
        compiler builds regions only from ops this accepts. Default: none."""
        return False

    def fuse_elementwise(self, region) -> Callable | None:
        """One kernel `fn(*outs, *ins)` computing a
        `dispatchtorch.backend.fusion.FusedRegion`, or None to run its prims one by
        one. Cache what you generate: the compiler asks once per region and device."""
        return None

    def fuse_epilogue(self, op: str, epilogue: str, dtype: str) -> Callable | None:
        """A kernel `fn(out, *op's inputs)` computing `epilogue(op(...))` (e.g. "relu"
        of "linear": the GEMM's output rectified before it is stored), equal to the two
        kernels one after the other, or None. The compiler asks only where nothing
        else reads op's result (dispatchtorch/_compile/epilogue.py). For
        ("matmul", "threshold_backward") the kernel is `fn(out, a, b, h)`:
        `where(h <= 0, 0.0, a @ b)`, ReLU's backward of a product. Default: none."""
        return None
