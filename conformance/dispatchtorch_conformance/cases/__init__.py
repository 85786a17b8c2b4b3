"""The cases, one module per op family. Every module of this package that defines a
`CASES` list is collected: adding a family is adding a file, adding an op is adding
an entry to its family's list. A module may also define `derived_cases(covered)`: cases
made from the op rows for the ops no family's CASES cover (elementwise's rows with forms),
as (before, after) its own CASES."""
from __future__ import annotations

import importlib
import pkgutil

_cache: list | None = None
_families: dict = {}


def all_cases():
    """Every Case of every family module, in module then declaration order."""
    global _cache
    if _cache is None:
        mods = []
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
            if info.name.startswith("_"):
                continue
            mods.append((info.name, importlib.import_module(f"{__name__}.{info.name}")))
        covered = {c.op for _, mod in mods for c in getattr(mod, "CASES", [])}
        cases = []
        for family, mod in mods:
            before, after = mod.derived_cases(covered) if hasattr(mod, "derived_cases") \
                else ((), ())
            for c in (*before, *getattr(mod, "CASES", []), *after):
                cases.append(c)
                _families[c.name] = family
        names = [c.name for c in cases]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"conformance cases with the same name: {dup}; give variants a "
                             f"`name=` of their own")
        _cache = cases
    return _cache


def by_name():
    return {c.name: c for c in all_cases()}


def families():
    """{case name: its family (the module that declares it)}."""
    all_cases()
    return dict(_families)
