"""The allowlist of globals a weights-only load may unpickle (torch.serialization's
add_safe_globals / safe_globals / get_safe_globals / clear_safe_globals)."""
from __future__ import annotations

import contextlib

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals"]

_marked = []        # callables, or (callable, "module.name") pairs, in the order added


def _qualified(entry):
    if isinstance(entry, tuple):
        if len(entry) != 2 or not isinstance(entry[1], str):
            raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), "
                             f"but got {entry}")
        return entry[1]
    return f"{entry.__module__}.{entry.__qualname__}"


def add_safe_globals(safe_globals):
    """Allow these classes / functions in weights-only loads."""
    if not isinstance(safe_globals, list):
        raise ValueError("safe_globals must be a list of globals")
    for g in safe_globals:
        _qualified(g)                  # checked before any is added
    _marked.extend(safe_globals)


def clear_safe_globals():
    _marked.clear()


def get_safe_globals():
    return list(_marked)


@contextlib.contextmanager
def safe_globals(safe_globals):
    """Within the block, these globals are allowed too."""
    before = list(_marked)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _marked[:] = before


def user_allowed():
    """{"module.qualname": object} of what the user allowed."""
    out = {}
    for entry in _marked:
        out[_qualified(entry)] = entry[0] if isinstance(entry, tuple) else entry
    return out
