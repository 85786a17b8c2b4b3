"""`dispatchtorch.device`: a (type, index) pair, as torch.device."""
from __future__ import annotations


class device:
    """A device: `device("cpu")`, `device("opencl:1")`, `device("cuda", 0)`."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and index is None:
            raise ValueError("device: a bare index needs a device type, e.g. device('cuda', 0)")
        if not isinstance(type, str):
            raise TypeError(f"device: expected a string like 'cpu' or 'opencl:0', got {type!r}")
        spec = type.strip()
        if ":" in spec:
            if index is not None:
                raise ValueError(f"device: type {spec!r} already has an index, got index={index}")
            spec, _, idx = spec.partition(":")
            if not idx.isdigit():
                raise ValueError(f"device: invalid device string {type!r}; expected 'name' or 'name:index'")
            index = int(idx)
        if not spec.isidentifier():
            raise ValueError(f"device: invalid device string {type!r}; expected 'name' or 'name:index'")
        if index is not None and (not isinstance(index, int) or index < 0):
            raise ValueError(f"device: index must be a non-negative int, got {index!r}")
        if spec == "cpu" and index not in (None, 0):
            raise ValueError(f"device: the cpu has only index 0, got {index}")
        self.type, self.index = spec, (None if spec == "cpu" else index)

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = device(other)
            except (ValueError, TypeError):
                return False
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))
