"""PyTorch's Tensor methods with no op row of their own: narrow_copy, the legacy
`new(...)` constructor, new_empty_strided, and the elementwise Python-callable
methods apply_ / map_. methods.py binds this module's METHODS with the rest."""
from __future__ import annotations

import operator

import numpy as np

from .._tensor import Tensor
from . import creation as C
from . import shape_more as SM


def _new(self, *args, device=None):
    """The legacy constructor: new() an empty 1-D tensor, new(*sizes) / new(torch.Size)
    uninitialised, new(sequence) from data, new(tensor) that tensor itself (its dtype
    must be self's); always self's dtype, on self's device unless device is given."""
    dev = self.device if device is None else device
    if len(args) == 0:
        return C.empty(0, dtype=self.dtype, device=dev)
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if other.dtype is not self.dtype:
            raise TypeError(f"expected {self.dtype} (got {other.dtype})")
        return other.detach()
    if all(hasattr(a, "__index__") and not isinstance(a, (Tensor, bool)) for a in args):
        return C.empty(*[operator.index(a) for a in args], dtype=self.dtype, device=dev)
    if len(args) == 1:
        a = args[0]
        if type(a).__name__ == "Size" and all(isinstance(s, int) for s in a):
            return C.empty(*a, dtype=self.dtype, device=dev)
        return C.tensor(a, dtype=self.dtype, device=dev)
    raise TypeError("new() received an invalid combination of arguments")


def _new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                       pin_memory=False, requires_grad=False):
    size = tuple(operator.index(s) for s in size)
    stride = tuple(operator.index(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape")
    n = 1 + sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else 0
    base = C.empty(n, dtype=dtype or self.dtype, device=device or self.device)
    out = base.as_strided(size, stride, 0)
    if requires_grad:
        out = out.detach().requires_grad_()
    return out


def _host_values(t):
    return np.asarray(t.detach().cpu().numpy())


def _apply_(self, callable):
    if self.device.type != "cpu":
        raise TypeError("apply_ is only implemented on CPU tensors")
    if self.requires_grad:
        raise RuntimeError("Can't call apply_() on Variable that requires grad. Use "
                           "var.detach().apply_() instead.")
    vals = _host_values(self)
    out = np.array([callable(v) for v in vals.ravel().tolist()], dtype=object)
    res = out.reshape(vals.shape).astype(vals.dtype) if vals.size else vals
    with _no_grad():
        self.copy_(C.tensor(res, dtype=self.dtype))
    return self


def _map_(self, other, callable):
    if self.device.type != "cpu":
        raise TypeError("map_ is only implemented on CPU tensors")
    if self.requires_grad or other.requires_grad:
        raise RuntimeError("Can't call map_() on Variable that requires grad. Use "
                           "var.detach().map_() instead.")
    if other.dtype is not self.dtype:
        raise TypeError(f"map_: expected {self.dtype} for 'other' (got {other.dtype})")
    vals = _host_values(self)
    ovals = np.broadcast_to(_host_values(other), vals.shape)
    out = np.array([callable(a, b) for a, b in zip(vals.ravel().tolist(), ovals.ravel().tolist())],
                   dtype=object)
    res = out.reshape(vals.shape).astype(vals.dtype) if vals.size else vals
    with _no_grad():
        self.copy_(C.tensor(res, dtype=self.dtype))
    return self


def _no_grad():
    from ..autograd.grad_mode import no_grad
    return no_grad()


METHODS = {
    "narrow_copy": SM.COPIES["narrow_copy"],
    "new": _new, "new_empty_strided": _new_empty_strided,
    # Python callables, elementwise, in place (CPU)
    "apply_": _apply_, "map_": _map_,
}
