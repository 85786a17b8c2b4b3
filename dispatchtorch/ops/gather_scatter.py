"""The gather / scatter family: gather, scatter (and _add / _reduce), index_select,
index_add, index_fill, masked_fill / _select / _scatter, nonzero and argwhere. The
subscript operators (ops/subscript.py) reduce to these."""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from .._inplace import check_no_internal_overlap, inplace_needs_graph
from .._run import apply, decompose, kernel_for, launch, record, same_place, to_place
from .._shape import broadcast_shapes, broadcast_shapes2, norm_dim, numel
from .._sparse_forms import call as sparse_call
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from ..dispatch.registry import Forms, form_of, prim_row
from ._checks import range_check
from ._composite import OPMATH, composite, inplace_variant, run as run_composite, written_forms
from ._out import takes_out
from . import nonzero_coords
from .nonzero_coords import ARGWHERE, NONZERO, argwhere, nonzero  # noqa: F401  (re-exported)
from .reduction_prims import AMAX, AMIN, _ALL_DIMS, _reduce
from . import counting, creation, memory, pointwise, scans
from .memory import write_into
from ._bare_support import check_op as bare_check

# -- gather / scatter ------------------------------------------------------------------------------


def _gather_grad(g, shape, dim, index):
    return creation.zeros(shape, dtype=g.dtype, device=g.device).scatter_add(dim, index, g), None


# the forms of the family's rows: each function is written below and attached with form_of;
# WITH_INPLACE rows have a `_` method too (written, or made by inplace_variant)
ONLY, WITH_INPLACE = Forms(written=True, inplace=False), Forms(written=True)
GATHER = prim_row("gather", kind="indexing", args=("x", "index"), grad=_gather_grad, forms=ONLY)
SCATTER_PRIM = prim_row("scatter_", kind="indexing")


def _scatter_grad(g, dim, index, src_shape, needs):
    gx = g.scatter(dim, index, 0.0) if needs[0] else None
    gs = pad_to(g.gather(dim, index), src_shape) if needs[2] else None
    return gx, None, gs


def _scatter_add_grad(g, dim, index, src_shape, needs):
    return (g if needs[0] else None, None,
            pad_to(g.gather(dim, index), src_shape) if needs[2] else None)


def pad_to(g, shape):
    """g placed at the start of a zero tensor of `shape` (src may be larger than index)."""
    if tuple(g.shape) == tuple(shape):
        return g
    z = creation.zeros(shape, dtype=g.dtype, device=g.device)
    z[tuple(slice(0, n) for n in g.shape)] = g
    return z


SCATTER = composite("scatter", kind="indexing", args=("x", "index", "src"), forms=WITH_INPLACE,
                    decomp=lambda x, index, src, dim, reduce: _scatter(x, dim, index, src, reduce),
                    grad=_scatter_grad)
SCATTER_ADD = composite("scatter_add", kind="indexing", args=("x", "index", "src"),
                        forms=WITH_INPLACE,
                        decomp=lambda x, index, src, dim, reduce: _scatter(x, dim, index, src, reduce),
                        grad=_scatter_add_grad)


