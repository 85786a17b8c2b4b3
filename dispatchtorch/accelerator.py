"""torch.accelerator: the device-agnostic view of "the" accelerator, which here is the
first ready backend other than cpu and meta (cuda preferred, then the others by name,
e.g. opencl). With none, is_available() is False and the rest says so. The current
index is the device module's (`torch.cuda.set_device`); streams are its (one in-order
queue per device, _device_streams.py)."""
from __future__ import annotations

import contextlib

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "device_count",
           "device_index", "empty_cache", "is_available", "set_device_idx",
           "set_device_index", "synchronize"]

_HOST = ("cpu", "meta")


def _accelerator_type():
    from .dispatch import available_names, get_backend
    names = [n for n in available_names() if n not in _HOST]
    names.sort(key=lambda n: (n != "cuda", n))
    for name in names:
        if get_backend(name).status == "ready":
            return name
    return None


def _module(name):
    from ._accelerator import DeviceModule
    return DeviceModule(name)


def is_available() -> bool:
    return _accelerator_type() is not None


def current_accelerator(check_available=False):
    """The accelerator's device type as a torch.device, or None without one."""
    from ._device import device
    name = _accelerator_type()
    return None if name is None else device(name)


def device_count() -> int:
    name = _accelerator_type()
    return 0 if name is None else _module(name).device_count()


def _require(what):
    name = _accelerator_type()
    if name is None:
        raise RuntimeError(f"torch.accelerator.{what}: no accelerator is available")
    return name


def current_device_index() -> int:
    return _module(_require("current_device_index")).current_device()


def set_device_index(device) -> None:
    from ._accelerator import _index
    name = _require("set_device_index")
    index = _index(device)
    if not 0 <= index < _module(name).device_count():
        raise ValueError(f"torch.accelerator.set_device_index: device index {index} is out of "
                         f"range for {name} ({_module(name).device_count()} devices)")
    _module(name).set_device(index)


current_device_idx = current_device_index
set_device_idx = set_device_index


@contextlib.contextmanager
def device_index(device):
    """Within the block, `device` (an index, or None for no change) is the current one."""
    if device is None:
        yield
        return
    previous = current_device_index()
    set_device_index(device)
    try:
        yield
    finally:
        set_device_index(previous)


def synchronize(device=None) -> None:
    name = _require("synchronize")
    _module(name).synchronize(current_device_index() if device is None else device)


def empty_cache() -> None:
    name = _accelerator_type()
    if name is not None:
        _module(name).empty_cache()

