"""Places: the interned (backend, device index) pairs that tensors hold, so that the
per-op path compares devices by identity and reaches its backend in one step."""
from __future__ import annotations

import threading

from ._device import device as Device
from ._dtype import BY_NAME
from .dispatch.loader import get_backend, on_reset

# one device each, shown without an index, as PyTorch shows `cpu` and `meta` (any index
# names it: PyTorch's `cpu:1` is the cpu)
INDEXLESS = frozenset({"cpu", "meta"})


class Place:
    """A usable device: its public `device`, backend runtime and supported dtypes."""

    __slots__ = ("device", "type", "index", "rt", "bk", "dtypes", "info", "empty", "__weakref__")

    def __init__(self, dev: Device):
        rt = get_backend(dev.type)
        index = 0 if dev.index is None or dev.type in INDEXLESS else dev.index
        info = rt.device_info(index)      # raises with the reason if unusable
        if dev.type in INDEXLESS:
            self.device = Device(dev.type)
        else:
            self.device = dev if dev.index is not None else Device(dev.type, 0)
        self.type, self.index = dev.type, index
        self.rt, self.bk, self.info = rt, rt.backend, info
        self.dtypes = frozenset(BY_NAME[n] for n in info.dtypes if n in BY_NAME)
        self.empty = rt.backend.empty

    def __repr__(self):
        return f"<place {self.device}>"

    def check_dtype(self, dt, op="op"):
        if dt not in self.dtypes:
            have = ", ".join(sorted(d.name for d in self.dtypes))
            raise TypeError(f"{op}: device {self.device} does not support dtype {dt.name} "
                            f"(supported: {have})")


_places: dict = {}        # (type, index) -> Place
_lookup: dict = {}        # what users pass (str, device, None) -> Place
_making = threading.Lock()   # one Place per device even when threads meet it first together
_current: dict = {}       # device type -> the index `cuda` (no index) means: set_device


def current_index(device_type) -> int:
    return _current.get(device_type, 0)


def set_current_index(device_type, index) -> None:
    """`torch.<type>.set_device`: later index-less devices of the type mean `index`
    (process-wide here; PyTorch keeps it per thread). The cache of what users pass is
    dropped, since 'cuda' now names another Place."""
    _current[device_type] = index
    _lookup.clear()


def place_of(d) -> Place:
    """The Place for a device-like (None means the default device, the cpu)."""
    try:
        p = _lookup.get(d)
    except TypeError:
        p = None
    if p is not None:
        return p
    dev = Device("cpu") if d is None else Device(d) if not isinstance(d, Device) else d
    if dev.index is None and dev.type not in INDEXLESS and dev.type in _current:
        dev = Device(dev.type, _current[dev.type])
    key = (dev.type, 0 if dev.index is None or dev.type in INDEXLESS else dev.index)
    p = _places.get(key)
    if p is None:
        with _making:
            p = _places.get(key)
            if p is None:
                p = _places[key] = Place(dev)
    try:
        _lookup[d] = p
    except TypeError:
        pass
    return p


@on_reset
def reset():
    """Forget every place: their backends were unloaded."""
    _places.clear()
    _lookup.clear()
    _current.clear()