def check_index(index, size, op, dim=None, negative=False, error=RuntimeError, message=None):
    """Integer indices in [0, size) (or [-size, size) where negatives count from the end),
    checked here once for every backend with one read-back. Returns index as int64 with
    negatives resolved. message: the error text ({i}: the bad index), PyTorch's per op."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): index must be a Tensor, not {type(index).__name__}")
    dt = index._dtype
    if dt is not D.int64:
        if dt not in _INDEX_DTYPES:
            raise IndexError(f"{op}(): tensors used as indices must be long, int, byte or bool "
                             f"tensors, got {dt.pt_name}")
        index = index.long()
    n = numel(index._shape)
    if not n:
        return index
    text = op + "(): " + (message or "index {i} is out of bounds for dimension {d} with size {n}")

    def fail(bad):
        return error(text.format(i=bad, d=dim if dim is not None else 0, n=size))
    if not negative:              # a pure check: a compiled graph keeps it (ops/_checks.py)
        range_check(index, 0, size, fail, lambda t: _bounds(t, n))
        return index
    lo, hi = _bounds(index, n)
    bad = hi if hi >= size else lo if lo < -size else None
    if bad is not None:
        raise fail(bad)
    return pointwise.where(index < 0, index + size, index) if lo < 0 else index


_SELF = "index out of range in self"


_HOST_CHECK_LIMIT = 1 << 16


_INDEX_DTYPES = (D.int64, D.int32, D.int16, D.int8, D.uint8)


def _bounds(index, n):
    """(min, max) of a non-empty integer tensor of n elements. Index tensors are usually
    small (or on the host already): read them back once; large device ones reduce on
    the device."""
    if index._place.type == "cpu" or n <= _HOST_CHECK_LIMIT:
        host = np.asarray(index._host())
        if n <= 32:                       # Python's min/max beat two ufunc reductions here
            values = host.ravel().tolist()
            return min(values), max(values)
        return int(host.min()), int(host.max())
    dims = _ALL_DIMS[len(index._shape)]
    lo = _reduce(AMIN, index, dims, False, index._dtype)
    hi = _reduce(AMAX, index, dims, False, index._dtype)
    lo, hi = memory.stack([lo, hi]).tolist()
    return int(lo), int(hi)


def _check_gather_shapes(x, d, index, op):
    """PyTorch's rule: index and input have one rank (0-d counting as 1-d)."""
    if max(index.dim(), 1) != max(x.dim(), 1):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as input tensor "
                           f"({op})")
    for i in range(index.dim()):
        if i != d and index._shape[i] > x._shape[i]:
            raise RuntimeError(f"{op}: Size does not match at dimension {i} expected index "
                               f"{list(index._shape)} to be no larger than self "
                               f"{list(x._shape)} apart from dimension {d}")


@form_of(GATHER)
@takes_out("gather", "exact", "any")
def gather(input, dim, index, *, sparse_grad=False, out=None):
    d = norm_dim(dim, input.dim(), "gather")
    if input._dtype.bare:
        if input._dtype.is_floating_point and input.dim() == 1:     # PyTorch's 1-d path
            bare_check("gather_expanded_index", input._dtype)
        bare_check("gather", input._dtype)
    if not isinstance(index, Tensor) or index.numel():   # PyTorch checks no shape for an empty index
        _check_gather_shapes(input, d, index, "gather")
    index = check_index(index, input._shape[d] if input.dim() else 1, "gather", d)
    if index.dim() == 0 and input.dim() == 1:           # a 0-d index counts as 1-d
        return _gather(input, d, index.reshape(1)).reshape(())
    return _gather(input, d, index)


def _gather(input, d, index):
    """gather with a checked int64 index."""
    place = input._place
    if index._place is not place:
        place = same_place("gather", (input, index))
    scalar = not input._shape
    x = input.reshape(1) if scalar else input
    idx = index.to(place.device) if index._place is not place else index
    idx = idx if idx._shape else idx.reshape(1)
    r = apply(GATHER, place, (input, index), (x._h, idx._h), ((idx._shape, input._dtype),),
              {"dim": d}, {"dim": d, "index": index, "shape": input._shape})
    return r.reshape(index._shape) if scalar else r


