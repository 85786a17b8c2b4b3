"""torch.load's map_location rule, shared by both checkpoint formats (safetensors and
pickled objects): where a tensor saved on one device is loaded."""
from __future__ import annotations

from ._device import device as Device


def map_device(saved, map_location):
    """The device string to load a tensor saved on `saved` onto; None when map_location
    is a callable, which is then applied to the tensor loaded on the cpu."""
    if map_location is None:
        return saved
    if isinstance(map_location, dict):
        return map_location.get(saved, saved)
    if isinstance(map_location, (str, Device)):
        return str(map_location)
    return None
