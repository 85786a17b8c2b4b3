"""torch.library.Library, the older registration API: `define(schema)` makes an op with no
kernel, `impl(name, fn, dispatch_key)` gives it one per dispatch key. Both sit on
CustomOpDef, so the call, the fake, the version bumps and torch.ops are the same."""
from __future__ import annotations

from .custom_ops import OPDEFS, CustomOpDef
from ._schema import check_name

# dispatch key -> where the kernel goes: a device type, None (every device), or a mode
KEYS = {"CPU": "cpu", "CUDA": "cuda", "Meta": "meta", "OpenCL": "opencl",
        "PrivateUse1": "opencl", "CompositeExplicitAutograd": None,
        "CompositeImplicitAutograd": "implicit", "Autograd": "autograd",
        "AutogradCPU": "autograd", "AutogradCUDA": "autograd", "": None}
_DEF_NAMESPACES = set()           # namespaces a kind="DEF" Library holds


class Library:
    """Library(ns, kind): kind "DEF" (the namespace's one defining library), "FRAGMENT"
    (more definitions) or "IMPL" (implementations only)."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if ns == "aten" and kind != "IMPL":
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library "
                             "with another name.")
        if kind == "DEF":
            if ns in _DEF_NAMESPACES:
                raise RuntimeError(f"Only a single TORCH_LIBRARY can be used to register the "
                                   f"namespace {ns}; please put all of your definitions in a "
                                   "single TORCH_LIBRARY block (or use kind='FRAGMENT').")
            _DEF_NAMESPACES.add(ns)
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis="", *, tags=()):
        """Define the op `name(args) -> returns`; returns its name."""
        if self.kind == "IMPL":
            raise RuntimeError(f"def(\"{schema.split('(')[0]}\"): Cannot define an operator "
                               "inside of a TORCH_LIBRARY_IMPL block.")
        name = schema.split("(")[0].strip()
        _, opname = check_name(f"{self.ns}::{name}")
        if f"{self.ns}::{opname}" in OPDEFS and OPDEFS[f"{self.ns}::{opname}"]._defined_by:
            raise RuntimeError(f"Tried to register an operator ({self.ns}::{schema}) with the "
                               "same name and overload name multiple times.")
        opdef = CustomOpDef(self.ns, opname, schema[len(name):].strip(), None)
        opdef._defined_by = self
        return name

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=False):
        """Register `fn` for `op_name` (a name, 'ns::name' or a torch.ops entry) under
        `dispatch_key` ("CPU", "CUDA", "Meta", "CompositeImplicitAutograd", "Autograd", ...)."""
        if with_keyset:
            raise NotImplementedError("impl(with_keyset=True): there are no dispatch key sets "
                                      "here (docs/custom-ops.md)")
        key = dispatch_key or self.dispatch_key
        if key not in KEYS:
            raise RuntimeError(f"could not parse dispatch key: {key}")
        qualname = getattr(op_name, "_name", None) or (
            op_name if "::" in op_name else f"{self.ns}::{op_name}")
        opdef = OPDEFS.get(qualname)
        if opdef is None:
            raise RuntimeError(f"impl({qualname!r}): no such op is defined here; define it first "
                               "(Library.define or torch.library.custom_op)")
        where = KEYS[key]
        if where == "implicit":
            opdef._implicit_fn = fn
        elif where == "autograd":
            opdef._autograd_impl = fn
        else:
            opdef.register_kernel(where, fn)


def define(qualname, schema, *, lib=None, tags=()):
    """torch.library.define: the op `qualname` with `schema` ("(Tensor x) -> Tensor")."""
    ns, name = check_name(qualname)
    (lib or Library(ns, "FRAGMENT")).define(name + schema, tags=tags)


def impl(qualname, types, func=None, *, lib=None):
    """torch.library.impl(qualname, "cpu" / ("cpu", "cuda") / a dispatch key, fn): usable as a
    decorator."""
    kinds = (types,) if isinstance(types, str) else tuple(types)
    by_device = {v: k for k, v in KEYS.items() if isinstance(v, str) and k in ("CPU", "CUDA",
                                                                              "Meta", "OpenCL")}

    def register(fn):
        ns = qualname.split("::")[0]
        use = lib or Library(ns, "FRAGMENT")
        for k in kinds:
            use.impl(qualname, fn, by_device.get(k, k))
        return fn
    return register if func is None else register(func)
