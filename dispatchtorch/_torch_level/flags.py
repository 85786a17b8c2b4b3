"""Process-wide torch.* switches and facts: the deterministic-algorithms flag,
set_warn_always, set_flush_denormal, set_anomaly_enabled, the inter-op thread count and
has_lapack / has_mkl / has_openmp / has_spectral. Each says what it does here, which is
sometimes only to record the setting (see the docstrings)."""
from __future__ import annotations

import numbers

from ..autograd.anomaly_mode import ANOMALY
from ..dispatch.warn_once import WARN_ALWAYS

# what this build has, as PyTorch's torch.has_* say it of theirs: linalg runs on numpy's
# LAPACK, torch.fft is there, and neither MKL nor OpenMP is used (the CPU backend threads
# with its own pool; torch.backends.mkl / .openmp say the same)
has_lapack = True
has_spectral = True
has_mkl = False
has_openmp = False


def is_vulkan_available():
    """False: there is no Vulkan backend."""
    return False


def _require_bool(value, message):
    if not isinstance(value, bool):
        raise RuntimeError(f"{message}, but got {type(value).__name__}")


# -- determinism ------------------------------------------------------------------------------

_deterministic = {"mode": False, "warn_only": False}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Recorded only: every kernel here is deterministic (the same inputs give the same
    bits on every run), so there is nothing to switch or to warn about."""
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    _deterministic["mode"], _deterministic["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled():
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled():
    return _deterministic["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    """0 / "default", 1 / "warn", 2 / "error", as PyTorch's: the same recorded flag."""
    names = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in names:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = names[debug_mode]
    elif not isinstance(debug_mode, numbers.Integral) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError("invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not _deterministic["mode"]:
        return 0
    return 1 if _deterministic["warn_only"] else 2


# -- warnings, denormals, anomaly mode --------------------------------------------------------

def set_warn_always(b, /):
    """Once-per-process warnings (a backend's CPU fallback, the deprecated torch.* forms,
    frombuffer's read-only buffer) are given every time while this is on."""
    _require_bool(b, "setWarnOnlyOnce expects a bool")
    WARN_ALWAYS.on = b


def is_warn_always_enabled():
    return WARN_ALWAYS.on


def set_flush_denormal(mode):
    """False: flushing denormals to zero is not supported here (PyTorch returns whether
    its CPU took the setting), so denormals are always kept."""
    _require_bool(mode, "flush_denormal expects a bool")
    return False


def set_anomaly_enabled(enabled, check_nan=True):
    """Anomaly detection on or off for the process, as torch.autograd.set_detect_anomaly."""
    if not isinstance(enabled, bool):
        raise TypeError(f"set_anomaly_enabled(): argument 'enabled' (position 1) must be bool, "
                        f"not {type(enabled).__name__}")
    if not isinstance(check_nan, bool):
        raise TypeError(f"set_anomaly_enabled(): argument 'check_nan' (position 2) must be "
                        f"bool, not {type(check_nan).__name__}")
    ANOMALY.enabled, ANOMALY.check_nan = enabled, check_nan


# -- threads ----------------------------------------------------------------------------------

_interop = {"threads": None}


def get_num_interop_threads():
    """1 unless set: there is no inter-op thread pool (each op runs on the calling thread;
    the CPU backend's intra-op threads are torch.get_num_threads)."""
    return _interop["threads"] or 1


def set_num_interop_threads(n):
    """Recorded for get_num_interop_threads (there is no pool to size). Once only, as
    PyTorch's, which refuses a second call."""
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise RuntimeError(f"set_num_interop_threads expects an int, but got "
                           f"{type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _interop["threads"] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _interop["threads"] = int(n)


def init_num_threads():
    """Nothing to do: thread counts here are process-wide, not per thread as ATen's
    OpenMP settings are (which this propagates to a new thread in PyTorch)."""


PUBLIC = {
    "has_lapack": has_lapack, "has_spectral": has_spectral, "has_mkl": has_mkl,
    "has_openmp": has_openmp, "is_vulkan_available": is_vulkan_available,
    "use_deterministic_algorithms": use_deterministic_algorithms,
    "are_deterministic_algorithms_enabled": are_deterministic_algorithms_enabled,
    "is_deterministic_algorithms_warn_only_enabled":
        is_deterministic_algorithms_warn_only_enabled,
    "set_deterministic_debug_mode": set_deterministic_debug_mode,
    "get_deterministic_debug_mode": get_deterministic_debug_mode,
    "set_warn_always": set_warn_always, "is_warn_always_enabled": is_warn_always_enabled,
    "set_flush_denormal": set_flush_denormal, "set_anomaly_enabled": set_anomaly_enabled,
    "get_num_interop_threads": get_num_interop_threads,
    "set_num_interop_threads": set_num_interop_threads, "init_num_threads": init_num_threads,
}
