"""torch.ops.<ns>.<op> (an OpOverloadPacket) and torch.ops.<ns>.<op>.<overload> (an
OpOverload) for custom ops: thin callables over the CustomOpDef."""
from __future__ import annotations

from ..ops import custom_namespaces


class OpOverload:
    """One overload of a custom op; calling it calls the op."""

    def __init__(self, opdef, overload):
        self._opdef, self._overloadname = opdef, overload
        self._name = opdef._qualname
        self._schema = opdef._decl

    def __call__(self, *args, **kwargs):
        return self._opdef(*args, **kwargs)

    def __repr__(self):
        return f"{self._opdef._packet_name}.{self._overloadname}"


class OpOverloadPacket:
    """torch.ops.<ns>.<op>: calls its default overload; `.default` and named overloads."""

    def __init__(self, namespace, name):
        self._qualified_op_name = f"{namespace}::{name}"
        self._overloads = {}

    @property
    def _opdef(self):
        return self._overloads.get("default", next(iter(self._overloads.values())))._opdef

    def overloads(self):
        return list(self._overloads)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self._overloads[name]
        except KeyError:
            raise AttributeError(f"The underlying op of '{self}' has no overload name "
                                 f"'{name}'") from None

    def __call__(self, *args, **kwargs):
        if "default" not in self._overloads:
            raise RuntimeError(f"{self} has no default overload: call one of "
                               f"{self.overloads()}")
        return self._overloads["default"](*args, **kwargs)

    def __str__(self):
        return self._qualified_op_name.replace("::", ".")

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self}')>"


class OpNamespace:
    """torch.ops.<ns>: its ops as attributes."""

    def __init__(self, name):
        self.name = name

    def __getattr__(self, op):
        if op.startswith("__"):
            raise AttributeError(op)
        raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op}'")

    def __repr__(self):
        return f"<module 'torch.ops.{self.name}' from 'torch.ops'>"


def add_to_namespace(opdef):
    """Put `opdef` at torch.ops.<namespace>.<name>[.<overload>] (replacing an older one)."""
    ns = custom_namespaces.NAMESPACES.get(opdef._namespace)
    if ns is None:
        ns = custom_namespaces.NAMESPACES[opdef._namespace] = OpNamespace(opdef._namespace)
    name, _, overload = opdef._name.partition(".")
    packet = vars(ns).get(name)
    if packet is None:
        packet = OpOverloadPacket(opdef._namespace, name)
        setattr(ns, name, packet)
    packet._overloads[overload or "default"] = OpOverload(opdef, overload or "default")
