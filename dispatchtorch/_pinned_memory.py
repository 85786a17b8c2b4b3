"""Tensor.pin_memory / is_pinned. No backend here offers page-locked host memory, so no
tensor is pinned (is_pinned() is False). pin_memory() does what PyTorch does where it can
be honest about it: without an accelerator it raises PyTorch's error (a CPU-only PyTorch
raises the same), a tensor off the CPU raises PyTorch's "only dense CPU tensors", and
with an accelerator it returns a copy (same sizes, strides and values, differentiable as
PyTorch's _pin_memory) that is_pinned() truthfully reports as not pinned: a transfer from
it is an ordinary one."""
from __future__ import annotations

import warnings

from ._tensor import Tensor
from .accelerator import is_available


def _deprecated_device(method, device):
    if device is not None:
        warnings.warn(f"The argument 'device' of Tensor.{method}() is deprecated. Please do "
                      f"not pass this argument.", DeprecationWarning, stacklevel=3)


def is_pinned(self, device=None):
    _deprecated_device("is_pinned", device)
    return False


def pin_memory(self, device=None):
    _deprecated_device("pin_memory", device)
    if self.device.type != "cpu":
        raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
    if device is not None and str(device).split(":")[0] == "cpu":
        raise RuntimeError("CPU device type not an accelerator.")
    if not is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if 0 in self.stride() or not self.numel():
        return self.clone()
    out = self.new_empty_strided(tuple(self.shape), self.stride())
    return out.copy_(self)


Tensor.is_pinned = is_pinned
Tensor.pin_memory = pin_memory
