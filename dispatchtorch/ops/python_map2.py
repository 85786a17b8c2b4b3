"""Tensor.map2_(x, y, callable): self[i] = callable(self[i], x[i], y[i]) with Python
scalars, as PyTorch's tensor_apply.cpp does it (CPU only, x and y broadcast to self,
their dtype self's, nothing that requires grad; the write is _python_scalars')."""
from __future__ import annotations

from .._tensor import Tensor
from ._python_scalars import store_elementwise


def map2_(self, x, y, callable):
    for arg, pos, t in (("x", 1, x), ("y", 2, y)):
        if not isinstance(t, Tensor):
            raise TypeError(f"map2_(): argument '{arg}' (position {pos}) must be Tensor, not "
                            f"{type(t).__name__}")
    if any(t.device.type != "cpu" for t in (self, x, y)):
        raise TypeError("map2_ is only implemented on CPU tensors")
    for arg, t in (("x", x), ("y", y)):
        if t.dtype is not self.dtype:
            raise TypeError(f"map2_: expected {self.type()} for argument '{arg}' (got "
                            f"{t.type()})")
    if self.requires_grad or x.requires_grad or y.requires_grad:
        raise RuntimeError("Can't call map2_() on Variable that requires grad. Use "
                           "var.detach().map2_() instead.")
    # expand: PyTorch's expand_inplace, and its error for shapes that do not fit
    return store_elementwise(self, callable, x.expand(self.shape), y.expand(self.shape))


METHODS = {"map2_": map2_}
