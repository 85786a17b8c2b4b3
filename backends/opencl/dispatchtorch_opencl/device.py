"""OpenCL devices: discovery, and per device its context, queue, memory pool, build
options and compiled kernels.

Discovery never raises: no pyopencl, no ICD loader or no platform all become zero
devices and a reason. Contexts, queues and pools are made on first use.
"""
from __future__ import annotations

import contextlib
import threading
import warnings

from dispatchtorch.backend import DTYPE_NAMES, DeviceInfo

from . import hugepages
from .uses import BufferUses, buffer_params
from .vector_width import compiled_widths
from .errors import KernelBuildError, KernelLaunchError, OutOfMemoryError, mib

HUGE_FROM = 4 << 20        # buffers from this size get huge-page advice on CPU devices


def discover():
    """(devices, reason): every device of every platform, GPUs first; reason says
    why there are none."""
    try:
        import pyopencl as cl
    except Exception as exc:           # missing wheel, or libOpenCL.so cannot be loaded
        return [], f"pyopencl cannot be imported: {type(exc).__name__}: {exc}"
    try:
        platforms = cl.get_platforms()
    except Exception as exc:
        return [], (f"no OpenCL platform found ({exc}); install a GPU driver with an OpenCL ICD, "
                    f"or `pip install \"./backends/opencl[pocl]\"` (from a dispatchtorch checkout) for "
                    f"PoCL's CPU runtime")
    found, problems = [], []
    for p in platforms:
        try:
            found.extend((p, d) for d in p.get_devices())
        except Exception as exc:
            problems.append(f"platform {p.name!r}: {exc}")
    if not found:
        why = "; ".join(problems) or "the platforms list no devices"
        return [], f"OpenCL platforms exist but no device is usable: {why}"
    gpus_first = sorted(found, key=lambda pd: not (pd[1].type & cl.device_type.GPU))
    return [Device(i, p, d) for i, (p, d) in enumerate(gpus_first)], None