def _scatter(input, dim, index, src, reduce, op=None, checked=None, name="scatter"):
    if name == "scatter_add" and not isinstance(src, Tensor):
        raise TypeError(f"scatter_add(): argument 'src' (position 3) must be Tensor, not "
                        f"{type(src).__name__}")
    d = norm_dim(dim, input.dim(), name)
    if isinstance(index, Tensor) and index.dim() == 0 and input.dim() == 1:
        index = index.reshape(1)                  # PyTorch counts a 0-d index as 1-d
        if isinstance(src, Tensor) and src.dim() == 0:
            src = src.reshape(1)
    if not isinstance(src, Tensor):
        src = creation.full(index._shape, src, dtype=input.dtype, device=input.device)
    if src.dtype is not input.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype "
                           f"({input.dtype.pt_name} vs {src.dtype.pt_name})")
    if index.numel():             # PyTorch checks no shape for an empty index
        _check_gather_shapes(input, d, index, name)
        for i in range(index.dim()):
            if index._shape[i] > src._shape[i]:
                raise RuntimeError(f"{name}(): Expected index {list(index._shape)} to be smaller "
                                   f"than src {list(src._shape)} at dimension {i}")
    if checked is None:
        index = check_index(index, input._shape[d] if input.dim() else 1, name, d)
    place = same_place(name, (input, index, src))
    index, src = to_place(index, place), to_place(src, place)
    with_grad = STATE.enabled
    STATE.enabled = False
    try:
        out = input.clone()
    finally:
        STATE.enabled = with_grad
    if index.numel():
        src_view = src if src._shape == index._shape else _narrow_to(src, index._shape)
        dst, idx = out, index
        if not out._shape:          # the prim takes no 0-d tensors: view them as (1,)
            dst, idx, src_view = (t.reshape(1) for t in (out, index, src_view))
        k = kernel_for(SCATTER_PRIM, place)
        launch(SCATTER_PRIM, k, place, (dst._h, idx._h, src_view._h),
               {"dim": d, "reduce": reduce}, (input.dtype,))
    if op is not None and with_grad and (input._rg or src._rg):
        record(op, (input, index, src), {"dim": d, "index": index, "reduce": reduce,
                                         "src_shape": src._shape}, (out,))
    return out


def _narrow_to(src, shape):
    with_grad = STATE.enabled
    STATE.enabled = False
    try:
        for i, n in enumerate(shape):
            src = src.narrow(i, 0, n)
    finally:
        STATE.enabled = with_grad
    return src


@form_of(SCATTER)
@takes_out("scatter", dtype="exact")
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    if input._dtype.bare:
        bare_check("scatter", input._dtype)
    if src is None:
        src = value
    if reduce is not None:
        modes = {"add": "sum", "multiply": "prod"}
        if reduce not in modes:
            raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce}")
        return _scatter(input, dim, index, src, modes[reduce])
    return _scatter(input, dim, index, src, "none", SCATTER)


@form_of(SCATTER_ADD)
@takes_out("scatter_add", dtype="exact")
def scatter_add(input, dim, index, src):
    return _scatter(input, dim, index, src, "sum", SCATTER_ADD, name="scatter_add")


_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _scatter_reduce(x, index, src, dim, reduce, include_self):
    base = x
    if not include_self:
        identity = {"sum": 0, "mean": 0, "prod": 1,
                    "amax": float("-inf") if x.dtype.is_floating_point else D.iinfo(x.dtype).min,
                    "amin": float("inf") if x.dtype.is_floating_point else D.iinfo(x.dtype).max}
        base = x.scatter(dim, index, identity[reduce])
    if reduce == "mean":
        total = _scatter(base, dim, index, src, "sum")
        count = _scatter(creation.ones_like(x) if include_self else creation.zeros_like(x),
                         dim, index, creation.ones_like(src), "sum")
        count = pointwise.where(count == 0, creation.ones_like(count), count)
        return total / count if x.dtype.is_floating_point else \
            pointwise.div(total, count, rounding_mode="floor")
    return _scatter(base, dim, index, src, reduce)


