"""Sorting and order statistics: sort (a prim: stable, NaN last), and argsort, msort,
topk, kthvalue, median, nanmedian (composites over it); searchsorted (a prim) and
bucketize."""
from __future__ import annotations

import numbers

from .. import _dtype as D
from .. import return_types
from .._run import apply, same_place, to_place
from .._shape import check_keepdim, norm_dim
from .._tensor import Tensor
from ..dispatch.registry import prim_row
from ._composite import composite, run
from ._args import check_tensor
from ._out import takes_out
from . import creation, pointwise
from ._bare_support import check_op as bare_check


def _sort_grad(g, shape, result1, dim):
    # the indices are a permutation along dim: put each gradient back where it came from
    return creation.zeros(shape, dtype=g[0].dtype, device=g[0].device).scatter(dim, result1, g[0])


def evenly_distribute(g, x, result):
    """PyTorch's evenly_distribute_backward (median, max and min of all elements): ties
    share the gradient, the rest get +0.0 (masked_fill: an inf g gives no NaN there); a
    NaN result's gradient goes to the NaNs."""
    mask = (x == result) | ((x != x) & (result != result))
    return pointwise.where(mask, g / mask.sum(), 0.0)


def value_selecting(g, x, indices, dim, keepdim):
    """PyTorch's value_selecting_reduction_backward (max, min, median, kthvalue along a
    dim): g scattered into zeros at the chosen indices, so a -0.0 g stays -0.0 there."""
    if x.dim() == 0:
        return g
    if not keepdim:
        g, indices = g.unsqueeze(dim), indices.unsqueeze(dim)
    return creation.zeros(x.shape, dtype=g.dtype, device=g.device).scatter(dim, indices, g)


def _selected_grad(g, x, result1, dim, keepdim):
    return value_selecting(g[0], x, result1, dim, keepdim)


SORT = prim_row("sort", kind="sort", n_out=2, grad=_sort_grad)
SEARCHSORTED = prim_row("searchsorted", kind="sort", args=("sorted_seq", "values"),
                        differentiable=False)


def _sort(input, d, descending):
    """The sort prim along normalised dim d (0-d and empty inputs handled here)."""
    if input._dtype.is_complex:
        raise RuntimeError("Sort does not support complex dtypes on CPU")
    if input.numel() == 0 or input.dim() == 0:
        return input.clone(), creation.zeros(input.shape, dtype=D.int64, device=input.device)
    return apply(SORT, input._place, (input,), (input._h,),
                 ((input._shape, input._dtype), (input._shape, D.int64)),
                 {"dim": d, "descending": descending}, {"dim": d, "shape": input._shape})


@takes_out("sort", "exact")
def sort(input, dim=-1, descending=False, stable=False, *, out=None):
    check_tensor(input, "sort")
    if input._dtype.bare:
        bare_check("sort", input._dtype)
    if isinstance(dim, bool):        # sort(x, stable=...) passed positionally is not PyTorch's
        raise TypeError("sort(): argument 'dim' must be int, not bool")
    d = norm_dim(dim, input.dim(), "sort")
    return return_types.sort(*_sort(input, d, bool(descending)))


@takes_out("argsort", dtype="exact")
def argsort(input, dim=-1, descending=False, stable=False):
    check_tensor(input, "argsort")
    if input._dtype.bare:
        bare_check("argsort", input._dtype)
    return _sort(input, norm_dim(dim, input.dim(), "argsort"), bool(descending))[1]


@takes_out("msort", dtype="exact")
def msort(input):
    return sort(input, 0).values


# -- order statistics (composites) -------------------------------------------------------------------

def _topk(x, k, dim, largest, sorted):
    values, indices = _sort(x, dim, largest)
    if x.dim() == 0:
        return values, indices
    return values.narrow(dim, 0, k), indices.narrow(dim, 0, k)


TOPK = composite("topk", _topk, kind="sort", n_out=2,
                 signature="topk(x, k, dim=-1, largest=True, sorted=True) -> (values, indices)",
                 doc="the k largest (smallest) along dim, from a stable sort: ties keep index "
                     "order, NaN counts as largest")


@takes_out("topk", "exact")
def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    check_tensor(input, "topk")
    if input._dtype.bare:
        bare_check("topk", input._dtype)
    if input.dtype is D.bool_:
        raise RuntimeError("topk does not support bool dtypes")
    d = norm_dim(dim, input.dim(), "topk")
    size = input.shape[d] if input.dim() else 1
    if not 0 <= k <= size:
        raise RuntimeError(f"topk(): selected index k out of range")
    return return_types.topk(*run(TOPK, (input,), {"k": k, "dim": d, "largest": bool(largest),
                                                   "sorted": sorted}))


def _select(values, indices, dim, pos, keepdim):
    """values/indices at per-slice positions pos (keepdim-shaped int64) along dim."""
    v = values.gather(dim, pos)
    i = indices.gather(dim, pos)
    return (v, i) if keepdim else (v.squeeze(dim), i.squeeze(dim))


def _kthvalue(x, k, dim, keepdim):
    values, indices = _sort(x, dim, False)
    if x.dim() == 0:
        return values, indices
    v, i = values.narrow(dim, k - 1, 1), indices.narrow(dim, k - 1, 1)
    return (v, i) if keepdim else (v.squeeze(dim), i.squeeze(dim))


KTHVALUE = composite("kthvalue", _kthvalue, kind="sort", n_out=2, grad=_selected_grad,
                     signature="kthvalue(x, k, dim=-1, keepdim=False) -> (values, indices)",
                     doc="the k-th smallest along dim (NaN sorts last)")


