"""skip_init: build a module without running its parameter initialisation."""
from __future__ import annotations

import inspect


def skip_init(module_cls, *args, **kwargs):
    """Construct on the meta device (no memory, no initialisation), then allocate
    uninitialised storage on the requested device."""
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final_device)
