"""The backend API: everything a backend package may import from dispatchtorch.

A backend depends on this subpackage only (never on the Tensor class), so it can be
built, tested and versioned on its own. Nothing here imports numpy.
"""
from .contract import API_VERSION, Backend, DeviceInfo, BackendError, compatible
from .dtypes import (DTYPE_NAMES, FLOATING, INTEGRAL, SIGNED, ITEMSIZE, COMPLEX, ALL_DTYPE_NAMES,
                     BARE, FLOAT8, UNSIGNED)
from .hookspecs import hookimpl, hookspec, PROJECT
from .prims import PRIMS, PrimSpec, MEMORY_METHODS

__all__ = [
    "API_VERSION", "Backend", "DeviceInfo", "BackendError", "compatible",
    "DTYPE_NAMES", "FLOATING", "INTEGRAL", "SIGNED", "ITEMSIZE", "COMPLEX", "ALL_DTYPE_NAMES",
    "BARE", "FLOAT8", "UNSIGNED",
    "hookimpl", "hookspec", "PROJECT", "PRIMS", "PrimSpec", "MEMORY_METHODS",
]
