"""`dispatchtorch.device`: a (type, index) pair, as torch.device."""
from __future__ import annotations

import builtins
import re

from .dispatch.loader import installed_types, is_loaded


# PyTorch's device types, in the order its "Expected one of" message names them
# (c10/core/DeviceType.cpp); a type an installed backend registers is accepted too.
TORCH_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
               "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
               "privateuseone")
# c10::Device's grammar: letters and '_', then optionally ':' and an index without leading
# zeros; digits after the first letter only in the name of a registered backend (b_expm1)
_SPEC = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)(?::(0|[1-9][0-9]*))?")


def _known_type(name):
    """PyTorch's types, every installed backend's, and a runtime registered in this
    process without an entry point (the test suites' emulated and broken backends)."""
    return name in TORCH_TYPES or name in installed_types() or is_loaded(name)


def _parse(spec):
    """(type, index or None) of a device string, refused as c10::Device refuses it."""
    if not spec:
        raise RuntimeError("Device string must not be empty")
    m = _SPEC.fullmatch(spec)
    if m is None:
        raise RuntimeError(f"Invalid device string: '{spec}'")
    name, idx = m.groups()
    known = _known_type(name)
    if not known and any(c.isdigit() for c in name):
        raise RuntimeError(f"Invalid device string: '{spec}'")
    if not known:
        extra = [n for n in installed_types() if n not in TORCH_TYPES]
        raise RuntimeError(f"Expected one of {', '.join(TORCH_TYPES + tuple(extra))} device type "
                           f"at start of device string: {name}")
    return name, (None if idx is None else int(idx))


_NO_INDEX = object()      # index=None passed explicitly still refuses 'cuda:0', as PyTorch


class device:
    """A device: `device("cpu")`, `device("opencl:1")`, `device("cuda", 0)`."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=_NO_INDEX):
        if isinstance(type, device):
            if index is not _NO_INDEX:
                raise TypeError("device(): argument 'type' (position 1) must be str, not "
                                "torch.device")
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool) and index is _NO_INDEX:
            if type < 0:
                raise RuntimeError("Device index must not be negative")
            raise RuntimeError(f"device({type}): a bare index names the current accelerator, "
                               f"which dispatchtorch does not pick; give a device type, "
                               f"e.g. device('cuda', {type})")
        if isinstance(type, bytes):
            type = type.decode()
        if not isinstance(type, str):
            raise TypeError(f"device(): argument 'type' (position 1) must be str, not "
                            f"{builtins.type(type).__name__}")
        if index not in (_NO_INDEX, None) and (not isinstance(index, int) or isinstance(index, bool)):
            raise TypeError(f"device(): argument 'index' (position 2) must be int, not "
                            f"{builtins.type(index).__name__}")
        name, idx = _parse(type)
        if idx is not None and index is not _NO_INDEX:
            raise RuntimeError(f"type (string) must not include an index because index was "
                               f"passed explicitly: {type}")
        if index is not _NO_INDEX and index is not None:
            if index < 0:
                raise RuntimeError("Device index must not be negative")
            idx = index
        self.type, self.index = name, idx

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        # as PyTorch's: a device equals devices only (device("cpu") == "cpu" is False)
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))
