"""Indexing: __getitem__ / __setitem__ with PyTorch's rules, and the gather / scatter
family they reduce to. Basic indexing is a view; advanced indexing (tensors,
lists, bool masks) is an index_select over the indexed dims moved to the front."""
from __future__ import annotations

import numbers
import operator

import numpy as np

from .. import _dtype as D
from .._run import (kernel_for, launch, make_view, operand_handle, record, same_place, to_place,
                    wrap)
from .._shape import broadcast_shapes, contiguous_strides, norm_dim, numel
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from ..dispatch import OpDef, register_op
from . import _api
from .views import SLICE, _sub_view, select

# -- gather / scatter ------------------------------------------------------------------------------


def _gather_grad(g, x, dim, index):
    return _api.zeros(x.shape, dtype=g.dtype, device=g.device).scatter_add(dim, index, g), None


GATHER = register_op(OpDef("gather", kind="indexing", args=("x", "index"), grad=_gather_grad))
SCATTER_PRIM = register_op(OpDef("scatter_", kind="indexing"))


def _scatter_grad(g, dim, index, needs):
    gx = g.scatter(dim, index, 0.0) if needs[0] else None
    gs = g.gather(dim, index) if needs[2] else None
    return gx, None, gs


def _scatter_add_grad(g, dim, index, needs):
    return g if needs[0] else None, None, g.gather(dim, index) if needs[2] else None


SCATTER = register_op(OpDef("scatter", kind="indexing", args=("x", "index", "src"),
                            decomp=lambda x, index, src, dim, reduce: _scatter(x, dim, index, src, reduce),
                            grad=_scatter_grad))
SCATTER_ADD = register_op(OpDef("scatter_add", kind="indexing", args=("x", "index", "src"),
                                decomp=lambda x, index, src, dim, reduce: _scatter(x, dim, index, src, reduce),
                                grad=_scatter_add_grad))
NONZERO = register_op(OpDef("nonzero", kind="indexing", data_dependent=True))


