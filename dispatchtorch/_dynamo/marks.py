"""torch._dynamo.mark_dynamic / maybe_mark_dynamic / mark_static: choose, per tensor,
which dims a compile(dynamic=None or True) capture makes symbolic (see
dispatchtorch/_compile/dynamic.py). The marks are attributes of the tensor, PyTorch's
names; compile(dynamic=False) ignores them."""
from __future__ import annotations


def _dims(t, index, op):
    from .._tensor import Tensor
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(t).__name__}")
    idx = list(index) if isinstance(index, (list, tuple)) else [index]
    n = len(t._shape)
    out = []
    for i in idx:
        if not isinstance(i, int) or isinstance(i, bool) or not -n <= i < n:
            raise IndexError(f"{op}: dim {i!r} is out of range for a tensor of {n} dims")
        out.append(i % n)
    return out


def _mark(t, attr, dims):
    have = set(getattr(t, attr, ()) or ())
    setattr(t, attr, have | set(dims))


def mark_dynamic(t, index, *, min=None, max=None):
    """Make dim(s) `index` of t symbolic in the next capture; the capture raises
    ConstraintViolationError if the program pins them (min/max are accepted and not
    used: no range reasoning here)."""
    _mark(t, "_dynamo_dynamic_indices", _dims(t, index, "mark_dynamic"))


def maybe_mark_dynamic(t, index):
    """As mark_dynamic, without the error when the program pins the dim."""
    _mark(t, "_dynamo_weak_dynamic_indices", _dims(t, index, "maybe_mark_dynamic"))


def mark_static(t, index=None):
    """Keep dim(s) `index` of t (all dims when None) specialised, even under dynamic=True."""
    dims = range(len(t._shape)) if index is None else _dims(t, index, "mark_static")
    _mark(t, "_dynamo_static_indices", dims)


def marks_of(t):
    """(strong dynamic dims, weak dynamic dims, static dims) of tensor t."""
    return (getattr(t, "_dynamo_dynamic_indices", None) or (),
            getattr(t, "_dynamo_weak_dynamic_indices", None) or (),
            getattr(t, "_dynamo_static_indices", None) or ())
