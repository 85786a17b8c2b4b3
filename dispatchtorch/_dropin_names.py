"""Names at PyTorch's paths that programs use beside the ops: torch.autocast and its
state functions, torch.amp, torch.cpu / torch.cuda .amp (importable as modules),
torch.accelerator, the legacy tensor types, Tensor.is_<device> flags, and
set_float32_matmul_precision. attach() puts them on the dispatchtorch namespace."""
from __future__ import annotations

import sys
import warnings

_PRECISIONS = ("highest", "high", "medium")
_matmul_precision = ["highest"]

# Tensor.is_<type>: PyTorch's device flags (true when a backend of that name holds it)
_DEVICE_FLAGS = ("cuda", "xpu", "mps", "meta", "ipu", "hpu", "xla", "mtia", "maia", "vulkan")
_LAYOUT_FLAGS = ("mkldnn", "nested", "sparse_csr")      # false on strided tensors (CSR sets its own)


def get_float32_matmul_precision() -> str:
    return _matmul_precision[0]


def set_float32_matmul_precision(precision) -> None:
    """Recorded only: every backend computes float32 matmuls in float32 ("highest")."""
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      f"setFloat32MatmulPrecision call has no effect.", stacklevel=2)
        return
    _matmul_precision[0] = precision


def _device_flag(kind):
    return property(lambda self: self._place.type == kind,
                    doc=f"Whether the tensor is on a '{kind}' device.")


def _add_tensor_flags(Tensor):
    for kind in _DEVICE_FLAGS:
        if not hasattr(Tensor, f"is_{kind}"):
            setattr(Tensor, f"is_{kind}", _device_flag(kind))
    for kind in _LAYOUT_FLAGS:
        if not hasattr(Tensor, f"is_{kind}"):
            setattr(Tensor, f"is_{kind}", property(lambda self: False))


def attach(ns):
    """Bind the names into the dispatchtorch namespace dict `ns`."""
    from . import _root, accelerator, amp, backends
    from ._accelerator import DeviceModule
    from ._legacy_types import make, type_method
    from ._tensor import Tensor
    from .amp import _device_amp, _policy, autocast_mode as am

    name = ns["__name__"]
    _root.ROOT[:] = [sys.modules[name]]      # amp and dynamic capture read torch.* from it
    _add_tensor_flags(Tensor)
    if not hasattr(Tensor.type, "__wrapped__"):
        Tensor.type = type_method(Tensor.type)
    ns.update(make("cpu", name))
    ns["amp"], ns["accelerator"], ns["backends"] = amp, accelerator, backends
    ns["autocast"] = amp.autocast
    ns["GradScaler"] = amp.GradScaler               # torch.GradScaler is torch.amp.GradScaler
    for fn in ("is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype",
               "set_autocast_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
               "clear_autocast_cache", "autocast_increment_nesting",
               "autocast_decrement_nesting"):   # the deprecated cpu/gpu forms: _torch_level
        ns[fn] = getattr(am, fn)
    ns["get_float32_matmul_precision"] = get_float32_matmul_precision
    ns["set_float32_matmul_precision"] = set_float32_matmul_precision
    cpu = ns.get("cpu")
    if not isinstance(cpu, DeviceModule):
        cpu = ns["cpu"] = DeviceModule("cpu")
    for device_type, mod, module in (("cuda", ns["cuda"], _device_amp.cuda_amp),
                                     ("cpu", cpu, _device_amp.cpu_amp)):
        mod.amp = module
        if device_type != "cpu":                   # torch.cuda.FloatTensor, ...
            for cls_name, cls in make(device_type, f"{name}.{device_type}").items():
                setattr(mod, cls_name, cls)
        # `import torch.cuda.amp` / `from torch.cuda.amp import GradScaler` work
        sys.modules.setdefault(f"{name}.{device_type}", mod)
        sys.modules.setdefault(f"{name}.{device_type}.amp", module)
