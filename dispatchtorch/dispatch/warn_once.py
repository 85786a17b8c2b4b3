"""PyTorch's once-per-process warnings (TORCH_WARN_ONCE) and their switch,
torch.set_warn_always: while it is on, such a warning is given every time."""
from __future__ import annotations

import warnings


class _WarnAlways:
    __slots__ = ("on",)

    def __init__(self):
        self.on = False


WARN_ALWAYS = _WarnAlways()
_given = set()


def warn_once(key, message, category=UserWarning, stacklevel=2):
    """warnings.warn(message) the first time `key` warns in this process, or every time
    while torch.set_warn_always(True) is in effect."""
    if WARN_ALWAYS.on or key not in _given:
        _given.add(key)
        warnings.warn(message, category, stacklevel=stacklevel + 1)
