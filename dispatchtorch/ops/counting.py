"""unique, unique_consecutive and bincount: composites over sort, cumsum and scatter.
Their output sizes depend on the data, so each reads one count back to the host."""
from __future__ import annotations

import math

from .. import _dtype as D
from .._shape import norm_dim
from ._composite import composite, run
from ._args import check_tensor
from .sorting import _sort
from . import creation, memory, scans, views
from ._bare_support import check_op as bare_check


def _group_starts(rows):
    """rows: (n, m) sorted or consecutive rows -> bool (n,): True where a new group starts."""
    n = rows.shape[0]
    first = creation.ones(1, dtype=D.bool_, device=rows.device)
    if n <= 1:
        return first.expand(n).clone()
    differs = rows[1:] != rows[:-1]
    if rows.dim() == 2:
        differs = differs.any(1)
    return memory.cat([first, differs])


def _lexsort_rows(rows):
    """The stable order that sorts the rows of a 2-d tensor lexicographically
    (one stable sort per column, last column first)."""
    order = creation.arange(rows.shape[0], device=rows.device)
    for c in range(rows.shape[1] - 1, -1, -1):
        _, o = _sort(rows[:, c][order], 0, False)
        order = order[o]
    return order


def _unique(x, sorted, return_inverse, return_counts, dim, consecutive):
    if dim is None:
        rows = x.reshape(-1)
    else:
        if x.numel() == 0 and x.shape[dim] != 0:
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                               "unique cannot be applied")
        rows = views.movedim(x, dim, 0)
        rest = rows.shape[1:]
        rows = rows.reshape(rows.shape[0], math.prod(rest))      # (-1 is ambiguous when empty)
    n = rows.shape[0]
    if consecutive:
        order = None
        ordered = rows
    elif rows.dim() == 1:
        ordered, order = _sort(rows, 0, False)
    else:
        order = _lexsort_rows(rows)
        ordered = rows[order]
    starts = _group_starts(ordered)
    group = scans.cumsum(starts, 0) - 1                  # group id of each (ordered) row
    values = ordered[starts]
    if dim is not None:
        values = views.movedim(values.reshape((values.shape[0],) + rest), 0, dim)
    out = [values]
    if return_inverse:
        inverse = group if order is None else creation.zeros(n, dtype=D.int64,
                                                         device=x.device).scatter(0, order, group)
        out.append(inverse.reshape(x.shape) if dim is None else inverse)
    if return_counts:
        k = values.shape[0 if dim is None else dim]
        counts = creation.zeros(k, dtype=D.int64, device=x.device)
        out.append(counts.scatter_add(0, group, creation.ones(n, dtype=D.int64, device=x.device)))
    return tuple(out) if len(out) > 1 else out[0]


UNIQUE = composite("unique", lambda x, sorted, return_inverse, return_counts, dim:
                   _unique(x, sorted, return_inverse, return_counts, dim, False),
                   kind="sort", differentiable=False,
                   signature="unique(x, sorted=True, return_inverse=False, return_counts=False, "
                             "dim=None)",
                   doc="sorted distinct elements (or slices along dim); NaNs are all distinct")
UNIQUE_CONSECUTIVE = composite(
    "unique_consecutive", lambda x, return_inverse, return_counts, dim:
    _unique(x, True, return_inverse, return_counts, dim, True),
    kind="sort", differentiable=False,
    signature="unique_consecutive(x, return_inverse=False, return_counts=False, dim=None)",
    doc="collapse runs of equal consecutive elements (or slices)")


def _unique_args(input, dim, name):
    check_tensor(input, name)
    if dim is not None:
        dim = norm_dim(dim, input.dim(), name)
        if input.dim() == 0:
            raise IndexError(f"{name}(): dim out of range for a 0-d tensor")
    return dim


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    dim = _unique_args(input, dim, "unique")
    if input._dtype.bare:
        bare_check("unique", input._dtype)
    return run(UNIQUE, (input,), {"sorted": sorted, "return_inverse": return_inverse,
                                  "return_counts": return_counts, "dim": dim})


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    dim = _unique_args(input, dim, "unique_consecutive")
    return run(UNIQUE_CONSECUTIVE, (input,), {"return_inverse": return_inverse,
                                              "return_counts": return_counts, "dim": dim})


def _bincount(x, weights, minlength):
    size = max(int(x.max().item()) + 1 if x.numel() else 0, minlength)
    index = x.long()
    if weights is None:
        return creation.zeros(size, dtype=D.int64, device=x.device).scatter_add(
            0, index, creation.ones(x.shape, dtype=D.int64, device=x.device))
    dt = D.float32 if weights.dtype is D.float32 else D.float64
    return creation.zeros(size, dtype=dt, device=x.device).scatter_add(0, index, weights.to(dt))


BINCOUNT = composite("bincount", _bincount, kind="indexing", args=("x", "weights"),
                     signature="bincount(x, weights=None, minlength=0)",
                     doc="counts (or summed weights) of each value of a 1-d non-negative integer "
                         "tensor; float32 weights give float32, others float64")


def bincount(input, weights=None, minlength=0):
    check_tensor(input, "bincount")
    if input._dtype.bare:
        bare_check("bincount", input._dtype)
    if input.dim() != 1 or input.dtype.is_floating_point or input.dtype is D.bool_ or \
            (input.numel() and int(input.min().item()) < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and (weights.dim() != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    return run(BINCOUNT, (input, weights), {"minlength": minlength})


METHODS = {"unique": unique, "unique_consecutive": unique_consecutive, "bincount": bincount}
