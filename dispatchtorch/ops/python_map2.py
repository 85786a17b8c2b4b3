"""Tensor.map2_(x, y, callable): self[i] = callable(self[i], x[i], y[i]) with Python
scalars, as PyTorch's tensor_apply.cpp does it (CPU only, x and y broadcast to self,
their dtype self's, nothing that requires grad; elements in self's logical order; the
results converted as PyTorch converts a Python number into that dtype, and no version
bump)."""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from . import creation


def _as_real(v):
    if isinstance(v, (bool, int, float)) or hasattr(type(v), "__float__") \
            or hasattr(type(v), "__index__"):
        if not isinstance(v, complex):
            return float(v)
    raise TypeError(f"must be real number, not {type(v).__name__}")


def _as_integer(v, dt):
    if isinstance(v, float):
        v = int(v)                  # truncated toward zero, as PyTorch stores it
    elif isinstance(v, Tensor):
        v = int(v.item())
    elif hasattr(type(v), "__index__"):
        v = v.__index__()
    else:
        raise TypeError(f"'{type(v).__name__}' object cannot be interpreted as an integer")
    if dt is D.bool_:
        return bool(v)
    info = np.iinfo(dt.np)
    if not info.min <= v <= info.max:
        raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow")
    return v


def _converter(dt):
    if dt.is_complex:
        return complex
    if dt.is_floating_point:
        return _as_real
    return lambda v: _as_integer(v, dt)


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
    xs = x.detach().expand(self.shape).tolist()       # expand: PyTorch's expand_inplace errors
    ys = y.detach().expand(self.shape).tolist()
    mine = self.detach().tolist()
    convert = _converter(self.dtype)

    def walk(a, b, c):
        if isinstance(a, list):
            return [walk(*abc) for abc in zip(a, b, c)]
        return convert(callable(a, b, c))

    out = walk(mine, xs, ys)
    vc = self._vc()[0]
    self.detach().copy_(creation.tensor(out, dtype=self.dtype))
    self._vc()[0] = vc          # PyTorch's map2_ writes through the data pointer: no bump
    return self


METHODS = {"map2_": map2_}
