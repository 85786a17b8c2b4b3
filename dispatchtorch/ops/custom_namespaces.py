"""torch.ops.<namespace>: the namespaces of user-defined ops (torch.library fills the
table from above). `dispatchtorch.ops` is also the package of op functions; its module
`__getattr__` reaches this table only for names the package does not define, so the op
functions' lookups never pass here."""
from __future__ import annotations

from .aten_namespace import ATEN

NAMESPACES = {}     # namespace name -> its object (attributes: the packets of its ops)


def lookup(name):
    ns = NAMESPACES.get(name)
    if ns is not None:
        return ns
    if name == "aten":          # packets for this package's own rows (aten_namespace.py)
        return ATEN
    raise AttributeError(f"module 'dispatchtorch.ops' has no attribute {name!r} (no custom op "
                         f"is registered in a namespace {name!r}; torch.library.custom_op "
                         "defines one)")
