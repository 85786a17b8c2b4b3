"""The subscript operators: __getitem__ / __setitem__ with PyTorch's rules, index_put,
take and take_along_dim. Basic indexing is a view; advanced indexing (tensors, lists,
bool masks) is an index_select over the indexed dims moved to the front (the gather /
scatter rows of ops/gather_scatter.py)."""
from __future__ import annotations

import numbers
import operator

import numpy as np

from .. import _dtype as D
from .._layout import contiguous_format
from .._run import decompose, kernel_for, launch, make_view, record, to_place
from .._shape import broadcast_shapes, broadcast_shapes2, contiguous_strides, norm_dim, numel
from .._shape import slice_indices
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from ..dispatch.registry import Forms, form_of
from ._composite import composite, written_forms
from .views import SLICE, _sub_view, select
from ._out import takes_out
from .gather_scatter import (INDEX_SELECT, SCATTER_PRIM, _INDEX_DTYPES, _gather, check_index, gather,
                             nonzero)
from ._bare_support import check_op as bare_check

# -- __getitem__ -------------------------------------------------------------------------------------

def _as_index_tensor(item, device):
    if isinstance(item, Tensor):
        return item
    arr = np.asarray(item)
    if arr.dtype == np.bool_:
        return creation.tensor(arr, device=device)
    if arr.dtype.kind not in "iu" and not (arr.size == 0):
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return creation.tensor(arr.astype(np.int64), device=device)


def _parse(x, key):
    """Split a key into basic geometry steps and advanced (dim, index tensor) pairs."""
    if not isinstance(key, tuple):
        key = (key,)
    items = []
    for k in key:
        if isinstance(k, (list, range, np.ndarray)) or (isinstance(k, Tensor) and k.dim() > 0) or \
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
            start, stop, _ = slice_indices(slice(start, stop, step), n)
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
        n = self._shape[0]
        if not -n <= key < n:                   # x[i]'s message, not select()'s
            raise IndexError(f"index {key} is out of bounds for dimension 0 with size {n}")
        return select(self, 0, key)
    if tk is slice and self._shape:
        return _slice0(self, key)
    if tk is Tensor and key._shape and key._dtype is not D.bool_ and self._shape \
            and not key._dtype.is_floating_point:
        flat = len(key._shape) == 1
        index = check_index(key if flat else key.reshape(-1), self._shape[0], "index", 0,
                            negative=True, error=IndexError)
        if index._place is not self._place:
            index = to_place(index, self._place)
        if len(self._shape) == 1:                   # index_select's gather, directly
            out = _gather(self, 0, index)
        else:
            out = decompose(INDEX_SELECT, (self, index), {"dim": 0})
        return out if flat else out.reshape(key._shape + self._shape[1:])
    items = _expand_items(self, _parse(self, key))
    from .._run import strides_of
    shape, stride, offset, adv = _geometry(items, self._shape, strides_of(self), self._offset)
    v = _sub_view(self, shape, stride, offset, lambda s, st, o: _geometry(items, s, st, o)[:3])
    if not adv:
        return v
    return _advanced(v, adv)