def check_index(index, size, op, dim=None, *, negative=True, error=IndexError):
    """Indices must be integers in [-size, size) ([0, size) where PyTorch takes no
    negative ones: gather, scatter, index_add, index_select); checked here once for
    every backend. `error`: the type PyTorch raises for this op."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): index must be a Tensor, not {type(index).__name__}")
    if index.dtype not in (D.int64, D.int32, D.int16, D.int8, D.uint8):
        raise RuntimeError(f"{op}(): Expected dtype int64 for index, got {index.dtype}")
    if index.numel():
        lo, hi = int(index.amin().item()), int(index.amax().item())
        bad = hi if hi >= size else lo if lo < (-size if negative else 0) else None
        if bad is not None:
            where = f" for dimension {dim}" if dim is not None else ""
            raise error(f"{op}(): index {bad} is out of bounds{where} with size {size}")


def _check_gather_shapes(x, d, index, op):
    if index.dim() != x.dim() and not (x.dim() == 0 and index.dim() <= 1):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as input tensor "
                           f"({op})")
    for i in range(index.dim()):
        if i != d and index._shape[i] > x._shape[i]:
            raise RuntimeError(f"Size does not match at dimension {i} expected index "
                               f"{list(index._shape)} to be smaller than self {list(x._shape)} "
                               f"apart from dimension {d}")


def gather(input, dim, index, *, sparse_grad=False, out=None):
    d = norm_dim(dim, input.dim(), "gather")
    _check_gather_shapes(input, d, index, "gather")
    check_index(index, input._shape[d] if input.dim() else 1, "gather", d, negative=False,
                error=RuntimeError)
    index = _positive(index, input._shape[d] if input.dim() else 1)
    place = same_place("gather", (input, index))
    x = input if input.dim() else input.reshape(1)
    idx = index.to(place.device) if index._place is not place else index
    idx = idx if idx.dim() else idx.reshape(1)
    from .._run import apply
    r = apply(GATHER, place, (input, index), (x._h, idx._h), ((idx._shape, input.dtype),),
              {"dim": d}, {"dim": d, "index": index})
    return r if input.dim() else r.reshape(index._shape)


def _positive(index, size):
    if index.numel() and int(index.amin().item()) < 0:
        index = _api.where(index < 0, index + size, index)
    return index if index.dtype is D.int64 else index.long()


def _scatter(input, dim, index, src, reduce, op=None):
    d = norm_dim(dim, input.dim(), "scatter")
    if not isinstance(src, Tensor):
        src = _api.full(index._shape, src, dtype=input.dtype, device=input.device)
    if src.dtype is not input.dtype:
        raise RuntimeError(f"scatter(): Expected self.dtype to be equal to src.dtype ({input.dtype} "
                           f"vs {src.dtype})")
    _check_gather_shapes(input, d, index, "scatter")
    for i in range(index.dim()):
        if index._shape[i] > src._shape[i]:
            raise RuntimeError(f"scatter(): Expected index {list(index._shape)} to be smaller than "
                               f"src {list(src._shape)} at dimension {i}")
    check_index(index, input._shape[d] if input.dim() else 1, "scatter", d, negative=False,
                error=RuntimeError)
    index = _positive(index, input._shape[d] if input.dim() else 1)
    place = same_place("scatter", (input, index, src))
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
        record(op, (input, index, src), {"dim": d, "index": index, "reduce": reduce}, (out,))
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


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    if src is None:
        src = value
    if reduce is not None:
        modes = {"add": "sum", "multiply": "prod"}
        if reduce not in modes:
            raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce}")
        return _scatter(input, dim, index, src, modes[reduce])
    return _scatter(input, dim, index, src, "none", SCATTER)


def scatter_add(input, dim, index, src):
    return _scatter(input, dim, index, src, "sum", SCATTER_ADD)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    modes = {"sum": "sum", "prod": "prod", "amax": "amax", "amin": "amin", "mean": "mean"}
    if reduce not in modes:
        raise RuntimeError(f"reduce argument must be one of sum, prod, mean, amax, amin; got {reduce}")
    if STATE.enabled and (input.requires_grad or src.requires_grad) and reduce != "sum":
        raise NotImplementedError(f"scatter_reduce(reduce='{reduce}') is not differentiable here yet")
    d = norm_dim(dim, input.dim(), "scatter_reduce")
    base = input
    if not include_self:
        identity = {"sum": 0, "mean": 0, "prod": 1,
                    "amax": float("-inf") if input.dtype.is_floating_point else D.iinfo(input.dtype).min,
                    "amin": float("inf") if input.dtype.is_floating_point else D.iinfo(input.dtype).max}
        base = input.scatter(d, index, identity[reduce])
    if reduce == "mean":
        total = _scatter(base, d, index, src, "sum", SCATTER_ADD)
        ones = _api.ones_like(src)
        count = _scatter(_api.ones_like(input) if include_self else _api.zeros_like(input),
                         d, index, ones, "sum")
        count = _api.where(count == 0, _api.ones_like(count), count)
        r = total / count
        return r if input.dtype.is_floating_point else _api.div(total, count, rounding_mode="floor")
    return _scatter(base, d, index, src, modes[reduce], SCATTER_ADD if reduce == "sum" else None)


def index_select(input, dim, index, *, out=None):
    d = norm_dim(dim, input.dim(), "index_select")
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    index = index.reshape(-1)
    check_index(index, input._shape[d] if input.dim() else 1, "index_select", d, negative=False)
    return _index_select(input, d, index)


def _index_select(input, d, index):
    """index_select of a 1-d index already checked to be in [0, size)."""
    if input.dim() == 0:
        return input.reshape(1).expand(index._shape).clone() if index.numel() else input.reshape(1)[:0]
    shape = list(input._shape)
    shape[d] = index._shape[0]
    view = [1] * input.dim()
    view[d] = index._shape[0]
    return gather(input, d, index.reshape(view).expand(shape))


def index_add(input, dim, index, source, *, alpha=1):
    d = norm_dim(dim, input.dim(), "index_add")
    index = index.reshape(-1)
    if alpha != 1:
        source = source * alpha
    if input.dim() == 0:
        return input + source.sum()
    view = [1] * input.dim()
    view[d] = index._shape[0]
    return scatter_add(input, d, index.reshape(view).expand(source.shape), source)


def index_add_(self, dim, index, source, *, alpha=1):
    return self.copy_(index_add(self, dim, index, source, alpha=alpha)) if \
        (STATE.enabled and (self.requires_grad or source.requires_grad)) else \
        _index_add_raw(self, dim, index, source, alpha)


def _index_add_raw(self, dim, index, source, alpha):
    d = norm_dim(dim, self.dim(), "index_add_")
    index = index.reshape(-1)
    if alpha != 1:
        source = source * alpha
    if source.dtype is not self.dtype:
        source = source.to(self.dtype)
    view = [1] * self.dim()
    view[d] = index._shape[0]
    check_index(index, self._shape[d], "index_add_", d, negative=False, error=RuntimeError)
    idx = _positive(index, self._shape[d]).reshape(view).expand(source.shape)
    place = self._place
    idx, source = to_place(idx, place), to_place(source, place)
    if idx.numel():
        launch(SCATTER_PRIM, kernel_for(SCATTER_PRIM, place), place, (self._h, idx._h, source._h),
               {"dim": d, "reduce": "sum"}, (self.dtype,))
    self._vc()[0] += 1
    return self


def nonzero(input, *, out=None, as_tuple=False):
    count = int((input != 0).sum().item())
    place = input._place
    from .._run import apply
    coords = apply(NONZERO, place, (input,), (input._h,), (((count, input.dim()), D.int64),))
    if as_tuple:
        if input.dim() == 0:
            return (coords.reshape(-1) if count == 0 else _api.zeros(count, dtype=D.int64,
                                                                     device=input.device),)
        return tuple(coords[:, i] for i in range(input.dim()))
    return coords


def argwhere(input):
    return nonzero(input)


def masked_fill(input, mask, value):
    if not isinstance(mask, Tensor) or mask.dtype is not D.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{getattr(mask, 'dtype', type(mask).__name__)}")
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.dim()} dimension(s).")
        value = value.to(input.dtype)
    else:
        value = _api.tensor(value, dtype=input.dtype, device=input.device)
    return _api.where(mask, value, input)


def masked_fill_(self, mask, value):
    r = masked_fill(self, mask, value)
    if r._shape != self._shape:
        raise RuntimeError(f"masked_fill_: the mask of shape {list(mask._shape)} can't be broadcast "
                           f"to self's shape {list(self._shape)}")
    return self.copy_(r)


def masked_select(input, mask):
    shape = broadcast_shapes(input._shape, mask._shape)
    return input.expand(shape)[mask.expand(shape)]


# -- __getitem__ -------------------------------------------------------------------------------------

def _as_index_tensor(item, device):
    if isinstance(item, Tensor):
        return item
    arr = np.asarray(item)
    if arr.dtype == np.bool_:
        return _api.tensor(arr, device=device)
    if arr.dtype.kind not in "iu" and not (arr.size == 0):
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return _api.tensor(arr.astype(np.int64), device=device)


def _parse(x, key):
    """Split a key into basic geometry steps and advanced (dim, index tensor) pairs."""
    if not isinstance(key, tuple):
        key = (key,)
    items = []
    for k in key:
        if isinstance(k, (list, np.ndarray)) or (isinstance(k, Tensor) and k.dim() > 0) or \
                (isinstance(k, Tensor) and k.dtype is D.bool_):
            t = _as_index_tensor(k, x.device)
            if t.dtype is D.bool_:
                if t.dim() == 0:
                    items.append("bool1" if bool(t.item()) else "bool0")
                    continue
                items.extend(("adv", c) for c in _mask_coords(t))
            else:
                if t.dtype.is_floating_point:
                    raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
                items.append(("adv", t))
        elif isinstance(k, Tensor):
            items.append(int(k.item()) if not k.dtype.is_floating_point else _bad_index(k))
        elif isinstance(k, bool):
            items.append("bool1" if k else "bool0")
        else:
            items.append(k)
    return items


def _bad_index(k):
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                     "Variables are valid indices")


def _mask_coords(mask):
    coords = nonzero(mask)
    return [coords[:, i] for i in range(mask.dim())]


def _consumes(item):
    if item is None or item is Ellipsis or isinstance(item, str):
        return 0
    return 1


def _expand_items(x, items):
    used = sum(_consumes(i) for i in items)
    if sum(1 for i in items if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if used > x.dim():
        raise IndexError(f"too many indices for tensor of dimension {x.dim()}")
    out = []
    for i in items:
        if i is Ellipsis:
            out.extend([slice(None)] * (x.dim() - used))
        else:
            out.append(i)
    if Ellipsis not in items:
        out.extend([slice(None)] * (x.dim() - used))
    return out


def _geometry(items, shape, stride, offset):
    """Apply the basic items; advanced ones keep their dim. Returns the view geometry
    and, for each advanced item, its dim in the view."""
    out_shape, out_stride, adv = [], [], []
    d = 0
    for it in items:
        if it is None or it in ("bool1", "bool0"):
            out_shape.append(1 if it != "bool0" else 0)
            out_stride.append(0)
            continue
        if isinstance(it, tuple):
            adv.append((len(out_shape), it[1]))
            out_shape.append(shape[d])
            out_stride.append(stride[d])
            d += 1
            continue
        n = shape[d]
        if isinstance(it, slice):
            start, stop, step = it.start, it.stop, it.step
            step = 1 if step is None else operator.index(step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            start, stop, _ = slice(start, stop, step).indices(n)
            size = max(0, -(-(stop - start) // step))
            if size:
                offset += start * stride[d]
            out_shape.append(size)
            out_stride.append(stride[d] * step)
        else:
            try:
                i = operator.index(it)
            except TypeError:
                _bad_index(it)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for dimension {d} with size {n}")
            offset += (i + n if i < 0 else i) * stride[d]
        d += 1
    return tuple(out_shape), tuple(out_stride), offset, adv


def getitem(self, key):
    tk = type(key)
    if tk is int and self._shape:               # the common cases, kept cheap
        return select(self, 0, key)
    if tk is slice and self._shape:
        return _slice0(self, key)
    items = _expand_items(self, _parse(self, key))
    from .._run import strides_of
    shape, stride, offset, adv = _geometry(items, self._shape, strides_of(self), self._offset)
    v = _sub_view(self, shape, stride, offset, lambda s, st, o: _geometry(items, s, st, o)[:3])
    if not adv:
        return v
    return _advanced(v, adv)


def _slice0(x, key):
    """x[a:b:c] on dim 0."""
    n = x._shape[0]
    step = 1 if key.step is None else operator.index(key.step)
    if step <= 0:
        raise ValueError("step must be greater than zero")
    start, stop, _ = key.indices(n) if (key.start is not None or key.stop is not None) \
        else (0, n, step)
    size = max(0, -(-(stop - start) // step))
    st = x._stride
    if st is None:
        st = contiguous_strides(x._shape)
    offset = x._offset + start * st[0] if size else x._offset
    v = make_view(x, (size,) + x._shape[1:], (st[0] * step,) + st[1:], offset)
    if STATE.enabled and x._rg:
        lst = contiguous_strides(x._shape)
        record(SLICE, (x,), {"size": v._shape, "stride": (lst[0] * step,) + lst[1:],
                             "storage_offset": start * lst[0] if size else 0,
                             "input_shape": x._shape}, (v,))
    return v


def _advanced(v, adv):
    dims = [d for d, _ in adv]
    sizes = [v._shape[d] for d in dims]
    idx = [_positive_checked(t, n, d) for (d, t), n in zip(adv, sizes)]
    place = v._place
    idx = [to_place(t, place) if t._place is not place else t for t in idx]
    bshape = broadcast_shapes(*(t._shape for t in idx))
    linear = None
    for t, n in zip(idx, sizes):
        linear = t if linear is None else linear * n + t
    linear = linear.expand(bshape)
    rest = [d for d in range(v.dim()) if d not in dims]
    u = v.permute(dims + rest)
    flat = u.reshape((numel(sizes),) + tuple(v._shape[d] for d in rest))
    out = _index_select(flat, 0, linear.reshape(-1))
    out = out.reshape(bshape + tuple(v._shape[d] for d in rest))
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    if adjacent and dims[0] > 0 and bshape:
        nb = len(bshape)
        out = out.movedim(list(range(nb)), list(range(dims[0], dims[0] + nb)))
    return out


def _positive_checked(t, n, d):
    if t.dtype is not D.int64:
        t = t.long()
    check_index(t, n, "index", d)
    return _positive(t, n)


# -- __setitem__ --------------------------------------------------------------------------------------

INDEX_PUT = register_op(OpDef(
    "index_put", kind="indexing", args=("x", "values"),
    decomp=lambda x, values, positions, accumulate: _index_put(x, values, positions, accumulate),
    grad=lambda g, positions, accumulate, needs: (
        (g if accumulate else g.reshape(-1).scatter(0, positions, 0.0).reshape(g.shape))
        if needs[0] else None,
        g.reshape(-1).gather(0, positions) if needs[1] else None)))


def _index_put(x, values, positions, accumulate):
    """A copy of x with values written at logical (row-major) positions."""
    out = x.clone().reshape(-1)
    _scatter_raw(out, positions, values.to(x.dtype), accumulate)
    return out.reshape(x.shape)


def _scatter_raw(flat, positions, values, accumulate):
    place = flat._place
    positions, values = to_place(positions, place), to_place(values, place)
    if positions.numel():
        launch(SCATTER_PRIM, kernel_for(SCATTER_PRIM, place), place,
               (flat._h, positions._h, values._h), {"dim": 0, "reduce": "sum" if accumulate else "none"},
               (flat.dtype,))


def setitem(self, key, value, accumulate=False):
    if not isinstance(value, Tensor):
        if not isinstance(value, (numbers.Number, np.generic)):
            value = _api.tensor(value, dtype=self.dtype, device=self.device)
    items = _expand_items(self, _parse(self, key))
    from .._run import strides_of
    shape, stride, offset, adv = _geometry(items, self._shape, strides_of(self), self._offset)
    if not adv:
        v = make_view(self, shape, stride, offset)
        if STATE.enabled:
            v._view_vc = v._version[0]
            if self._rg:
                record(SLICE, (self,), _logical(items, self._shape), (v,))
        if isinstance(value, Tensor):
            v.copy_(value)
        else:
            v.fill_(value)
        return
    # advanced: logical positions of the selected elements, in result order
    positions = getitem(_api.arange(self.numel(), device=self.device).reshape(self._shape), key)
    if not isinstance(value, Tensor):
        value = _api.full((), value, dtype=self.dtype, device=self.device)
    values = value.to(self.dtype).expand(positions.shape) if value._shape != positions._shape \
        else value.to(self.dtype)
    positions = positions.reshape(-1)
    values = values.reshape(-1)
    from .._inplace import commit_inplace, inplace_needs_graph
    if inplace_needs_graph("index_put_", (self, values)):
        from .._run import decompose
        commit_inplace(self, decompose(INDEX_PUT, (self, values),
                                       {"positions": positions, "accumulate": accumulate}))
        return
    if self.is_contiguous() and self._base is None:
        flat = make_view(self, (self.numel(),), (1,), self._offset)
    else:
        positions = _storage_positions(self, positions)
        root = self._base if self._base is not None else self
        flat = make_view(self, (root.numel(),), (1,), 0)
    _scatter_raw(flat, positions, values, accumulate)
    self._vc()[0] += 1


def _logical(items, shape):
    ls, lst, loff, _ = _geometry(items, shape, contiguous_strides(shape), 0)
    return {"size": ls, "stride": lst, "storage_offset": loff, "input_shape": shape}


def _storage_positions(t, logical):
    """Map row-major positions in t to positions in its storage."""
    from .._run import strides_of
    pos = _api.full_like(logical, t._offset)
    rem = logical
    for n, st in zip(reversed(t._shape), reversed(strides_of(t))):
        pos = pos + (rem % n) * st
        rem = rem // n
    return pos


def index_put_(self, indices, values, accumulate=False):
    setitem(self, tuple(indices), values, accumulate)
    return self


def index_put(self, indices, values, accumulate=False):
    r = self.clone()
    return index_put_(r, indices, values, accumulate)


def take(input, index):
    flat = input.reshape(-1)
    return _index_select(flat, 0, _positive_checked(index.reshape(-1), flat.numel(), 0)).reshape(index.shape)


def take_along_dim(input, indices, dim=None):
    if dim is None:
        return take(input, indices)
    d = norm_dim(dim, input.dim(), "take_along_dim")
    shape = list(broadcast_shapes(input._shape[:d] + (1,) + input._shape[d + 1:],
                                  indices._shape[:d] + (1,) + indices._shape[d + 1:]))
    ishape, xshape = shape.copy(), shape.copy()
    ishape[d], xshape[d] = indices._shape[d], input._shape[d]
    return gather(input.expand(xshape), d, indices.expand(ishape))
