"""Anomaly detection (PyTorch's torch.autograd.anomaly_mode): while it is on, backward
checks each node's gradients for NaN and raises naming the node that produced one.

A process-wide setting, as PyTorch's AnomalyMode is (it is not per thread, unlike grad
mode). Off, it costs backward one attribute read per node.
"""
from __future__ import annotations

import functools
import warnings


class _Anomaly:
    __slots__ = ("enabled", "check_nan")

    def __init__(self):
        self.enabled = False
        self.check_nan = True


ANOMALY = _Anomaly()


def is_anomaly_enabled() -> bool:
    return ANOMALY.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return ANOMALY.check_nan


class detect_anomaly:
    """Context manager / decorator: anomaly detection on inside."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self._prev = (ANOMALY.enabled, ANOMALY.check_nan)
        ANOMALY.enabled, ANOMALY.check_nan = True, self.check_nan

    def __exit__(self, *exc):
        ANOMALY.enabled, ANOMALY.check_nan = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Turn anomaly detection on or off: as a call, or as a context manager that
    restores the previous setting on exit."""

    def __init__(self, mode, check_nan=True):
        self._prev = (ANOMALY.enabled, ANOMALY.check_nan)
        ANOMALY.enabled, ANOMALY.check_nan = bool(mode), bool(check_nan)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        ANOMALY.enabled, ANOMALY.check_nan = self._prev
        return False


def check_gradients(node, grads):
    """Raise if a gradient node produced holds NaN (PyTorch's message)."""
    for i, g in enumerate(grads):
        if g is not None and g._dtype.is_floating_point and bool(g.isnan().any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               f"output.")
