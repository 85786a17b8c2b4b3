"""The `torch.cuda`-style module API for any device type a backend provides."""
from __future__ import annotations

import collections
import warnings


class DeviceModule:
    """is_available(), device_count(), synchronize(), ... for one device type."""

    def __init__(self, device_type):
        self.device_type = device_type

    def _runtime(self):
        from .dispatch import available_names, get_backend
        if self.device_type not in available_names():
            return None
        rt = get_backend(self.device_type)
        return rt if rt.status == "ready" else None

    def is_available(self) -> bool:
        return self._runtime() is not None

    def device_count(self) -> int:
        rt = self._runtime()
        return len(rt.devices) if rt else 0

    def current_device(self) -> int:
        from ._place import current_index
        self._require()
        return current_index(self.device_type)

    def set_device(self, device) -> None:
        """Index-less devices of this type (`"cuda"`, `.cuda()`) mean `device` from now on
        (process-wide; PyTorch keeps it per thread). A negative index changes nothing."""
        from ._place import set_current_index
        index = self._index_of(device, "set_device")
        if index < 0:
            return
        self._check_index(index, "set_device")
        set_current_index(self.device_type, index)

    def device(self, device):
        """`with torch.cuda.device(i):` — i is the current device inside the block."""
        return _DeviceContext(self, device)

    def device_of(self, obj):
        """`torch.cuda.device_of(tensor)`: the tensor's device as the current one (a tensor
        of another type changes nothing)."""
        d = obj.device
        return _DeviceContext(self, d.index if d.type == self.device_type else -1)

    # -- streams and events: the device's one in-order queue (_device_streams.py) --------
    def Stream(self, device=None, priority=0, **kwargs):  # noqa: N802  (torch.cuda.Stream)
        from ._device_streams import Stream
        self._require()
        return Stream(self, device, priority, **kwargs)

    def Event(self, enable_timing=False, blocking=False, interprocess=False):  # noqa: N802
        from ._device_streams import Event
        self._require()
        return Event(self, enable_timing, blocking, interprocess)

    def current_stream(self, device=None):
        from ._device_streams import current_stream
        self._require()
        return current_stream(self, device)

    def default_stream(self, device=None):
        from ._device_streams import Stream
        self._require()
        return Stream(self, device)

    def stream(self, stream):
        from ._device_streams import StreamContext
        return StreamContext(self, stream)

    def set_stream(self, stream):
        from ._device_streams import _CURRENT
        if stream is not None:
            _CURRENT[self.device_type] = stream

    # -- random numbers: drawn on the host, one generator for every device --------------
    def get_rng_state(self, device=None):
        from .ops.random import get_rng_state
        return get_rng_state()

    def set_rng_state(self, new_state, device=None):
        from .ops.random import set_rng_state
        set_rng_state(new_state)

    def get_rng_state_all(self):
        return [self.get_rng_state(i) for i in range(max(1, self.device_count()))]

    def set_rng_state_all(self, new_states):
        for state in new_states:
            self.set_rng_state(state)

    def initial_seed(self) -> int:
        from .ops.random import initial_seed
        return initial_seed()

    def seed(self) -> None:
        from .ops.random import seed
        seed()

    seed_all = seed

    def _resolve_index(self, device):
        index = self._index_of(device, "stream") if device is not None else -1
        return self.current_device() if index < 0 else index

    def _index_of(self, device, what):
        from ._device import device as Device
        if isinstance(device, int) and not isinstance(device, bool):
            return device
        d = device if isinstance(device, Device) else Device(device)
        if d.type != self.device_type:
            raise ValueError(f"Expected a {self.device_type} device, but got: {d}")
        return self.current_device() if d.index is None else d.index

    def _check_index(self, index, what):
        count = self.device_count()
        if not 0 <= index < count:
            self._require()
            raise RuntimeError(f"torch.{self.device_type}.{what}: invalid device ordinal "
                               f"{index} ({count} {self.device_type} device(s))")

    def get_device_name(self, device=None) -> str:
        rt = self._require()
        return rt.device_info(self._resolve_index(device)).name

    def get_device_properties(self, device=None):
        rt = self._require()
        return rt.device_info(self._resolve_index(device))

    def synchronize(self, device=None) -> None:
        rt = self._require()
        rt.backend.synchronize(self._resolve_index(device))

    def manual_seed(self, seed) -> None:
        """Random numbers are drawn on the host (one stream for every device)."""
        from .ops.random import manual_seed
        manual_seed(seed)

    manual_seed_all = manual_seed

    def empty_cache(self) -> None:
        rt = self._runtime()
        if rt is not None:
            rt.backend.empty_cache()

    def is_bf16_supported(self, including_emulation=True) -> bool:
        """Whether the device holds bfloat16 tensors (False where it is absent)."""
        rt = self._runtime()
        return rt is not None and "bfloat16" in rt.device_info(0).dtypes

    # -- memory statistics: the backend's memory_stats hook; PyTorch's answers (an empty
    # dict, zeros) where the device is absent, as its CPU build gives for torch.cuda --
    def memory_stats(self, device=None):
        rt = self._runtime()
        if rt is None:
            return collections.OrderedDict()
        stats = rt.backend.memory_stats(self._resolve_index(device))
        if stats is None:
            raise NotImplementedError(f"memory_stats: the {self.device_type} backend does not "
                                      f"count its memory (its backend has no memory_stats)")
        return collections.OrderedDict(sorted(stats.items()))

    def memory_allocated(self, device=None) -> int:
        return self.memory_stats(device).get("allocated_bytes.all.current", 0)

    def max_memory_allocated(self, device=None) -> int:
        return self.memory_stats(device).get("allocated_bytes.all.peak", 0)

    def memory_reserved(self, device=None) -> int:
        return self.memory_stats(device).get("reserved_bytes.all.current", 0)

    def max_memory_reserved(self, device=None) -> int:
        return self.memory_stats(device).get("reserved_bytes.all.peak", 0)

    def reset_peak_memory_stats(self, device=None) -> None:
        rt = self._runtime()
        if rt is not None:
            self.memory_stats(device)           # refuses a backend that does not count
            rt.backend.reset_peak_memory_stats(self._resolve_index(device))

    def reset_max_memory_allocated(self, device=None) -> None:
        warnings.warn(f"torch.{self.device_type}.reset_max_memory_allocated now calls "
                      f"torch.{self.device_type}.reset_peak_memory_stats, which resets /all/ "
                      f"peak memory stats.", FutureWarning, stacklevel=2)
        self.reset_peak_memory_stats(device)

    def _require(self):
        rt = self._runtime()
        if rt is None:
            from .dispatch import available_names, get_backend
            if self.device_type in available_names():
                r = get_backend(self.device_type)
                raise RuntimeError(f"{self.device_type} is not available: {r.status}: {r.error}")
            raise RuntimeError(f"no backend is installed for device type '{self.device_type}'")
        return rt


class _DeviceContext:
    """torch.cuda.device(i): i is current inside the block, the old one after it."""

    def __init__(self, module, device):
        self._module = module
        self.idx = -1 if device is None else module._index_of(device, "device")
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = self._module.current_device()
            if self.prev_idx != self.idx:
                self._module.set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx != self.idx:
            self._module.set_device(self.prev_idx)
        return False


def _index(device):
    if device is None:
        return 0
    if isinstance(device, int):
        return device
    from ._device import device as Device
    return Device(device).index or 0


def set_num_threads(n: int) -> None:
    """Threads the CPU backend's kernels may use (numpy's BLAS and OpenMP pools)."""
    from .dispatch import get_backend
    if int(n) < 1:
        raise ValueError(f"set_num_threads: expected a positive number of threads, got {n}")
    get_backend("cpu").backend.set_num_threads(int(n))


def get_num_threads() -> int:
    from .dispatch import get_backend
    return get_backend("cpu").backend.get_num_threads()
