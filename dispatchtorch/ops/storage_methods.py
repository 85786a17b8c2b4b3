"""Tensor.untyped_storage / storage / storage_type and Tensor.set_ (the storage classes
are in _storage.py).

set_ points a tensor at another storage, as PyTorch's. One difference, on purpose: the
tensor takes the version counter of the storage it now views (PyTorch keeps its own),
because here every alias of a storage must share that counter, which is how in-place
writes through any of them trip a saved tensor's check and how resize_ sees aliases.
A geometry reaching past the storage raises where PyTorch grows the storage (a storage
here cannot grow under the tensors that hold it)."""
from __future__ import annotations

from .. import _storage as S
from .._shape import contiguous_strides, numel
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from .resize_ops import _set_geometry


def untyped_storage(self):
    return S.of_tensor(self)


def storage(self):
    S.warn_typed()
    return S.typed_of_tensor(self)


def _invalid(args):
    got = ", ".join("torch.storage." + type(a).__name__ if S.is_storage(a) else
                    "Tensor" if isinstance(a, Tensor) else type(a).__name__ for a in args)
    return TypeError(
        f"set_() received an invalid combination of arguments - got ({got}), but expected one "
        f"of:\n * ()\n * (torch.Storage source)\n * (torch.Storage source, int storage_offset, "
        f"tuple of ints size, tuple of ints stride = None)\n * (Tensor source)\n * (Tensor "
        f"source, int storage_offset, tuple of ints size, tuple of ints stride = None)\n")


def _check_autograd(self, source):
    if self._rg:
        if self._grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        raise NotImplementedError("set_ on a tensor with autograd history is not supported "
                                  "(PyTorch leaves it a grad_fn that cannot run backward)")
    if isinstance(source, Tensor) and source._rg and STATE.enabled:
        raise NotImplementedError("set_ to a tensor that requires grad, under grad mode, is not "
                                  "supported (PyTorch gives a tensor whose backward is not "
                                  "implemented); call it under torch.no_grad()")


def set_(self, *args, **kwargs):
    """Make self view `source` (a tensor, or a storage with an offset, sizes and strides),
    or, without arguments, an empty storage of its own."""
    from . import creation
    names = ("source", "storage_offset", "size", "stride")
    if len(args) > 4 or any(k not in names for k in kwargs):
        raise _invalid(args + tuple(kwargs.values()))
    given = dict(zip(names, args), **kwargs)
    source = given.get("source")
    if source is None:
        if given:
            raise _invalid(args + tuple(kwargs.values()))
        _check_autograd(self, None)
        fresh = creation.empty(0, dtype=self._dtype, device=self._place.device)
        version = self._vc()[0] + 1
        d = self.__dict__
        for k in ("_base", "_view_vc", "_capacity", "_storage", "_stride"):
            d.pop(k, None)
        self._h, self._shape, self._offset, self._vcount = fresh._h, (0,), 0, [version]
        return self
    is_tensor = isinstance(source, Tensor)
    if not (is_tensor or S.is_storage(source)) or ("storage_offset" in given) != ("size" in given):
        raise _invalid(args + tuple(kwargs.values()))
    _check_autograd(self, source)
    if is_tensor:
        if source._dtype is not self._dtype:
            raise RuntimeError(f"Could not set tensor of type {source._dtype.cpp_name} to a tensor "
                               f"of type {self._dtype.cpp_name}")
        flat = S.of_tensor(source)._elements
        if "size" not in given:
            offset, shape, stride = source._offset, source._shape, source.stride()
    else:
        if isinstance(source, S.TypedStorage) and source.dtype is not self._dtype:
            raise RuntimeError(f"Expected a Storage of type {self._dtype.cpp_name} or an "
                               f"UntypedStorage, but got type {source.dtype.pt_name} for "
                               f"argument 1 'storage'")
        flat = S.as_flat_of(source, self._dtype)
        if "size" not in given:
            offset, shape, stride = 0, (flat.numel(),), (1,)
    if "size" in given:
        offset, shape = int(given["storage_offset"]), tuple(int(n) for n in given["size"])
        stride = given.get("stride")
        stride = contiguous_strides(shape) if stride is None else tuple(int(s) for s in stride)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if flat._place is not self._place:
        raise RuntimeError(f'Attempted to set the storage of a tensor on device "{self.device}" to '
                           f'a storage on different device "{flat.device}".  This is no longer '
                           f'allowed; the devices must match.')
    cap = flat.numel()
    if numel(shape) and _reach(shape, stride, offset) > cap:
        raise NotImplementedError(
            f"set_: sizes {list(shape)}, strides {list(stride)} and storage offset {offset} reach "
            f"past the storage ({cap} elements of {self._dtype.name}); PyTorch grows the storage "
            f"there, which a dispatchtorch storage cannot do under the tensors that hold it")
    d = self.__dict__
    for k in ("_base", "_view_vc"):
        d.pop(k, None)
    _set_geometry(self, shape, stride, offset, flat._storage if flat._storage is not None
                  else flat._h, cap)
    self._vcount = flat._vc()
    self._vcount[0] += 1
    return self


def _reach(shape, stride, offset):
    """One past the last element a geometry of at least one element touches."""
    return offset + sum((n - 1) * s for n, s in zip(shape, stride)) + 1


METHODS = {"untyped_storage": untyped_storage, "storage": storage,
           "storage_type": S.storage_type, "set_": set_}
