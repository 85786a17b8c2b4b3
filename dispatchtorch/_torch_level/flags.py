"""Process-wide torch.* switches and facts: the deterministic-algorithms flag,
set_warn_always, set_flush_denormal, set_anomaly_enabled, the inter-op thread count and
has_lapack / has_mkl / has_openmp / has_spectral. Each says what it does here, which is
sometimes only to record the setting (see the docstrings)."""
from __future__ import annotations

import builtins
import inspect
import numbers

from ..autograd.anomaly_mode import ANOMALY
from ..dispatch.warn_once import WARN_ALWAYS
from ._args import bool_arg, one_arg, signature

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
    """The RuntimeError of PyTorch's hand-written C checks (setWarnOnlyOnce, flush_denormal)."""
    if not isinstance(value, bool):
        raise RuntimeError(f"{message}, but got {type(value).__name__}")


_P = inspect.Parameter


# -- determinism ------------------------------------------------------------------------------

_deterministic = {"mode": False, "warn_only": False}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Recorded only: every kernel here is deterministic (the same inputs give the same
    bits on every run), so there is nothing to switch or to warn about."""
    # PyTorch's Python wrapper passes mode positionally and warn_only by keyword
    bool_arg("_set_deterministic_algorithms", "mode", 1, mode)
    bool_arg("_set_deterministic_algorithms", "warn_only", None, warn_only)
    _deterministic["mode"], _deterministic["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled():
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled():
    return _deterministic["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    """0 / "default", 1 / "warn", 2 / "error", as PyTorch's: the same recorded flag. Its
    check is isinstance(x, (int, str)), so True is 1 and a numpy integer is refused."""
    names = {"default": 0, "warn": 1, "error": 2}
    if not isinstance(debug_mode, (builtins.int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        if debug_mode not in names:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = names[debug_mode]
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


@signature(_P("mode", _P.POSITIONAL_ONLY))
def set_flush_denormal(*args, **kwargs):
    """False, PyTorch's answer on a CPU without the FTZ/DAZ bits: denormals are always kept.
    x86's bits live in each thread's MXCSR, which neither numpy nor the CPU backend's worker
    pool exposes, so setting them on the calling thread would flush only the ops that run
    there (and not on other backends); "not supported" is the true answer."""
    mode = one_arg("set_flush_denormal", args, kwargs)
    _require_bool(mode, "flush_denormal expects a bool")
    return False


@signature(_P("enabled", _P.POSITIONAL_OR_KEYWORD),
            _P("check_nan", _P.POSITIONAL_OR_KEYWORD, default=True))
def set_anomaly_enabled(*args, **kwargs):
    """Anomaly detection on or off for the process, as torch.autograd.set_detect_anomaly.
    Parsed by hand: PyTorch's errors say whether an argument came by position."""
    fn = "set_anomaly_enabled"
    if len(args) > 2:
        raise TypeError(f"{fn}() takes from 1 to 2 positional arguments but {len(args)} "
                        "were given")
    for name in kwargs:
        if name not in ("enabled", "check_nan"):
            raise TypeError(f"{fn}() got an unexpected keyword argument '{name}'")
        if ("enabled", "check_nan").index(name) < len(args):
            raise TypeError(f"{fn}() got multiple values for argument '{name}'")
    if not args and "enabled" not in kwargs:
        raise TypeError(f'{fn}() missing 1 required positional arguments: "enabled"')
    values = dict(zip(("enabled", "check_nan"), args), **kwargs)
    enabled, check_nan = values["enabled"], values.get("check_nan", True)
    bool_arg(fn, "enabled", 1 if args else None, enabled)
    bool_arg(fn, "check_nan", 2 if len(args) == 2 else None, check_nan)
    ANOMALY.enabled, ANOMALY.check_nan = enabled, check_nan



# -- threads ----------------------------------------------------------------------------------

_interop = {"threads": None}


def get_num_interop_threads():
    """1 unless set: there is no inter-op thread pool (each op runs on the calling thread;
    the CPU backend's intra-op threads are torch.get_num_threads)."""
    return _interop["threads"] or 1


@signature(_P("n", _P.POSITIONAL_ONLY))
def set_num_interop_threads(*args, **kwargs):
    """Recorded for get_num_interop_threads (there is no pool to size). Once only, as
    PyTorch's, which refuses a second call (a get does not count, in both)."""
    n = one_arg("set_num_interop_threads", args, kwargs)
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
