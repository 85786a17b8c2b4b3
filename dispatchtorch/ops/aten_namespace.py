"""torch.ops.aten: a minimal, honest stand-in for PyTorch's ATen operator namespace.

dispatchtorch's ops are its own registry rows, not ATen operators. `torch.ops.aten.<name>`
is a packet for the row of that name (`torch.ops.aten.mm`, `.relu`, ...) and its one
overload `.default` is the object selective activation checkpointing hands a policy
for that row, so `func == torch.ops.aten.mm.default` and `func in {...}` work. A few
ATen names that policies commonly list but that are other rows here name those rows
(ALIASES: `convolution` is conv2d, the fused attention kernels are
scaled_dot_product_attention). A name with no row raises AttributeError. Calling an
overload calls the row's public function (torch.mm, ...; a row without one raises
NotImplementedError naming it).
"""
from __future__ import annotations

from ..dispatch import OPS

# ATen names of ops that are another row here (the row the name resolves to)
ALIASES = {
    "convolution": "conv2d",
    "_convolution": "conv2d",
    "_scaled_dot_product_flash_attention": "scaled_dot_product_attention",
    "_scaled_dot_product_flash_attention_for_cpu": "scaled_dot_product_attention",
    "_scaled_dot_product_efficient_attention": "scaled_dot_product_attention",
    "_scaled_dot_product_cudnn_attention": "scaled_dot_product_attention",
}


class OpOverload:
    """`torch.ops.aten.<row>.default`: compared by identity (one object per row)."""

    __slots__ = ("_row", "overloadpacket", "__weakref__")

    def __init__(self, row, packet):
        self._row = row
        self.overloadpacket = packet

    def __repr__(self):
        return f"aten.{self._row}.default"

    __str__ = __repr__

    def name(self):
        return f"aten::{self._row}"

    @property
    def _overloadname(self):
        return "default"

    @property
    def __name__(self):
        return f"{self._row}.default"

    def __call__(self, *args, **kwargs):
        fn = OPS[self._row].function or FUNCTIONS.get(self._row)
        if not callable(fn):
            raise NotImplementedError(f"torch.ops.aten.{self._row}.default: the row "
                                      f"{self._row!r} has no public function to call")
        return fn(*args, **kwargs)


class OpOverloadPacket:
    """`torch.ops.aten.<row>`: the row's overloads (only `default` here)."""

    __slots__ = ("_row", "default", "__weakref__")

    def __init__(self, row):
        self._row = row
        self.default = OpOverload(row, self)

    def __repr__(self):
        return f"<OpOverloadPacket(op='aten.{self._row}')>"

    def __str__(self):
        return f"aten.{self._row}"

    def overloads(self):
        return ["default"]

    def __call__(self, *args, **kwargs):
        return self.default(*args, **kwargs)


class AtenNamespace:
    """`torch.ops.aten`: packets made on first use, one per row."""

    def __init__(self):
        self._packets = {}

    def packet(self, row):
        p = self._packets.get(row)
        if p is None:
            p = self._packets[row] = OpOverloadPacket(row)
        return p

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        row = ALIASES.get(name, name)
        if row not in OPS:
            raise AttributeError(f"'_OpNamespace' 'aten' object has no attribute '{name}' "
                                 f"(dispatchtorch's torch.ops.aten names its own ops only)")
        return self.packet(row)


ATEN = AtenNamespace()
FUNCTIONS: dict = {}    # the ops package's public functions (it sets this: it is above)


def overload_of(row):
    """The `.default` overload a policy sees for the registry row named row."""
    return ATEN.packet(row).default
