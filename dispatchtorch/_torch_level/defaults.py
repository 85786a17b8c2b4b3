"""Deprecated torch.* setters of defaults, kept by PyTorch for old programs and mapped
here onto their replacements with PyTorch's warnings: set_default_tensor_type, the
cpu/gpu autocast state functions; and get_device_module (torch.cuda, torch.cpu, ...)."""
from __future__ import annotations

import importlib
import warnings

from .. import _dtype as D
from .. import _root
from .. import accelerator
from .. import ops as _ops
from .._device import device as Device
from ..amp import autocast_mode as am
from ..dispatch.warn_once import warn_once

_tensor_type_device = [False]     # whether set_default_tensor_type last set a device


def set_default_tensor_type(t, /):
    """The legacy default type (torch.DoubleTensor, "torch.cuda.FloatTensor", ...) as
    set_default_dtype, and set_default_device for a non-CPU type."""
    from .._legacy_types import _TensorType, _from_name
    warn_once("set_default_tensor_type", "torch.set_default_tensor_type() is deprecated as of "
              "PyTorch 2.1, please use torch.set_default_dtype() and "
              "torch.set_default_device() as alternatives.")
    target = _from_name(t) if isinstance(t, str) else None
    if target is None:
        if isinstance(t, str):
            t = _import_dotted_name(t)
        if not isinstance(t, _TensorType):
            raise TypeError("invalid type object: only floating-point types are supported as "
                            "the default type")
        target = (t._device_type, t.dtype)
    device_type, dtype = target
    if not dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    D.set_default_dtype(dtype)
    if device_type != "cpu":
        _ops.set_default_device(device_type)
        _tensor_type_device[0] = True
    elif _tensor_type_device[0]:
        _ops.set_default_device(None)
        _tensor_type_device[0] = False


def _import_dotted_name(name):
    """PyTorch's: import the first component, then getattr down the rest (so its
    ModuleNotFoundError / AttributeError); `torch.` names this library."""
    first, *rest = name.split(".")
    obj = _root.ROOT[0] if first == "torch" else importlib.import_module(first)
    for part in rest:
        obj = getattr(obj, part)
    return obj


def _deprecated(old, new):
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def _require_dtype(dtype):
    if not isinstance(dtype, D.dtype):
        raise TypeError(f"dtype must be a torch.dtype (got {type(dtype).__name__})")


def is_autocast_cpu_enabled():
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return am.is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    am.set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return am.get_autocast_dtype("cpu")


def get_autocast_gpu_dtype():
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return am.get_autocast_dtype("cuda")


def set_autocast_cpu_dtype(dtype):
    _require_dtype(dtype)
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    am.set_autocast_dtype("cpu", dtype)


def set_autocast_gpu_dtype(dtype):
    _require_dtype(dtype)
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    am.set_autocast_dtype("cuda", dtype)


def get_device_module(device=None):
    """The torch.<type> module of a device (torch.cuda, torch.cpu, ...); with none, that of
    the current accelerator, or torch.cpu without one."""
    if isinstance(device, Device):
        name = device.type
    elif isinstance(device, str):
        name = Device(device).type
    elif device is None:
        current = accelerator.current_accelerator()
        name = "cpu" if current is None else current.type
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or "
                           "None")
    module = getattr(_root.ROOT[0], name, None)
    if module is None:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered "
                           f"as 'torch.{name}'.")
    return module


PUBLIC = {
    "set_default_tensor_type": set_default_tensor_type,
    "is_autocast_cpu_enabled": is_autocast_cpu_enabled,
    "set_autocast_cpu_enabled": set_autocast_cpu_enabled,
    "set_autocast_cpu_dtype": set_autocast_cpu_dtype,
    "get_autocast_cpu_dtype": get_autocast_cpu_dtype,
    "get_autocast_gpu_dtype": get_autocast_gpu_dtype,
    "set_autocast_gpu_dtype": set_autocast_gpu_dtype,
    "get_device_module": get_device_module,
}
