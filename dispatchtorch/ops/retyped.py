"""Views of a tensor's memory as another dtype (view_as_real / view_as_complex and
Tensor.view(dtype)): the backend's `reinterpret` of the root storage, then a strided
view of that, sharing the version counter, so in-place writes through either are seen
by autograd's saved-tensor checks."""
from __future__ import annotations

import weakref

from .._run import storage_of
from .._tensor import Tensor

_new = object.__new__
# tensors made by conj() of a complex tensor: PyTorch marks them with the lazy conjugate
# bit; here the values are conjugated at once and only the mark is kept (by identity).
# Kept here, below the views: a conjugate-marked tensor refuses view(dtype).
_CONJ: "weakref.WeakValueDictionary[int, Tensor]" = weakref.WeakValueDictionary()


def is_conj(input):
    return _CONJ.get(id(input)) is input


def retyped_view(t, dt, shape, stride, offset, op, base=True):
    """A view of t's memory as dtype dt (geometry in units of dt). `base`: the view
    records t's root as its `_base` (view_as_real's autograd view); Tensor.view(dtype)
    has none, as PyTorch's."""
    place = t._place
    place.check_dtype(dt, op)
    storage = storage_of(t)
    flat = storage if dt is t._dtype else place.bk.reinterpret(storage, dt.name)
    if flat is None:
        raise RuntimeError(f"{op}: the {place.type} backend cannot view {t._dtype.name} memory "
                           f"as {dt.name}")
    v = _new(Tensor)
    v._h = place.bk.as_strided(flat, shape, stride, offset)
    v._shape, v._dtype, v._place = shape, dt, place
    v._stride, v._storage, v._offset = stride, flat, offset
    vc = t._vcount
    if vc is None:
        vc = t._vcount = [0]
    v._vcount = vc
    if base:
        v._base = t._base if t._base is not None else t
    return v