def _scatter_reduce_grad(g, x, index, src, result, dim, reduce, include_self, needs):
    """PyTorch's scatter_reduce_backward, in public ops."""
    if reduce == "sum":
        gx, gs = g, g.gather(dim, index)
    elif reduce == "mean":
        n = (creation.ones_like(g) if include_self else creation.zeros_like(g)).scatter_add(
            dim, index, creation.ones_like(src))
        n = pointwise.where(n == 0, 1.0, n)
        gx, gs = g / n, g.gather(dim, index) / n.gather(dim, index)
    elif reduce == "prod":
        masked_x = pointwise.where(x == 0, 1.0, x)
        gx = g * _scatter_reduce(masked_x, index, src, dim, "prod", include_self) / masked_x
        src_zero = src == 0
        zeros_per = creation.zeros_like(x).scatter_add(dim, index, src_zero.to(x.dtype)).gather(dim, index)
        single_zero = src_zero & (zeros_per == 1)
        masked_src_result = _scatter_reduce(x, index, pointwise.where(single_zero, 1.0, src), dim,
                                            "prod", include_self)
        gs = pointwise.where(single_zero, (g * masked_src_result).gather(dim, index),
                        (g * result).gather(dim, index) / pointwise.where(src_zero, 1.0, src))
    else:       # amax / amin: ties share the gradient evenly
        value = result.gather(dim, index)
        x_is = (x == result).to(g.dtype)
        src_is = (src == value).to(g.dtype)
        share = g / x_is.scatter_add(dim, index, src_is)
        gx, gs = x_is * share, src_is * share.gather(dim, index)
    if not include_self:
        gx = gx.scatter(dim, index, 0.0)
    return (gx if needs[0] else None), None, (gs if needs[2] else None)


SCATTER_REDUCE = composite(
    "scatter_reduce", kind="indexing", forms=WITH_INPLACE, args=("x", "index", "src"),
    decomp=_scatter_reduce,
    grad=_scatter_reduce_grad, signature="scatter_reduce(x, dim, index, src, reduce, *, "
                                         "include_self=True)",
    doc="reduce src into x at index along dim: sum, prod, mean (floor for integers), amax, amin")


@form_of(SCATTER_REDUCE)
@takes_out("scatter_reduce", dtype="exact")
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    d = norm_dim(dim, input.dim(), "scatter_reduce")
    return decompose(SCATTER_REDUCE, (input, index, src),
                     {"dim": d, "reduce": reduce, "include_self": bool(include_self)})


def _along(x, index, dim, shape):
    """A 1-d index along dim viewed (stride 0) as an index tensor of `shape`."""
    if x.dim() == 1:
        return index
    view = [1] * x.dim()
    view[dim] = index._shape[0]
    return index.reshape(view).expand(shape)


def _index_select(x, index, dim):
    if x.dim() == 0:
        return x.reshape(1).expand(index._shape).clone()
    shape = list(x._shape)
    shape[dim] = index._shape[0]
    return _gather(x, dim, _along(x, index, dim, shape))


INDEX_SELECT = composite(
    "index_select", kind="indexing", forms=ONLY, args=("x", "index"), decomp=_index_select,
    signature="index_select(x, dim, index)", doc="the slices of x at index along dim (a gather)")


def _vector_index(index, op):
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index.dim() > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector")
    return index.reshape(-1)


