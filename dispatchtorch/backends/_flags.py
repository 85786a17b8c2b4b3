"""A module whose listed attributes are settable flags and nothing else (PyTorch's
torch.backends.* modules refuse unknown attributes the same way)."""
from __future__ import annotations

import contextlib
import types


class FlagModule(types.ModuleType):
    _flags: dict

    def __init__(self, name, doc, flags, **functions):
        super().__init__(name, doc)
        object.__setattr__(self, "_flags", dict(flags))
        for k, v in functions.items():
            object.__setattr__(self, k, v)

    def __getattr__(self, key):
        flags = object.__getattribute__(self, "_flags")
        if key in flags:
            return flags[key]
        raise AttributeError(f"Unknown attribute {key}")

    def __setattr__(self, key, value):
        if key in self._flags:
            self._flags[key] = value
        elif key.startswith("__") or key in self.__dict__:
            object.__setattr__(self, key, value)
        else:
            raise AttributeError(f"Unknown attribute {key}")

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._flags))

    @contextlib.contextmanager
    def flags(self, **values):
        """Set flags for the duration of a block (None leaves one as it is)."""
        for k in values:
            if k not in self._flags:
                raise AttributeError(f"Unknown attribute {k}")
        before = dict(self._flags)
        self._flags.update({k: v for k, v in values.items() if v is not None})
        try:
            yield
        finally:
            self._flags.clear()
            self._flags.update(before)
