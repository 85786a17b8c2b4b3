"""DebugLevel and its setting (TORCH_DISTRIBUTED_DEBUG), as torch.distributed keeps it;
the level is recorded for code that reads it; the MPI engine logs nothing more at INFO."""
from __future__ import annotations

import enum
import os


class DebugLevel(enum.Enum):
    OFF = 0
    INFO = 1
    DETAIL = 2


DebugLevel.__module__ = "dispatchtorch.distributed"
_LEVEL = [DebugLevel.OFF]


def set_debug_level(level):
    """Sets the debug level of the torch.distributed package."""
    if not isinstance(level, DebugLevel):
        raise TypeError(f"set_debug_level(): incompatible function arguments. The following "
                        f"argument types are supported:\n    1. (arg0: DebugLevel) -> None\n\n"
                        f"Invoked with: {level!r}")
    _LEVEL[0] = level


def get_debug_level():
    """Gets the debug level of the torch.distributed package."""
    return _LEVEL[0]


def set_debug_level_from_env():
    """Sets the debug level from TORCH_DISTRIBUTED_DEBUG (OFF, INFO or DETAIL; OFF if unset)."""
    v = os.environ.get("TORCH_DISTRIBUTED_DEBUG")
    if v is None:
        _LEVEL[0] = DebugLevel.OFF
        return
    try:
        _LEVEL[0] = DebugLevel[v.upper()]
    except KeyError:
        raise ValueError("The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or "
                         "DETAIL.") from None


try:                         # PyTorch reads the variable when torch.distributed loads
    set_debug_level_from_env()
except ValueError:
    pass
