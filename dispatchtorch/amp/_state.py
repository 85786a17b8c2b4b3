"""Autocast's per-thread state. Kept apart from everything else so the op path reads
one attribute (`STATE.active`) when autocast is off."""
from __future__ import annotations

import threading

# the dtype each device type's autocast uses unless told (PyTorch's defaults)
DEFAULT_DTYPES = {"cpu": "bfloat16", "cuda": "float16"}
FALLBACK_DTYPE = "float16"


class _AutocastState(threading.local):
    active = False                        # is autocast on for any device type in this thread?

    def __init__(self):
        self.enabled = {}                 # device type -> bool
        self.dtypes = {}                  # device type -> dtype name
        self.cache_enabled = True
        self.nesting = 0
        self.cache = {}                   # id(leaf weight) -> (weight, its cast copy)

    def refresh(self):
        self.active = any(self.enabled.values())


STATE = _AutocastState()


def dtype_name(device_type):
    return STATE.dtypes.get(device_type) or DEFAULT_DTYPES.get(device_type, FALLBACK_DTYPE)
