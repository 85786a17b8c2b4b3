"""The write of Tensor.apply_ / map_ / map2_: a Python callable per element, its results
converted as PyTorch's tensor_apply.cpp converts a Python number into the tensor's dtype
(its TypeError / RuntimeError / ValueError texts), stored in self's logical order without a
version bump (PyTorch writes through the data pointer)."""
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
    if dt is D.bool_:
        if isinstance(v, (bool, int, float, complex)):
            return bool(v)          # a Python number's truth (complex too)
        return bool(_index(v))
    info = np.iinfo(dt.np)
    if isinstance(v, float):        # checked as a double, then truncated toward zero
        if not (0 if info.min == 0 else info.min) <= v <= info.max:
            raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow")
        return int(v)
    v = _index(v)
    if not -2 ** 63 <= v < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    lo = -info.max if info.min == 0 else info.min   # c10: negative ints wrap into unsigned
    if not lo <= v <= info.max:
        raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow")
    return v % (info.max + 1) if info.min == 0 else v


def _index(v):
    if hasattr(type(v), "__index__"):
        return v.__index__()        # a tensor: only a one-element integer one
    raise TypeError(f"'{type(v).__name__}' object cannot be interpreted as an integer")


def _converter(dt):
    if dt.is_complex:
        return complex
    if dt.is_floating_point:
        return _as_real
    return lambda v: _as_integer(v, dt)


def store_elementwise(self, fn, *others):
    """self[i] = fn(self[i], *(o[i] for o in others)), others already expanded to self."""
    convert = _converter(self.dtype)

    def walk(a, *rest):
        if isinstance(a, list):
            return [walk(*abc) for abc in zip(a, *rest)]
        return convert(fn(a, *rest))

    out = walk(self.detach().tolist(), *(o.detach().tolist() for o in others))
    vc = self._vc()[0]
    self.detach().copy_(creation.tensor(out, dtype=self.dtype))
    self._vc()[0] = vc
    return self