@form_of(INDEX_SELECT)
@takes_out("index_select", "exact", "any")
def index_select(input, dim, index, *, out=None):
    if input.is_sparse:                 # a class attribute: dispatchtorch.sparse's own
        return sparse_call("index_select", None, (input, dim, index), {"out": out})
    d = norm_dim(dim, input.dim(), "index_select")
    if input._dtype.bare and input.dim() <= 1 and not input._dtype.is_floating_point:
        bare_check("index_select", input._dtype)    # PyTorch's 1-d path has no uint16-64
    index = _vector_index(index, "index_select")
    if index._dtype not in (D.int64, D.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if input.numel() == 0 and input.dim() and index.numel():
        # PyTorch's own messages for an index into an empty input
        size = input._shape[d]
        if size == 0 and input.dim() == 1:
            raise IndexError("index_select(): index out of range in self")
        if size == 0:
            raise RuntimeError("index_select(): self indexing axis dim should be positive")
        bad = index.long()
        bad = bad[(bad < 0) | (bad >= size)]
        if bad.numel():
            raise RuntimeError(f"index_select(): INDICES element is out of DATA bounds, "
                               f"id={int(bad[0])} axis_dim={size}")
    if input.dim() == 0 and index.numel() != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{index.numel()} value(s)")
    index = check_index(index, input._shape[d] if input.dim() else 1, "index_select", d,
                        error=IndexError, message=_SELF)
    r = decompose(INDEX_SELECT, (input, index), {"dim": d})
    return r.reshape(()) if input.dim() == 0 else r       # a 0-d input gives a 0-d result


def _scaled_source(source, alpha):
    if alpha == 1:
        return source
    return source * (bool(alpha) if source.dtype is D.bool_ else alpha)


def _index_add(x, index, source, dim, alpha):
    source = _scaled_source(source, alpha)
    if x.dim() == 0:
        return x + source.sum()
    return _scatter(x, dim, _along(x, index, dim, source.shape), source.to(x.dtype), "sum",
                    SCATTER_ADD, checked=True)


INDEX_ADD = composite(
    "index_add", kind="indexing", forms=WITH_INPLACE, args=("x", "index", "source"),
    decomp=_index_add,
    signature="index_add(x, dim, index, source, *, alpha=1)",
    doc="x with alpha * source's slices added at index along dim (a scatter_add)")
OPMATH.add("index_add")


def _index_add_args(input, dim, index, op, source):
    """index_add's checks, PyTorch's (index_func_meta_impl), before anything runs."""
    d = norm_dim(dim, input.dim(), op)
    index = _vector_index(index, op)
    if not isinstance(source, Tensor):
        raise TypeError(f"{op}(): argument 'source' must be Tensor, not {type(source).__name__}")
    same_place(op, (input, index, source))      # PyTorch's RuntimeError, nothing copied
    if index._dtype not in (D.int64, D.int32):
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: "
                           f"{index._dtype.pt_name}")
    if input._dtype is not source._dtype:
        raise RuntimeError(f"index_add_(): self ({input._dtype.pt_name}) and source "
                           f"({source._dtype.pt_name}) must have the same scalar type")
    if d != 0 and d >= source.dim():
        raise RuntimeError(f"index_add_(): Indexing dim {d} is out of bounds of the source "
                           f"tensor with dim {source.dim()}")
    n = source._shape[d] if source.dim() else 1
    if index.numel() != n and not source.dim():
        raise IndexError(f"index_add_(): Dimension specified as {d} but tensor has no dimensions")
    if index.numel() != n:
        raise RuntimeError(f"index_add_(): Number of indices ({index.numel()}) should be equal "
                           f"to source.size(dim): ({n}), for dim: {d}")
    rest, srest = list(input._shape), list(source._shape)
    if input.dim() and source.dim():
        del rest[d], srest[d]
    if rest != srest:
        raise RuntimeError(f"index_add_(): source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(input._shape)} "
                           f"source.shape = {list(source._shape)}")
    # PyTorch: "index out of range in self" (IndexError) for a 1-d input, the bounds
    # message (RuntimeError) otherwise
    one_d = input.dim() <= 1
    if not source.numel():        # nothing is added: PyTorch reads no index
        return d, index.long()
    return d, check_index(index, input._shape[d] if input.dim() else 1, op, d,
                          error=IndexError if one_d else RuntimeError,
                          message=_SELF if one_d else None)


@form_of(INDEX_ADD)
@takes_out("index_add", dtype="exact")
def index_add(input, dim, index, source, *, alpha=1):
    d, index = _index_add_args(input, dim, index, "index_add", source)
    if input._dtype.bare:
        bare_check("index_add", input._dtype)
    return run_composite(INDEX_ADD, (input, index, source), {"dim": d, "alpha": alpha})


