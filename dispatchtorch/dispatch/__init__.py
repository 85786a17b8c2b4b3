"""The dispatch layer: the op registry, backend discovery and kernel resolution."""
from .registry import OpDef, OPS, register_op, DECOMPOSE
from .loader import (BackendRuntime, get_backend, list_backends, loaded_backends,
                     available_names, reset_backends)
from .dispatcher import (resolve, resolve_everywhere, set_fallback_mode, get_fallback_mode, kernel_error,
                         record_kernels)

__all__ = ["OpDef", "OPS", "register_op", "DECOMPOSE", "BackendRuntime", "get_backend",
           "list_backends", "loaded_backends", "available_names", "reset_backends", "resolve",
           "resolve_everywhere",
           "set_fallback_mode", "get_fallback_mode", "kernel_error", "record_kernels"]
