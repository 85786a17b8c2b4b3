"""Fixtures of the store tests that compare against PyTorch."""
from __future__ import annotations

import pytest


def _outcome(fn):
    """fn()'s value, or ("raised", class name, message) (no message for TypeErrors, whose
    wording pybind writes and we do not copy), so both libraries' runs compare equal."""
    try:
        return fn()
    except Exception as exc:
        return ("raised", type(exc).__name__, "" if isinstance(exc, TypeError) else str(exc))


@pytest.fixture
def outcome():
    return _outcome