class Device:
    """One OpenCL device as the backend uses it."""

    def __init__(self, index, platform, dev):
        import pyopencl as cl
        self.cl = cl
        self.index = index
        self.platform, self.dev = platform, dev
        self.name = dev.name.strip()
        ext = set(dev.extensions.split())
        self.fp64 = "cl_khr_fp64" in ext or bool(_query(dev, "double_fp_config", 0))
        self.fp16 = "cl_khr_fp16" in ext
        self.is_cpu = bool(dev.type & cl.device_type.CPU)
        # the vector lanes its compiler targets (16 floats on AVX-512; PoCL's reported
        # native width capped where it compiles for an AVX2 CPU): the CPU matmul blocks
        self.vector_width = compiled_widths(
            {"float32": _query(dev, "native_vector_width_float", 0),
             "float64": _query(dev, "native_vector_width_double", 0)},
            _query(dev, "version", ""), self.is_cpu)
        self.compute_units = dev.max_compute_units
        self.max_alloc = dev.max_mem_alloc_size
        self.global_mem = dev.global_mem_size
        self.local_mem = dev.local_mem_size
        self.max_group = dev.max_work_group_size
        # CPUs (PoCL) run one work-item per work-group over a contiguous chunk, which the
        # compiler vectorises; GPUs run one element per work-item in groups.
        self.loop = self.is_cpu
        self.workers = max(1, self.compute_units) * 4
        # a power of two: the reduction trees and the sort's blocks halve it
        self.group = 1 << (min(256, self.max_group).bit_length() - 1)
        # matmul: register blocks on CPUs (in place where the layout allows, else
        # packed), local-memory tiles elsewhere
        self.matmul_path = "direct" if self.is_cpu else "tiled"
        self.dtypes = frozenset(d for d in DTYPE_NAMES if d != "float64" or self.fp64)
        options = []
        if _query(dev, "single_fp_config", 0) & cl.device_fp_config.CORRECTLY_ROUNDED_DIVIDE_SQRT:
            options.append("-cl-fp32-correctly-rounded-divide-sqrt")
        self.build_options = options
        self._ctx = self._queue = self._pool = self._dummy = self._side = None
        self._starting = threading.Lock()   # threads meeting the device first share one context
        # a cl.Kernel holds its arguments: setting them and queueing the kernel is one step
        # per kernel object, or two threads launching one cached kernel swap arguments
        self._launching = threading.Lock()
        self._aside = threading.local()   # .wait: inside aside(), the side queue's wait list
        # the last command queued that wrote each buffer: a host read waits for that
        # command only, not the whole queue (see uses.py, transfers.py)
        self.uses = BufferUses()
        self.kernel_buffers = {}   # cl.Kernel -> buffer_params of its signature
        from pyopencl._cl import PooledBuffer
        self.buffer_types = frozenset((cl.Buffer, PooledBuffer))
        self._advised = set()      # pool blocks already given huge-page advice
        self.peak = [0, 0]         # pooled bytes: most allocated, most reserved (memory_stats)
        self.kernels = {}          # cache key -> (cl.Kernel, description)
        self.plans = {}            # launch plans keyed by op and layout

    # -- lazily made runtime objects -------------------------------------------------
    def _start(self):
        cl = self.cl
        from pyopencl.tools import ImmediateAllocator, MemoryPool
        with self._starting:
            if self._ctx is not None:
                return
            ctx = cl.Context([self.dev])
            self._queue = cl.CommandQueue(ctx)
            self._pool = MemoryPool(ImmediateAllocator(self._queue))
            self._ctx = ctx                  # last: the unlocked readers test it first

    @property
    def ctx(self):
        if self._ctx is None:
            self._start()
        return self._ctx

    @property
    def queue(self):
        if self._queue is None:
            self._start()
        return self._queue

    @property
    def side_queue(self):
        """A second in-order queue for host reads: they wait on the event of the last
        command writing their buffer instead of behind every kernel of `queue`."""
        if self._side is None:
            ctx = self.ctx
            with self._starting:
                if self._side is None:
                    self._side = self.cl.CommandQueue(ctx)
        return self._side

    @property
    def pool(self):
        if self._pool is None:
            self._start()
        return self._pool

    def info(self) -> DeviceInfo:
        d, cl = self.dev, self.cl
        props = {
            "platform": self.platform.name.strip(),
            "type": cl.device_type.to_string(d.type).replace("ALL | ", ""),
            "opencl": d.version.strip(),
            "driver": d.driver_version.strip(),
            "compute_units": self.compute_units,
            "global_mem_mib": self.global_mem // 2**20,
            "max_alloc_mib": self.max_alloc // 2**20,
            "local_mem_kib": self.local_mem // 1024,
            "fp64": self.fp64,
            "fp16": self.fp16,
            "fp16_storage": True,
        }
        return DeviceInfo(self.index, self.name, self.dtypes, props)

    def __repr__(self):
        return f"<opencl:{self.index} {self.name}>"

    # -- memory ---------------------------------------------------------------------
    def alloc(self, nbytes):
        """A pooled buffer of nbytes (None for zero bytes)."""
        if nbytes == 0:
            return None
        if nbytes > self.max_alloc:
            raise OutOfMemoryError(
                f"opencl:{self.index} ({self.name}): out of device memory: cannot allocate "
                f"{mib(nbytes)} in one buffer (the device's largest allocation is "
                f"{mib(self.max_alloc)}, its memory {mib(self.global_mem)})")
        try:
            pool = self.pool
            buf = pool.allocate(nbytes)
            peak, active, managed = self.peak, pool.active_bytes, pool.managed_bytes
            if active > peak[0]:
                peak[0] = active
            if managed > peak[1]:
                peak[1] = managed
            if self.is_cpu and nbytes >= HUGE_FROM and buf.int_ptr not in self._advised:
                self._advised.add(buf.int_ptr)          # once per block the pool makes
                hugepages.advise(self.cl, self.queue, buf, nbytes)
            return buf
        except self.cl.Error as exc:
            pool = self._pool
            raise OutOfMemoryError(
                f"opencl:{self.index} ({self.name}): out of device memory allocating "
                f"{mib(nbytes)} (tensors alive in the pool: {pool.active_blocks} blocks; "
                f"{mib(self.global_mem)} on the device): {exc}. Existing tensors are unchanged; "
                f"free some (del, or smaller batches) and retry.") from None

    @property
    def dummy(self):
        """A small buffer for pointer arguments a launch does not use (OpenCL 1.2 has
        no null buffers)."""
        if self._dummy is None:
            self._dummy = self.alloc(64)
        return self._dummy

    def synchronize(self):
        """Wait for the whole queue; forget the uses it finished (not those another
        thread queued meanwhile)."""
        if self._queue is None:
            return
        seen = self.uses.snapshot()
        self._queue.finish()
        self.uses.forget(seen)

    def wait_list(self, event):
        """[event] for a side-queue command to wait on (the main queue flushed so it
        can complete), or None."""
        if event is None:
            return None
        self.queue.flush()
        return [event]

    @contextlib.contextmanager
    def aside(self, *reads):
        """Launches inside run on the side queue, after the last writes of the buffers
        `reads` (what they read), beside the main queue's kernels: for a host read that
        needs a kernel first (packing a strided view, an integer zero check). What
        they write must be fresh, unpooled memory (no main-queue kernel may still use
        it), and the caller reads it back on the side queue before leaving."""
        events = [e for e in (self.uses.before_read(b) for b in reads if b is not None)
                  if e is not None]
        if events:
            self.queue.flush()
        self._aside.wait = events
        try:
            yield
        finally:
            self._aside.wait = None

    def fresh_buffer(self, nbytes):
        """An unpooled buffer (for kernels launched aside)."""
        return self.cl.Buffer(self.ctx, self.cl.mem_flags.READ_WRITE, max(1, nbytes))

    def _forget_completed(self):
        done = self.cl.command_execution_status.COMPLETE
        self.uses.forget(self.uses.snapshot(), lambda ev: ev.command_execution_status == done)
        if len(self.uses) > self.uses.limit // 2:    # the host runs far ahead: catch up once
            self.synchronize()

    # -- kernels --------------------------------------------------------------------
    def kernel(self, key, make):
        """(kernel, description) for a cache key; make() -> KernelSpec runs only when
        this device has not built it yet."""
        entry = self.kernels.get(key)
        if entry is None:
            spec = make()
            entry = self.kernels[key] = (self._build(spec), spec.what)
        return entry

    def _build(self, spec):
        cl = self.cl
        source = spec.source
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", cl.CompilerWarning)
                program = self._program(source)
            k = cl.Kernel(program, spec.name)
        except cl.Error as exc:
            raise KernelBuildError(
                f"opencl:{self.index} ({self.name}): building the kernel for {spec.what} failed. "
                f"Compiler log:\n{_log(exc)}\n--- generated source ---\n{_numbered(source)}"
            ) from None
        k.set_scalar_arg_dtypes(spec.arg_types)
        self.kernel_buffers[k] = buffer_params(source, spec.name)
        return k

    def _program(self, source):
        """A built program, through pyopencl's on-disk binary cache.

        pyopencl skips that cache for drivers that cache source builds themselves
        (PoCL, NVIDIA), but a source-cache hit still preprocesses (~0.1 s per program
        on PoCL) while loading the cached binary takes milliseconds, so the binary
        cache is used everywhere. PYOPENCL_NO_CACHE=1 turns it off. A failed build
        is repeated the plain way, whose error carries the compiler log."""
        cl = self.cl
        from pyopencl import _PYOPENCL_NO_CACHE
        if not _PYOPENCL_NO_CACHE:
            from pyopencl.cache import create_built_program_from_source_cached
            try:
                program, _ = create_built_program_from_source_cached(
                    self.ctx, source, " ".join(self.build_options).encode(), [self.dev])
                return cl.Program(program)
            except cl.Error:
                pass
        return cl.Program(self.ctx, source).build(options=self.build_options)

    def launch(self, kernel, gsize, lsize, args, what):
        """Queue a kernel; returns its event, recorded as the last write of each buffer
        argument its signature does not declare const."""
        try:
            aside = getattr(self._aside, "wait", None)
            if aside is None:
                queue = self.queue
                with self._launching:
                    ev = kernel(queue, gsize, lsize, *args)
            else:
                queue = self.side_queue
                with self._launching:
                    ev = kernel(queue, gsize, lsize, *args, wait_for=aside)
        except self.cl.Error as exc:
            raise KernelLaunchError(f"opencl:{self.index} ({self.name}): launching the kernel for "
                                    f"{what} (global {gsize}, local {lsize}) failed: {exc}") from None
        if self.uses.launched(ev, self.kernel_buffers.get(kernel), args, self.buffer_types):
            self._forget_completed()
        return ev

    # -- launch geometry ---------------------------------------------------------------
    def split(self, n, min_chunk=16384, per_item_cost=1, chunked=False):
        """(work-items, chunk, global size, local size) covering n elements.

        CPUs: a few contiguous chunks per compute unit, one work-item per group (the
        compiler vectorises the chunk's loop). GPUs: one element per work-item in
        groups of `self.group`, or with `chunked`, 64-element chunks (for kernels
        that keep a running count per work-item). Kernels check the bound."""
        if self.loop:
            min_chunk = max(1, min_chunk // per_item_cost)
            items = max(1, min(self.workers, -(-n // min_chunk)))
            chunk = -(-n // items)
            items = -(-n // chunk)
            return items, chunk, (items,), (1,)
        chunk = 64 if chunked else 1
        items = -(-n // chunk)
        g = self.group
        return items, chunk, (-(-items // g) * g,), (g,)


    def one_per_item(self, n):
        """(global, local) sizes for one work-item per item (kernels check the bound)."""
        if self.loop:
            return (n,), (1,)
        g = self.group
        return (-(-n // g) * g,), (g,)


def _query(dev, name, default):
    """A device property, or default where the driver does not answer the query."""
    try:
        return getattr(dev, name)
    except Exception:
        return default


def _log(exc):
    text = str(exc)
    return text.strip() or repr(exc)


def _numbered(source):
    return "\n".join(f"{i + 1:4d}  {line}" for i, line in enumerate(source.splitlines()))
