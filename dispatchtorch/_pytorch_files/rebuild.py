"""torch._utils' tensor rebuilders, rebuilding dispatchtorch tensors: each a view of its
file storage (one flat tensor per storage key, so views saved from one storage share it
again, as PyTorch's loader keeps them), with the geometry checked against the storage."""
from __future__ import annotations

import pickle

from .. import _dtype as D
from .._storage import as_flat_of, of_tensor
from .._tensor import Tensor


class StorageRef:
    """One storage of the file: its key, dtype and size; `flat(dtype)` builds (once per
    dtype) the flat tensor over it, the first through `make(ref, dtype)`, the format
    reader's allocator, the others as views of the first."""

    def __init__(self, key, dtype, numel, location, make):
        self.key, self.dtype, self.numel, self.location = key, dtype, numel, location
        self._make, self._flat = make, {}

    @property
    def nbytes(self):
        return self.numel * self.dtype.itemsize

    def flat(self, dtype):
        t = self._flat.get(dtype.name)
        if t is None:
            if not self._flat:
                t = self._make(self, dtype)
            else:                          # the same bytes seen as another dtype
                t = as_flat_of(of_tensor(next(iter(self._flat.values()))), dtype)
            self._flat[dtype.name] = t
        return t


def _ints(name, values):
    if not isinstance(values, (tuple, list)) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
        raise RuntimeError(f"torch.load: a tensor's {name} is {values!r}, not non-negative ints")
    return tuple(values)


def _view(storage, offset, size, stride, dtype=None):
    if not isinstance(storage, StorageRef):
        raise pickle.UnpicklingError(f"a tensor rebuild was given {type(storage).__name__}, not "
                                     f"a storage of the file")
    dtype = storage.dtype if dtype is None else dtype
    if not isinstance(dtype, D.dtype):
        raise pickle.UnpicklingError(f"a tensor rebuild was given dtype {dtype!r}")
    size, stride = _ints("size", size), _ints("stride", stride)
    (offset,) = _ints("storage offset", (offset,))
    if len(size) != len(stride):
        raise RuntimeError(f"torch.load: a tensor has size {list(size)} but stride {list(stride)}")
    capacity = storage.nbytes // dtype.itemsize
    reach = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
    if all(size) and reach > capacity:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {dtype.itemsize} requiring a storage "
                           f"size of {reach * dtype.itemsize} are out of bounds for storage of "
                           f"size {storage.nbytes}")
    flat = storage.flat(dtype)
    from ..ops import creation
    return creation.empty(0, dtype=dtype, device=flat.device).set_(flat, offset, size, stride)


def _finish(t, requires_grad, metadata):
    if metadata:
        if not isinstance(metadata, dict) or set(metadata) - {"conj", "neg"}:
            raise pickle.UnpicklingError(f"unknown tensor metadata {metadata!r}")
        if metadata.get("conj"):           # the conj bit: values are the storage's conjugate
            t = t.conj_physical()
        if metadata.get("neg"):
            t = t.neg()
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _view(storage, storage_offset, size, stride)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    # backward_hooks: PyTorch does not save hooks (always an empty OrderedDict); ignored
    return _finish(_view(storage, storage_offset, size, stride), requires_grad, metadata)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    return _finish(_view(storage, storage_offset, size, stride, dtype), requires_grad, metadata)


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    from ..ops import creation
    if not isinstance(dtype, D.dtype):
        raise pickle.UnpicklingError(f"a meta tensor rebuild was given dtype {dtype!r}")
    size, stride = _ints("size", size), _ints("stride", stride)
    if len(size) != len(stride):
        raise RuntimeError(f"torch.load: a tensor has size {list(size)} but stride {list(stride)}")
    reach = sum((n - 1) * s for n, s in zip(size, stride)) + 1 if all(size) else 0
    t = creation.empty(0, dtype=dtype, device="meta").set_(
        creation.empty(reach, dtype=dtype, device="meta"), 0, size, stride)
    return t.requires_grad_(True) if requires_grad else t


def _rebuild_parameter(data, requires_grad, backward_hooks):
    from ..nn.parameter import Parameter
    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError(f"a Parameter rebuild was given {type(data).__name__}")
    return Parameter(data, bool(requires_grad))


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return set_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def set_state(obj, state):
    """torch._utils._set_obj_state, for Python attributes a user put on a tensor: only
    public names the class does not define (a file must not reach the tensor's internals)."""
    dict_state, slots = state if isinstance(state, tuple) and len(state) == 2 else (state, None)
    for part in (dict_state, slots):
        if not part:
            continue
        if not isinstance(part, dict):
            raise pickle.UnpicklingError(f"invalid serialized tensor state {state!r}")
        for k, v in part.items():
            if not isinstance(k, str) or k.startswith("_") or hasattr(type(obj), k):
                raise pickle.UnpicklingError(f"refusing to set attribute {k!r} on a loaded tensor "
                                             f"(only public attributes its class lacks are set)")
            setattr(obj, k, v)
    return obj


def rebuild_from_type_v2(func, new_type, args, state):
    """A tensor with Python attributes (Tensor.__reduce_ex__'s slow path)."""
    from ..nn.parameter import Parameter
    if func not in REBUILDERS.values() or not isinstance(args, tuple):
        raise pickle.UnpicklingError(f"_rebuild_from_type_v2 of {func!r} is not supported")
    ret = func(*args)
    if new_type is Parameter and type(ret) is not Parameter:
        ret = Parameter(ret, ret.requires_grad)
    elif new_type is not type(ret) and new_type is not Tensor:
        raise pickle.UnpicklingError(f"_rebuild_from_type_v2 to {new_type!r} is not supported")
    return set_state(ret, state)


REBUILDERS = {f.__name__: f for f in (
    _rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_meta_tensor_no_storage,
    _rebuild_parameter, _rebuild_parameter_with_state)}