def _slice0(x, key):
    """x[a:b:c] on dim 0."""
    shape = x._shape
    n = shape[0]
    start, stop, step = key.start, key.stop, key.step
    plain = type(n) is int and (start is None or type(start) is int) and \
        (stop is None or type(stop) is int) and (step is None or type(step) is int)
    if step is None:
        step = 1
    else:
        step = operator.index(step)
        if step <= 0:
            raise ValueError("step must be greater than zero")
    if plain:               # plain ints (slice_indices' usual case, inline)
        start, stop, _ = key.indices(n)
        size = (stop - start + step - 1) // step if stop > start else 0
    else:
        start, stop, _ = slice_indices(key, n) if (start is not None or stop is not None) \
            else (0, n, step)
        size = max(0, -(-(stop - start) // step))
    st = x._stride
    if st is None:
        st = contiguous_strides(shape)
    offset = x._offset + start * st[0] if size else x._offset
    h = x._h
    # a CPU handle slices itself (numpy's basic slicing, the same bounds rules: 0.5 us
    # less than as_strided); not while a capture records the backend's as_strided (its
    # wrapper on the instance), nor with a dynamic capture's symbolic bounds, which
    # numpy would read as ints
    v = make_view(x, (size,) + shape[1:], (st[0] * step,) + st[1:], offset,
                  h[key] if plain and type(h) is np.ndarray
                  and "as_strided" not in x._place.bk.__dict__ else None)
    if STATE.enabled and x._rg:
        lst = contiguous_strides(shape)
        record(SLICE, (x,), {"size": v._shape, "stride": (lst[0] * step,) + lst[1:],
                             "storage_offset": start * lst[0] if size else 0,
                             "input_shape": shape}, (v,))
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
    out = decompose(INDEX_SELECT, (flat, linear.reshape(-1)), {"dim": 0})    # checked above
    out = out.reshape(bshape + tuple(v._shape[d] for d in rest))
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    if adjacent and dims[0] > 0 and bshape:
        nb = len(bshape)
        out = out.movedim(list(range(nb)), list(range(dims[0], dims[0] + nb)))
    return out


def _positive_checked(t, n, d):
    return check_index(t, n, "index", d, negative=True, error=IndexError)


# -- __setitem__ --------------------------------------------------------------------------------------

ONLY = Forms(written=True, inplace=False)   # the functions written below, no `_` form
INDEX_PUT = composite(
    "index_put", kind="indexing", args=("x", "values"), forms=Forms(written=True),
    decomp=lambda x, values, positions, accumulate: _index_put(x, values, positions, accumulate),
    grad=lambda g, positions, accumulate, needs: (
        (g if accumulate else g.reshape(-1).scatter(0, positions, 0.0).reshape(g.shape))
        if needs[0] else None,
        g.reshape(-1).gather(0, positions) if needs[1] else None))


def _index_put(x, values, positions, accumulate):
    """A copy of x with values written at logical (row-major) positions."""
    out = x.clone(memory_format=contiguous_format).reshape(-1)
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
            value = creation.tensor(value, dtype=self.dtype, device=self.device)
    items = _expand_items(self, _parse(self, key))
    from .._run import strides_of
    shape, stride, offset, adv = _geometry(items, self._shape, strides_of(self), self._offset)
    if adv and self._dtype.bare:     # PyTorch's masked_fill / index_put kernels
        mask = any(isinstance(k, Tensor) and k.dtype is D.bool_
                   for k in (key if isinstance(key, tuple) else (key,)))
        bare_check("masked_fill" if mask and not isinstance(value, Tensor) else "index_put",
                   self._dtype)
    if not adv:
        v = make_view(self, shape, stride, offset)
        if STATE.enabled:
            v._view_vc = v._vcount[0]
            if self._rg:
                record(SLICE, (self,), _logical(items, self._shape), (v,))
        if isinstance(value, Tensor):
            v.copy_(value)
        else:
            v.fill_(value)
        return
    # advanced: logical positions of the selected elements, in result order
    positions = getitem(creation.arange(self.numel(), device=self.device).reshape(self._shape), key)
    if not isinstance(value, Tensor):
        value = creation.full((), value, dtype=self.dtype, device=self.device)
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
    pos = creation.full_like(logical, t._offset)
    rem = logical
    for n, st in zip(reversed(t._shape), reversed(strides_of(t))):
        pos = pos + (rem % n) * st
        rem = rem // n
    return pos


@form_of(INDEX_PUT, inplace=True)
def index_put_(self, indices, values, accumulate=False):
    """self[indices] = values (+= with accumulate), checked as PyTorch's index_put_."""
    if self._dtype.bare:
        bare_check("index_put", self._dtype)
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put_(): argument 'indices' (position 1) must be tuple of "
                        f"Tensors, not {type(indices).__name__}")
    for i, t in enumerate(indices):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(f"index_put_(): expected Tensor as element {i} in argument 0, but "
                            f"got {type(t).__name__}")
        if t is not None and t._dtype not in _INDEX_DTYPES and t._dtype is not D.bool_:
            raise IndexError("index_put_(): tensors used as indices must be long, int, byte or "
                             "bool tensors")
    used = sum(t is not None for t in indices)
    if used > max(self.dim(), 1) or (used and not self.dim() and indices[0]._dtype is not D.bool_):
        raise IndexError(f"index_put_(): too many indices for tensor of dimension {self.dim()} "
                         f"(got {used})")
    for i, t in enumerate(indices):
        if t is not None and t.numel() and t._dtype not in (D.bool_, D.uint8) and self.dim() > i \
                and self._shape[i] == 0:
            raise IndexError("index_put_(): index is out of bounds for dimension with size 0")
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put_(): argument 'values' (position 2) must be Tensor, not "
                        f"{type(values).__name__}")
    if values._dtype is not self._dtype:
        raise RuntimeError(f"index_put_: Index put requires the source and destination dtypes "
                           f"match, got {self._dtype.pt_name} for the destination and "
                           f"{values._dtype.pt_name} for the source.")
    if indices and all(t is not None and t._dtype is not D.bool_ and t._dtype is not D.uint8
                       for t in indices) and len(indices) <= self.dim():
        # PyTorch checks the value's shape against the result's before any index
        result = tuple(broadcast_shapes(*(t._shape for t in indices))) + \
            tuple(self._shape[len(indices):])
        try:
            broadcast_shapes2(result, values._shape)
            ok = len(values._shape) <= len(result) and \
                broadcast_shapes2(result, values._shape) == result
        except RuntimeError:
            ok = False
        if not ok:
            raise RuntimeError(f"index_put_: shape mismatch: value tensor of shape "
                               f"{list(values._shape)} cannot be broadcast to indexing result of "
                               f"shape {list(result)}")
    if self.numel() == 0:       # nothing to write: PyTorch checks no index bounds then
        return self
    try:            # the positions are found before anything is written
        setitem(self, tuple(indices), values, accumulate)
    except IndexError as exc:
        raise IndexError(f"index_put_(): {exc}") from None
    return self


