"""Where a storage of a PyTorch file is loaded (torch.load's map_location, PyTorch's
rules: a device, a {saved: target} dict, or fn(storage, saved_location) returning a
storage or None) and the flat tensor over its bytes."""
from __future__ import annotations

import numpy as np

from .._device import device as Device
from .._storage import TypedStorage, UntypedStorage, as_flat_of, of_tensor
from .._tensor import Tensor


def target(location, map_location):
    """The device string a storage saved at `location` goes to; None for a callable."""
    if map_location is None:
        return location
    if isinstance(map_location, dict):
        return str(map_location.get(location, location))
    if isinstance(map_location, (str, Device)):
        return str(map_location)
    if isinstance(map_location, bytes):
        return map_location.decode("ascii")
    if callable(map_location):
        return None
    raise TypeError(f"map_location must be a device, a str, a dict or a callable, not "
                    f"{type(map_location).__name__}")


def is_meta(map_location):
    return isinstance(map_location, (str, Device)) and Device(str(map_location)).type == "meta"


def _to(t, device):
    if str(device) == "cpu":
        return t
    try:
        return t.to(device)
    except Exception as exc:
        kind = Device(device).type
        raise RuntimeError(f"Attempting to deserialize object on a {kind} device ({device}) that "
                           f"this dispatchtorch cannot use ({exc}). If you are running on a "
                           f"machine without it, please use torch.load with "
                           f"map_location=torch.device('cpu') to map your storages to the CPU."
                           ) from None


def flat(ref, dt, raw, map_location, byteswap=False):
    """The flat tensor of dtype dt over raw (ref's bytes; None: left uninitialized,
    filled later), placed by map_location."""
    from ..ops import creation
    n = ref.nbytes // dt.itemsize
    if raw is None:
        t = creation.empty(n, dtype=dt, device="cpu")
    else:
        host = np.frombuffer(raw, dtype=dt.np, count=n)
        if byteswap and dt.itemsize > 1:
            unit = dt.itemsize // 2 if dt.name.startswith("complex") else dt.itemsize
            host = host.view(np.uint8).reshape(-1, unit)[:, ::-1].reshape(-1).view(dt.np)
        t = creation.tensor(host, dtype=dt, device="cpu")
    dest = target(ref.location, map_location)
    if dest is not None:
        return _to(t, dest)
    r = map_location(of_tensor(t), ref.location)
    if r is None:
        return _to(t, ref.location)
    if isinstance(r, (UntypedStorage, TypedStorage)):
        return as_flat_of(r, dt)
    if isinstance(r, Tensor):
        return r.reshape(-1)
    raise TypeError(f"map_location returned {type(r).__name__}, not a storage")


def meta_flat(ref, dt):
    from ..ops import creation
    return creation.empty(ref.nbytes // dt.itemsize, dtype=dt, device="meta")