@form_of(INDEX_ADD, inplace=True)
def index_add_(self, dim, index, source, *, alpha=1):
    check_no_internal_overlap(self, "index_add_")
    if inplace_needs_graph("index_add_", (self, source)):
        return self.copy_(index_add(self, dim, index, source, alpha=alpha))
    d, index = _index_add_args(self, dim, index, "index_add_", source)
    source = _scaled_source(source, alpha)
    if source.dtype is not self.dtype:
        source = source.to(self.dtype)
    if self.dim() == 0:
        return self.copy_(self + source.sum())
    place = self._place
    idx = to_place(_along(self, index, d, source.shape).contiguous(), place)
    source = to_place(source, place)
    if idx.numel():
        launch(SCATTER_PRIM, kernel_for(SCATTER_PRIM, place), place,
               (self._h, idx._h, source.contiguous()._h), {"dim": d, "reduce": "sum"},
               (self.dtype,))
    self._vc()[0] += 1
    return self


def _fill_value(value, dtype, op):
    """A scalar fill value as PyTorch accepts it: integer tensors refuse what overflows,
    real tensors a complex value with an imaginary part."""
    if not dtype.is_complex:
        c = value.item() if isinstance(value, Tensor) and value._dtype.is_complex and \
            value.numel() == 1 else value
        if isinstance(c, complex) and c.imag != 0:
            raise RuntimeError(f"{op}: value cannot be converted to type {dtype.name} without "
                               f"overflow")
    if isinstance(value, Tensor) or dtype.is_grad or dtype is D.bool_:
        return value
    v = int(value)
    info = D.iinfo(dtype)
    if not info.min <= v <= info.max:
        raise RuntimeError(f"value cannot be converted to type {dtype.name}_t without overflow")
    return v


def _index_fill(x, index, value, dim):
    if x.dim() == 0:
        if not index.numel():
            return x.clone()
        return value.to(x.dtype).reshape(()).clone() if isinstance(value, Tensor) else \
            creation.full_like(x, value)
    if isinstance(value, Tensor):     # each slice once: value's gradient counts it once
        index = counting.unique(index)
    shape = list(x._shape)
    shape[dim] = index._shape[0]
    src = value.to(x.dtype).expand(shape) if isinstance(value, Tensor) else value
    return _scatter(x, dim, _along(x, index, dim, shape), src, "none", SCATTER, checked=True)


INDEX_FILL = composite(
    "index_fill", kind="indexing", forms=WITH_INPLACE, args=("x", "index", "value"),
    decomp=_index_fill,
    signature="index_fill(x, dim, index, value)", doc="x with the slices at index set to value")


@form_of(INDEX_FILL)
def index_fill(input, dim, index, value):
    d = norm_dim(dim, input.dim(), "index_fill")
    if input._dtype.bare:
        bare_check("index_fill", input._dtype)
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.dim()} dimension(s).")
    value = _fill_value(value, input.dtype, "index_fill")
    index = check_index(_vector_index(index, "index_fill"), input._shape[d] if input.dim() else 1,
                        "index_fill", d, negative=True, error=IndexError)
    return decompose(INDEX_FILL, (input, index, value), {"dim": d})


def _mask_value(input, mask, value, op):
    if not isinstance(mask, Tensor) or mask.dtype is not D.bool_:
        raise RuntimeError(f"{op} only supports boolean masks, but got mask with dtype "
                           f"{getattr(mask, 'dtype', type(mask).__name__)}")
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"{op} only supports a 0-dimensional value tensor, but got tensor "
                               f"with {value.dim()} dimension(s).")
        return value.to(input.dtype)
    return creation.tensor(value, dtype=input.dtype, device=input.device)


MASKED_FILL = composite(
    "masked_fill", kind="indexing", forms=WITH_INPLACE, args=("x", "mask", "value"),
    decomp=lambda x, mask, value: pointwise.where(mask, value, x),
    signature="masked_fill(x, mask, value)", doc="value where mask (broadcast to x) is True")


