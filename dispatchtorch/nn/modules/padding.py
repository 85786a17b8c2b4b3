"""The padding layers: Constant, Zero, Reflection, Replication, Circular, 1-3 d."""
from __future__ import annotations

from .. import functional as F
from .._tuples import ntuple
from .module import Module


class _PadNd(Module):
    _dims = 1
    _mode = "constant"

    value = 0.0

    def __init__(self, padding):
        super().__init__()
        self.padding = ntuple(2 * self._dims, "padding")(padding)

    def forward(self, input):
        d = self._dims
        if input.dim() not in (d + 1, d + 2):
            raise ValueError(f"{type(self).__name__}: expected {d + 1}D or {d + 2}D input (got "
                             f"{input.dim()}D input)")
        if self._mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        if self._mode == "constant" and not isinstance(self, _ZeroPadNd):
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value


class _ZeroPadNd(_PadNd):
    def __init__(self, padding):
        super().__init__(padding)


def _classes(base, mode, prefix, doc):
    made = {}
    for d in (1, 2, 3):
        name = f"{prefix}{d}d"
        made[name] = type(name, (base,), {"_dims": d, "_mode": mode, "__module__": __name__,
                                          "__qualname__": name, "__doc__": doc})
    return made


globals().update(_classes(_ConstantPadNd, "constant", "ConstantPad",
                          "Pads with a constant value."))
globals().update(_classes(_ZeroPadNd, "constant", "ZeroPad", "Pads with zeros."))
globals().update(_classes(_PadNd, "reflect", "ReflectionPad",
                          "Pads with the reflection of the input (edge not repeated)."))
globals().update(_classes(_PadNd, "replicate", "ReplicationPad",
                          "Pads by repeating the edge values."))
globals().update(_classes(_PadNd, "circular", "CircularPad",
                          "Pads by wrapping the input around."))

__all__ = [f"{p}{d}d" for p in ("ConstantPad", "ZeroPad", "ReflectionPad", "ReplicationPad",
                                "CircularPad") for d in (1, 2, 3)]
