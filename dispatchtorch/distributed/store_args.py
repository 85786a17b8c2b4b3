"""Argument checks and integer parsing the stores share (PyTorch's bindings raise TypeError
for a wrong type; `add` parses the stored value as C++'s std::stoll does)."""
from __future__ import annotations

import datetime
import re

_INT64 = 1 << 63


def _key(k, what):
    if not isinstance(k, str):
        raise TypeError(f"{what}(): incompatible function arguments: key must be a str, got "
                        f"{type(k).__name__}")
    return k


def _value(v, what):
    if isinstance(v, str):
        return v.encode()
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    raise TypeError(f"{what}(): incompatible function arguments: value must be str or bytes, "
                    f"got {type(v).__name__}")


def _seconds(t):
    if not isinstance(t, datetime.timedelta):
        raise TypeError(f"timeout must be a datetime.timedelta, got {type(t).__name__}")
    return t.total_seconds()


def _amount(amount, what):
    if not isinstance(amount, int) or isinstance(amount, bool) or not -_INT64 <= amount < _INT64:
        raise TypeError(f"{what}(): incompatible function arguments: amount must be a 64-bit "
                        f"int, got {amount!r}")
    return amount


def _stoll(raw):
    """The integer at the start of raw as std::stoll reads it (blanks, a sign, digits);
    ValueError / IndexError("stoll"), the classes pybind gives its two errors."""
    m = re.match(rb"\s*([+-]?\d+)", raw)
    if m is None:
        raise ValueError("stoll")
    n = int(m.group(1))
    if not -_INT64 <= n < _INT64:
        raise IndexError("stoll")
    return n


def _wrap64(n):
    """n as a signed 64-bit sum wraps (PyTorch's counters are int64)."""
    return (n + _INT64) % (2 * _INT64) - _INT64
