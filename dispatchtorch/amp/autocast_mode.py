"""torch.autocast / torch.amp.autocast: a context manager (and decorator) under which
the ops of PyTorch's autocast lists run in a lower-precision dtype (or in float32), on
one device type, in this thread."""
from __future__ import annotations

import functools
import warnings

from .. import _dtype as D
from . import _policy
from ._state import STATE, dtype_name

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]

# device types PyTorch knows: asked for without a backend here, autocast warns and is off
_KNOWN = ("cuda", "xpu", "mps", "hpu", "xla", "mtia", "maia", "ipu", "opencl")
_SUPPORTED = {"cpu": ("bfloat16", "float16"), "cuda": ("bfloat16", "float16")}


def _device_types():
    from ..dispatch import available_names
    return [n for n in available_names() if n != "meta"]


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast can run on this device type (an installed backend's)."""
    return device_type in _device_types()


def _available(device_type):
    if device_type == "cpu":
        return True
    if not is_autocast_available(device_type):
        return False
    from .._accelerator import DeviceModule
    return DeviceModule(device_type).is_available()


class autocast:
    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if not is_autocast_available(device_type) and device_type not in _KNOWN:
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{device_type}'")
        self.device = device_type
        self.fast_dtype = D.BY_NAME[dtype_name(device_type)] if dtype is None else dtype
        self._enabled = bool(enabled)
        self._cache_enabled = STATE.cache_enabled if cache_enabled is None else cache_enabled
        if self._enabled and not _available(device_type):
            warnings.warn(f"User provided device_type of '{device_type}', but {device_type} is "
                          f"not available. Disabling", stacklevel=2)
            self._enabled = False
        allowed = _SUPPORTED.get(device_type, ("bfloat16", "float16"))
        if self._enabled and self.fast_dtype.name not in allowed:
            names = " and ".join(f"torch.{n}" for n in allowed)
            warnings.warn(f"In {device_type} autocast, but the target dtype is not supported. "
                          f"Disabling autocast.\n{device_type} Autocast only supports dtypes of "
                          f"{names} currently.", stacklevel=2)
            self._enabled = False

    def __enter__(self):
        if self._enabled:
            _policy.install(self.device)
        self._prev = (STATE.enabled.get(self.device, False), STATE.dtypes.get(self.device),
                      STATE.cache_enabled)
        STATE.enabled[self.device] = self._enabled
        STATE.dtypes[self.device] = self.fast_dtype.name
        STATE.cache_enabled = self._cache_enabled
        STATE.nesting += 1
        STATE.refresh()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        STATE.nesting -= 1
        if STATE.nesting == 0:
            STATE.cache.clear()
        enabled, dtype, cache = self._prev
        STATE.enabled[self.device] = enabled
        if dtype is None:
            STATE.dtypes.pop(self.device, None)
        else:
            STATE.dtypes[self.device] = dtype
        STATE.cache_enabled = cache
        STATE.refresh()
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast


# -- the torch.* functions around autocast's state -------------------------------------------

def is_autocast_enabled(device_type=None) -> bool:
    return bool(STATE.enabled.get("cuda" if device_type is None else device_type, False))


def set_autocast_enabled(device_type, enabled=None):
    if enabled is None:                                 # the old one-argument form (cuda)
        device_type, enabled = "cuda", device_type
    if enabled:
        _policy.install(device_type)
    STATE.enabled[device_type] = bool(enabled)
    STATE.refresh()


def get_autocast_dtype(device_type):
    return D.BY_NAME[dtype_name(device_type)]


def set_autocast_dtype(device_type, dtype):
    STATE.dtypes[device_type] = dtype.name


def is_autocast_cache_enabled() -> bool:
    return STATE.cache_enabled


def set_autocast_cache_enabled(enabled):
    STATE.cache_enabled = bool(enabled)


def clear_autocast_cache():
    STATE.cache.clear()


def autocast_increment_nesting():
    STATE.nesting += 1
    return STATE.nesting


def autocast_decrement_nesting():
    STATE.nesting -= 1
    return STATE.nesting


# -- custom autograd Functions under autocast ------------------------------------------------

def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """For a custom autograd Function's forward: remember the autocast state for
    backward; with cast_inputs, run forward on inputs cast to it, autocast off."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        used = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = False
        if used:
            args = tuple(_policy._cast_all(a, cast_inputs, device_type) for a in args)
            kwargs = {k: _policy._cast_all(v, cast_inputs, device_type) for k, v in kwargs.items()}
            with autocast(device_type=device_type, enabled=False):
                return fwd(*args, **kwargs)
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """For a custom autograd Function's backward: run it under the autocast state its
    forward ran in."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