@form_of(INDEX_PUT)
def index_put(self, indices, values, accumulate=False):
    r = self.clone()
    return index_put_(r, indices, values, accumulate)


def _take(x, index):
    flat = x.reshape(-1)
    n = flat.numel()
    checked = check_index(index.reshape(-1), n, "take", negative=True, error=IndexError,
                          message=f"out of range: tried to access index {{i}} on a tensor of {n} "
                                  f"elements.")
    return decompose(INDEX_SELECT, (flat, checked), {"dim": 0}).reshape(index.shape)


TAKE = composite("take", kind="indexing", args=("x", "index"), decomp=_take, forms=ONLY,
                 signature="take(x, index)",
                 doc="x flattened, at index (the result has index's shape)")


@form_of(TAKE)
@takes_out("take", "exact", "any")
def take(input, index, *, out=None):
    if not isinstance(index, Tensor) or index.dtype.is_floating_point:
        raise RuntimeError("take(): Expected a long tensor for index")
    if input._dtype.bare:
        bare_check("take", input._dtype)
    return decompose(TAKE, (input, index), {})


def _take_along_dim(x, indices, dim):
    if dim is None:                   # PyTorch: gather of both flattened (a 1-d result)
        return gather(x.reshape(-1), 0, indices.reshape(-1))
    shape = list(broadcast_shapes(x._shape[:dim] + (1,) + x._shape[dim + 1:],
                                  indices._shape[:dim] + (1,) + indices._shape[dim + 1:]))
    ishape, xshape = shape.copy(), shape.copy()
    ishape[dim], xshape[dim] = indices._shape[dim], x._shape[dim]
    indices = indices.expand(ishape)
    if x._shape[dim]:                 # PyTorch wraps the indices modulo the dim's size
        indices = indices % x._shape[dim]
    return gather(x.expand(xshape), dim, indices)


TAKE_ALONG_DIM = composite(
    "take_along_dim", kind="indexing", args=("x", "indices"), decomp=_take_along_dim, forms=ONLY,
    signature="take_along_dim(x, indices, dim=None)",
    doc="gather with broadcasting of the other dims (flattened when dim is None)")


@form_of(TAKE_ALONG_DIM)
@takes_out("take_along_dim", dtype="exact")
def take_along_dim(input, indices, dim=None):
    if dim is not None:
        dim = norm_dim(dim, input.dim(), "take_along_dim")
        if input.dim() != indices.dim():
            raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                               f"number of dimensions, but got {input.dim()} dimensions for input, "
                               f"and {indices.dim()} dimensions for indices")
    return decompose(TAKE_ALONG_DIM, (input, indices), {"dim": dim})


# the function forms (torch.*) and the Tensor methods, from the rows above
FUNCTIONS, INPLACE = written_forms(vars())
PUBLIC = {**FUNCTIONS, **INPLACE}          # torch.index_put_ too, as PyTorch
METHODS = {**FUNCTIONS, **INPLACE}


# The op modules this one's derivative rules and decompositions call (at run time
# only). Imported last: they import this module in turn (see docs/architecture.md).
from . import creation  # noqa: E402
