"""PyTorch's Tensor methods with no op row of their own: narrow_copy, the legacy
`new(...)` constructor, new_empty_strided, and the elementwise Python-callable
methods apply_ / map_ (their write is map2_'s, _python_scalars.py). methods.py binds this
module's METHODS with the rest."""
from __future__ import annotations

import operator

from .._tensor import Tensor
from . import creation as C
from . import shape_more as SM
from ._python_scalars import store_elementwise


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


def _apply_(self, callable):
    if self.device.type != "cpu":
        raise TypeError("apply_ is only implemented on CPU tensors")
    if self.requires_grad:
        raise RuntimeError("Can't call apply_() on Variable that requires grad. Use "
                           "var.detach().apply_() instead.")
    return store_elementwise(self, callable)


def _map_(self, other, callable):
    """tensor_apply.cpp's checks in its order: device, dtype, requires_grad."""
    if not isinstance(other, Tensor):
        raise TypeError(f"map_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")
    if self.device.type != "cpu" or other.device.type != "cpu":
        raise TypeError("map_ is only implemented on CPU tensors")
    if other.dtype is not self.dtype:
        raise TypeError(f"map_: expected {self.type()} for 'other' (got {other.type()})")
    if self.requires_grad or other.requires_grad:
        raise RuntimeError("Can't call map_() on Variable that requires grad. Use "
                           "var.detach().map_() instead.")
    return store_elementwise(self, callable, other.expand(self.shape))


METHODS = {
    "narrow_copy": SM.COPIES["narrow_copy"],
    "new": _new, "new_empty_strided": _new_empty_strided,
    # Python callables, elementwise, in place (CPU)
    "apply_": _apply_, "map_": _map_,
}
