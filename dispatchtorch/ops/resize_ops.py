"""In-place geometry changes: Tensor.resize_ / resize_as_ and as_strided_, and the
deprecated out-of-place resize / resize_as (PyTorch's autograd Resize function).

resize_ keeps PyTorch's storage semantics: the storage stays (views made before keep
aliasing it) whenever the new size fits in it, the data prefix is kept, new elements are
uninitialised. A storage here is a fixed-size backend handle that views hold directly,
so growing past it means a new storage with the old elements copied in, which is exact
only while no other tensor aliases the old one (PyTorch's views follow a reallocated
storage; here they could not). So growing reallocates when the tensor is its storage's
only user (its base counts only if nothing else refers to it), and raises otherwise;
storages adopted from numpy or DLPack refuse to grow, as PyTorch's do."""
from __future__ import annotations

import functools
import operator
import sys
import warnings

from .._shape import Size, contiguous_strides, numel
from .._tensor import Tensor
from .._inplace import inplace_needs_graph
from . import views


def _sizes(op, sizes):
    if not sizes:
        raise TypeError(f'{op}() missing 1 required positional arguments: "size"')
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list, Size)):
        sizes = tuple(sizes[0])
    out = []
    for s in sizes:
        if isinstance(s, bool) or not hasattr(s, "__index__"):
            raise TypeError(f"{op}(): argument 'size' (position 1) must be tuple of ints, not "
                            f"{type(s).__name__}")
        out.append(operator.index(s))
    if any(s < 0 for s in out):       # PyTorch's own text, from its numel check
        raise RuntimeError(f"{op}: numel: integer multiplication overflow (negative size in "
                           f"{out})")
    return tuple(out)


def _extent(t):
    """One past the last storage element t reaches."""
    if not numel(t._shape):
        return t._offset
    return t._offset + sum((n - 1) * s for n, s in zip(t._shape, t.stride())) + 1


def capacity(t):
    """The elements of t's storage, as far as the frontend knows them: a root that owns
    its storage holds its shape's, one that resize_ or as_strided_ moved records it;
    otherwise (a detached view) what t and its root reach, a lower bound."""
    root = t._base if t._base is not None else t
    if root._storage is None:
        return numel(root._shape)
    known = root.__dict__.get("_capacity")
    return known if known is not None else max(_extent(root), _extent(t))


def _set_geometry(t, shape, stride, offset, storage, cap):
    """Point t at `storage` with the given geometry (t keeps its identity and version)."""
    bk = t._place.bk
    t._h = bk.as_strided(storage, shape, stride, offset)
    t._shape, t._stride, t._offset, t._storage = shape, stride, offset, storage
    if t._base is None:
        t._capacity = cap


def _aliased_elsewhere(t):
    """Whether a tensor other than t, and other than a base that only t refers to, shares
    t's storage. Every alias (a view, detach(), .data, a Parameter made from it) holds the
    one version-counter list of the storage, so CPython's reference count of that list
    counts them; no list means nothing ever aliased t."""
    vc = t.__dict__.get("_vcount")
    if vc is None:
        return False
    base = t._base
    holders = 1 + (base is not None)            # t's and its base's attribute
    if sys.getrefcount(vc) - 2 > holders:       # less getrefcount's argument and `vc`
        return True
    return base is not None and sys.getrefcount(base) - 2 > 1     # beyond t._base