@form_of(MASKED_FILL)
def masked_fill(input, mask, value):
    if isinstance(mask, Tensor) and isinstance(input, Tensor):
        broadcast_shapes2(input._shape, mask._shape, "masked_fill")
        if input._dtype.bare:
            bare_check("masked_fill", input._dtype)
    value = _mask_value(input, mask, _fill_value(value, input.dtype, "masked_fill"),
                        "masked_fill_")
    return decompose(MASKED_FILL, (input, mask, value), {})


@form_of(MASKED_FILL, inplace=True)
def masked_fill_(self, mask, value):
    r = masked_fill(self, mask, value)
    if r._shape != self._shape:
        raise RuntimeError(f"masked_fill_: the mask of shape {list(mask._shape)} can't be broadcast "
                           f"to self's shape {list(self._shape)}")
    return write_into(self, r)


def _masked_select(x, mask):
    shape = broadcast_shapes(x._shape, mask._shape)
    return x.expand(shape)[mask.expand(shape)]


MASKED_SELECT = composite(
    "masked_select", kind="indexing", forms=ONLY, args=("x", "mask"), decomp=_masked_select,
    data_dependent=True, signature="masked_select(x, mask)",
    doc="the elements where mask (broadcast with x) is True, as a 1-d tensor")


@form_of(MASKED_SELECT)
@takes_out("masked_select", "exact", "any")
def masked_select(input, mask, *, out=None):
    if not isinstance(mask, Tensor) or mask.dtype is not D.bool_:
        raise RuntimeError(f"masked_select: expected BoolTensor for mask")
    broadcast_shapes2(mask._shape, input._shape, "masked_select")
    if input._dtype.bare:
        bare_check("masked_select", input._dtype)
    return decompose(MASKED_SELECT, (input, mask), {})


def _masked_scatter(x, mask, source):
    """Where mask is True, the next element of source in row-major order."""
    shape = broadcast_shapes(x._shape, mask._shape)
    m = mask.expand(shape).reshape(-1)
    if x._shape != shape:
        x = x.expand(shape)
    position = scans.cumsum(m, 0) - 1                     # the source element each True takes
    n = source.numel()
    picked = source.reshape(-1)[pointwise.clamp(position, 0, max(n - 1, 0))] if n else \
        creation.zeros(m.shape, dtype=source.dtype, device=source.device)
    return pointwise.where(m, picked.to(x.dtype), x.reshape(-1)).reshape(shape)


MASKED_SCATTER = composite(
    "masked_scatter", kind="indexing", forms=WITH_INPLACE, args=("x", "mask", "source"),
    decomp=_masked_scatter,
    signature="masked_scatter(x, mask, source)",
    doc="x with the True positions of mask filled from source in order")


@form_of(MASKED_SCATTER)
def masked_scatter(input, mask, source):
    if not isinstance(mask, Tensor) or mask.dtype is not D.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{getattr(mask, 'dtype', type(mask).__name__)}")
    if not isinstance(source, Tensor) or source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got "
                           f"{input.dtype.pt_name} and {getattr(source, 'dtype', None)}")
    shape = broadcast_shapes(input._shape, mask._shape)
    if int(mask.expand(shape).sum().item()) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return decompose(MASKED_SCATTER, (input, mask, source), {})


# index_fill_ may write an expanded self (PyTorch's does)
form_of(INDEX_FILL, inplace=True)(inplace_variant(index_fill, "index_fill_", overlap_ok=True))
# the function forms (torch.*) and the Tensor methods, from the rows above
FUNCTIONS, INPLACE = written_forms(vars())
globals().update(INPLACE)
PUBLIC = {**FUNCTIONS, **nonzero_coords.PUBLIC}     # nonzero, argwhere: nonzero_coords.py
METHODS = {**FUNCTIONS, **INPLACE}