@takes_out("kthvalue", "exact", "any")
def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    check_tensor(input, "kthvalue")
    if input._dtype.bare:
        bare_check("kthvalue", input._dtype)
    check_keepdim(keepdim, "kthvalue")
    if input.dtype is D.bool_:
        raise NotImplementedError("\"kthvalue\" not implemented for 'Bool'")
    d = norm_dim(dim, input.dim(), "kthvalue")
    size = input.shape[d] if input.dim() else 1
    if size == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return return_types.kthvalue(*run(KTHVALUE, (input,), {"k": k, "dim": d, "keepdim": keepdim}))


def _median_position(x, dim, ignore_nan):
    """Per slice: where the (lower) median sits in the ascending sort. With a NaN it is
    the first NaN (median) or the median of the numbers (nanmedian)."""
    n = x.shape[dim]
    valid = (x == x).sum(dim, keepdim=True)
    if ignore_nan:
        return pointwise.where(valid == 0, 0, (valid - 1) // 2)
    return pointwise.where(valid < n, valid, (n - 1) // 2)


def _median_dim(ignore_nan):
    def decomp(x, dim, keepdim):
        if x.dim() == 0:
            return x.clone(), creation.zeros((), dtype=D.int64, device=x.device)
        values, indices = _sort(x, dim, False)
        return _select(values, indices, dim, _median_position(x, dim, ignore_nan), keepdim)
    return decomp


def _median_all(ignore_nan):
    def decomp(x):
        flat = x.reshape(-1)
        if flat.numel() == 0:
            return creation.full((), float("nan"), dtype=x.dtype, device=x.device)
        return _median_dim(ignore_nan)(flat, 0, False)[0]
    return decomp


MEDIAN = composite("median", _median_all(False), kind="sort", grad=evenly_distribute,
                   signature="median(x)", doc="lower median of all elements; NaN if any is NaN")
NANMEDIAN = composite("nanmedian", _median_all(True), kind="sort", grad=evenly_distribute,
                      signature="nanmedian(x)", doc="lower median of the non-NaN elements")
MEDIAN_DIM = composite("median_dim", _median_dim(False), kind="sort", n_out=2,
                       grad=_selected_grad,
                       signature="median(x, dim, keepdim=False) -> (values, indices)",
                       doc="lower median along dim; a slice with NaN gives its first NaN")
NANMEDIAN_DIM = composite("nanmedian_dim", _median_dim(True), kind="sort", n_out=2,
                          grad=_selected_grad,
                          signature="nanmedian(x, dim, keepdim=False) -> (values, indices)",
                          doc="lower median of the non-NaN elements along dim")


def _median_fn(full, along, name):
    def fn(input, dim=None, keepdim=False, *, out=None):
        check_tensor(input, name)
        if input.dtype is D.bool_:
            raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")
        if input._dtype.bare:
            bare_check("median", input._dtype)
        if dim is None:
            return run(full, (input,), {})
        d = norm_dim(dim, input.dim(), name)
        if input.dim() and input.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        return return_types.median(*run(along, (input,), {"dim": d, "keepdim": keepdim}))
    fn.__name__ = fn.__qualname__ = name
    return fn


median = takes_out("median", "exact")(_median_fn(MEDIAN, MEDIAN_DIM, "median"))
nanmedian = takes_out("nanmedian", "exact")(_median_fn(NANMEDIAN, NANMEDIAN_DIM,
                                                              "nanmedian"))


# -- binary search ----------------------------------------------------------------------------------

@takes_out("searchsorted", "exact")
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None,
                 out=None):
    check_tensor(sorted_sequence, "searchsorted", "sorted_sequence")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got "
                               f"{side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    seq = sorted_sequence
    if seq.dim() == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, "
                           "but got 0 dimension")
    scalar = not isinstance(input, Tensor)
    if scalar:
        if not isinstance(input, numbers.Number):
            raise TypeError(f"searchsorted(): argument 'input' must be Tensor or Number, not "
                            f"{type(input).__name__}")
        input = creation.full((), input, device=seq.device,
                          dtype=D.int64 if isinstance(input, int) else D.get_default_dtype())
    if sorter is not None:
        seq = seq.gather(-1, sorter)
    if seq.dim() > 1 and (input.dim() != seq.dim() or input.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the "
                           f"first N-1 dimensions of boundaries tensor and input value tensor must "
                           f"match, but we got boundaries tensor {list(seq.shape)} and input value "
                           f"tensor {list(input.shape)}")
    dt = D.promote_types(seq.dtype, input.dtype)
    place = same_place("searchsorted", (seq, input))
    seq, values = to_place(seq.to(dt), place), to_place(input.to(dt), place)
    out_dt = D.int32 if out_int32 else D.int64
    if values.numel() == 0 or seq.shape[-1] == 0:
        r = creation.zeros(values.shape, dtype=out_dt, device=values.device)
    else:
        m = seq.shape[-1]
        s2 = seq.reshape(1, m) if seq.dim() == 1 else seq.reshape(-1, m)
        v2 = values.reshape(1, -1) if seq.dim() == 1 else values.reshape(s2.shape[0], -1)
        r = apply(SEARCHSORTED, place, (s2, v2), (s2.contiguous()._h, v2.contiguous()._h),
                  ((v2._shape, D.int64),), {"right": bool(right)}).reshape(values.shape)
        if out_int32:
            r = r.to(D.int32)
    return r


@takes_out("bucketize", "exact")
def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    check_tensor(boundaries, "bucketize", "boundaries")
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


METHODS = {"sort": sort, "argsort": argsort, "msort": msort, "topk": topk, "kthvalue": kthvalue,
           "median": median, "nanmedian": nanmedian}