def _reallocate(t, shape, needed):
    """A new storage of `needed` elements holding the old one's first elements."""
    # (no local names for t's base here: _aliased_elsewhere counts references to it)
    if (t._base if t._base is not None else t).__dict__.get("_resizable", True) is False:
        raise RuntimeError("Trying to resize storage that is not resizable")
    if _aliased_elsewhere(t):
        raise NotImplementedError(
            f"resize_: growing a storage ({capacity(t)} elements, {needed} needed) that other "
            f"tensors alias (views, detach() or .data of it) is not supported: PyTorch moves "
            f"them all to the new storage, which a dispatchtorch storage cannot do; resize a "
            f"clone() instead")
    place, dt, bk = t._place, t._dtype, t._place.bk
    old, keep = t._whole_storage(), min(capacity(t), needed)
    offset = t._offset
    new = place.empty((needed,) if offset else shape, dt.name, place.index)
    if keep:
        bk.copy_(bk.as_strided(new, (keep,), (1,), 0), bk.as_strided(old, (keep,), (1,), 0))
    d = t.__dict__
    for k in ("_base", "_view_vc"):             # nothing else sees the old storage: t owns
        d.pop(k, None)                          # the new one
    if offset:
        _set_geometry(t, shape, contiguous_strides(shape), offset, new, needed)
    else:                           # a plain root again: it owns a storage of its shape
        t._h, t._shape, t._stride, t._storage = new, shape, None, None
        d.pop("_capacity", None)


def resize_(self, *sizes, memory_format=None):
    """Resize in place to `sizes`, contiguous; the same sizes leave self as it is."""
    shape = _sizes("resize_", sizes)
    if memory_format is not None:   # no torch.memory_format objects exist here
        raise TypeError(f"resize_(): argument 'memory_format' must be torch.memory_format, "
                        f"not {type(memory_format).__name__}")
    if self._rg:
        raise RuntimeError("cannot resize variables that require grad")
    if shape == self._shape:
        return self
    needed = self._offset + numel(shape) if numel(shape) else self._offset
    if needed > capacity(self):
        _reallocate(self, shape, needed)
    else:
        _set_geometry(self, shape, contiguous_strides(shape), self._offset,
                      self._whole_storage(), capacity(self))
    self._vc()[0] += 1
    return self


def resize_as_(self, the_template, *, memory_format=None):
    if not isinstance(the_template, Tensor):
        raise TypeError(f"resize_as_(): argument 'the_template' (position 1) must be Tensor, "
                        f"not {type(the_template).__name__}")
    return resize_(self, tuple(the_template.shape), memory_format=memory_format)


def as_strided_(self, size, stride, storage_offset=None):
    """as_strided, in place: self takes the view's geometry (and, under autograd, the
    view's history, as PyTorch's AsStridedBackward)."""
    inplace_needs_graph("as_strided_", (self,))       # a leaf (or its view) refuses
    cap = capacity(self)
    v = views.as_strided(self, size, stride, storage_offset)    # checks, and the history
    size = tuple(operator.index(n) for n in size)
    stride = tuple(operator.index(n) for n in stride)
    offset = self._offset if storage_offset is None else operator.index(storage_offset)
    _set_geometry(self, size, stride, offset, self._whole_storage(), cap)
    if v._grad_fn is not None:
        self._grad_fn, self._out_nr = v._grad_fn, v._out_nr
    self._vc()[0] += 1
    return self


# -- the deprecated out-of-place forms (torch/autograd/_functions/tensor.py's Resize) --------

def resize(self, *sizes):
    """A reshape that must keep numel: a view of self when self is contiguous."""
    warnings.warn("non-inplace resize is deprecated", stacklevel=2)
    return _resize_to(self, sizes)


def resize_as(self, tensor):
    warnings.warn("non-inplace resize_as is deprecated", stacklevel=2)
    return _resize_to(self, tuple(tensor.size()))


def _resize_to(self, sizes):
    n = functools.reduce(operator.mul, sizes, 1)
    if self.numel() != n:
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, sizes))} ({n} elements in total), but "
            f"the given tensor has a size of {'x'.join(map(str, self.size()))} "
            f"({self.numel()} elements). autograd's resize can only change the shape of a "
            f"given tensor, while preserving the number of elements. ")
    return views.view(self if self.is_contiguous() else self.contiguous(), *sizes)


PUBLIC = {"resize_as_": resize_as_, "as_strided_": as_strided_}
METHODS = {"resize_": resize_, "resize_as_": resize_as_, "as_strided_": as_strided_,
           "resize": resize, "resize_as": resize_as}
