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
        self._require()
        return 0

    def get_device_name(self, device=None) -> str:
        rt = self._require()
        return rt.device_info(_index(device)).name

    def get_device_properties(self, device=None):
        rt = self._require()
        return rt.device_info(_index(device))

    def synchronize(self, device=None) -> None:
        rt = self._require()
        rt.backend.synchronize(_index(device))

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
        stats = rt.backend.memory_stats(_index(device))
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
            rt.backend.reset_peak_memory_stats(_index(device))

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
