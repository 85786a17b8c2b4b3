"""Copies, casts, device transfers, fills and concatenation: the memory methods'
ops. Each is one of the backend's required memory methods plus autograd."""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from .._inplace import check_no_internal_overlap, commit_inplace, inplace_needs_graph
from .._run import operand_handle, record, same_place, to_device, to_place, wrap
from .._shape import broadcast_shapes2, norm_dim
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from ..dispatch import OpDef
from ..dispatch.registry import frontend_row
from ._out import check_tensor_list, takes_out
from . import creation, views
from .._layout import channels_last, channels_last_3d, contiguous_format, preserve_format
from .._layout import memory_format as _MemoryFormat
from .._output_strides import format_strides, suggested_format
from .casts import (CAST, CLONE, TRANSFER, _cast, _parse_to, _to_dtype,  # noqa: F401
                    cpu, cuda, type_)
from .casts import clone as _clone
from .casts import contiguous as _contiguous
from .casts import to as _to

# channels_last(_3d): the rank it needs and the permutation that puts C last
_CHANNELS_LAST_PERM = {channels_last: (4, (0, 2, 3, 1)), channels_last_3d: (5, (0, 2, 3, 4, 1))}

def _check_format(op, memory_format):
    if not isinstance(memory_format, _MemoryFormat):
        raise TypeError(f"{op}(): argument 'memory_format' must be torch.memory_format, "
                        f"not {type(memory_format).__name__}")


def _channels_last_copy(input, memory_format):
    """A copy with channels_last(_3d) strides: a C-last copy viewed back as NCHW (NCDHW),
    as ATen lays it out."""
    rank, perm = _CHANNELS_LAST_PERM[memory_format]
    if input.dim() != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {memory_format.name} format")
    back = tuple(perm.index(d) for d in range(rank))
    return views.permute(_clone(views.permute(input, perm), memory_format=contiguous_format), back)


def contiguous(input, memory_format=contiguous_format):
    """PyTorch's: self when already contiguous in that format, else a copy laid out so."""
    if memory_format is None or memory_format is contiguous_format:
        return _contiguous(input)
    _check_format("contiguous", memory_format)
    if input.is_contiguous(memory_format=memory_format):
        return input
    if memory_format is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return _channels_last_copy(input, memory_format)


def clone(input, *, memory_format=None):
    """A copy laid out as memory_format says: preserve_format (the default) keeps a dense
    input's strides (else dense in its dims' order), as PyTorch's."""
    if memory_format is not None:
        _check_format("clone", memory_format)
        if memory_format in _CHANNELS_LAST_PERM:
            return _channels_last_copy(input, memory_format)
    return _clone(input, memory_format=memory_format)


def to(input, *args, **kwargs):
    """Tensor.to; a memory_format other than preserve_format lays the result out so, as
    PyTorch's: self when nothing else changes and self's suggested format is that one
    (a transposed matrix is returned as it is for contiguous_format, as there)."""
    memory_format = kwargs.get("memory_format")
    r = _to(input, *args, **kwargs)
    if memory_format is None:
        return r
    _check_format("to", memory_format)
    if memory_format is preserve_format:
        return r
    if r is input and suggested_format(r._shape, r._stride) is memory_format:
        return r
    if memory_format is contiguous_format:
        return _contiguous(r)
    if format_strides("to", r._shape, None, memory_format) == r.stride():
        return r
    return _channels_last_copy(r, memory_format)


FILL = frontend_row("fill", kind="memory", grad=lambda g: creation.zeros_like(g),
                    signature="fill_(x, value)", doc="set every element to one value")


def _cat_grad(g, dim, sizes):
    return tuple(views.narrow(g, dim, start, n) for start, n in _offsets(sizes))


def _offsets(sizes):
    start = 0
    for n in sizes:
        yield start, n
        start += n


CAT = frontend_row("cat", kind="memory", args=("tensors",), differentiable=True,
                   grad=_cat_grad, signature="cat(tensors, dim=0)",
                   doc="concatenate along a dim (promoting dtypes); stack is cat of "
                       "unsqueezed tensors")


def copy_(self, src, non_blocking=False):
    """Copy src (broadcast, cast, moved) into self's memory."""
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' must be a Tensor, not {type(src).__name__}")
    check_no_internal_overlap(self, "copy_")
    if src._shape != self._shape:
        broadcast_shapes2(self._shape, src._shape, "copy_")
    return write_into(self, src)


def write_into(self, src):
    """copy_ without the overlap check, for the writes PyTorch allows into an expanded
    tensor (masked_fill_, index_fill_)."""
    broadcast_shapes2(self._shape, src._shape)
    if src._shape != self._shape and broadcast_shapes2(self._shape, src._shape) != self._shape:
        raise RuntimeError(f"copy_: the size of src {list(src._shape)} can't be broadcast to the "
                           f"size of self {list(self._shape)}")
    if inplace_needs_graph("copy_", (self, src)):
        r = src if src._place is self._place else to_device(src, self._place)
        if r._shape != self._shape:
            r = views.expand(r, self._shape)
        return commit_inplace(self, r if r._dtype is self._dtype else _cast(r, self._dtype),
                              replaces=True)
    place = self._place
    if src._place is not place:
        src = to_device(src, place)
    h = operand_handle(src, src._dtype, self._shape, place) if src._shape != self._shape else src._h
    place.bk.copy_(self._h, h)
    self._vc()[0] += 1
    return self


def fill_(self, value):
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.dim()} dimensions.")
        if inplace_needs_graph("fill_", (self, value)):
            return copy_(self, value)
        value = value.item()
    if inplace_needs_graph("fill_", (self,)):
        r = full_like_graph(self, value)
        return commit_inplace(self, r)
    self._place.bk.fill_(self._h, _fill_value(value, self._dtype))
    self._vc()[0] += 1
    return self


def _fill_value(value, dt):
    if isinstance(value, (bool, np.bool_)) or dt is D.bool_:
        return bool(value)
    if dt.is_complex:
        return complex(value)
    if dt.is_floating_point:
        return float(value)
    info = D.iinfo(dt)
    try:
        v = int(value)
    except (ValueError, OverflowError):       # NaN / inf into an integer tensor
        v = None
    if v is None or not info.min <= v <= info.max:     # checked here: no backend wraps it
        raise RuntimeError(f"fill_: value cannot be converted to type {dt.name} without overflow")
    return v


def full_like_graph(self, value):
    """A filled tensor connected to self's graph with a zero gradient (for fill_/zero_)."""
    place = self._place
    out = place.empty(self._shape, self._dtype.name, place.index)
    place.bk.fill_(out, _fill_value(value, self._dtype))
    r = wrap(out, self._shape, self._dtype, place)
    record(FILL, (self,), {}, (r,))
    return r


def zero_(self):
    return fill_(self, 0)


def tensor_list(tensors, op):
    """The `tensors` argument of cat/stack checked as PyTorch's parser does."""
    check_tensor_list(tensors, op, "tensors", 1, 0, op_in_element=True)
    return list(tensors)


@takes_out("cat", "inputs", "any")
def cat(tensors, dim=0, *, out=None):
    tensors = tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    if isinstance(dim, bool) or not isinstance(dim, int):
        norm_dim(dim, 1, "cat")         # PyTorch's parser: a wrong type before anything
    for i, t in enumerate(tensors):
        if not t._shape:
            raise RuntimeError(f"cat(): zero-dimensional tensor (at position {i}) cannot be "
                               f"concatenated")
    # legacy rule: 1-d empty tensors are skipped
    used = [t for t in tensors if not (t._shape == (0,))] or tensors[:1]
    ref = used[0]
    n = len(ref._shape)
    if n == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    # only legacy empties: PyTorch checks no dim (the result is empty along any)
    d = 0 if ref._shape == (0,) else norm_dim(dim, n, "cat")
    for i, t in enumerate(used):
        if len(t._shape) != n:
            raise RuntimeError(f"cat(): Tensors must have same number of dimensions: got {n} and "
                               f"{len(t._shape)}")
        for j in range(n):
            if j != d and t._shape[j] != ref._shape[j]:
                raise RuntimeError(f"cat(): Sizes of tensors must match except in dimension {d}. Expected "
                                   f"size {ref._shape[j]} but got size {t._shape[j]} for tensor "
                                   f"number {i} in the list.")
    place = same_place("cat", used)
    dt = used[0]._dtype
    for t in used[1:]:
        dt = dt._promote[t._dtype]
    sizes = tuple(t._shape[d] for t in used)
    shape = ref._shape[:d] + (sum(sizes),) + ref._shape[d + 1:]
    out = wrap(place.empty(shape, dt.name, place.index), shape, dt, place)
    with_grad = STATE.enabled
    STATE.enabled = False
    try:
        for (start, size), t in zip(_offsets(sizes), used):
            if size:
                region = views.narrow(out, d, start, size)
                t = to_place(t, place)
                place.bk.copy_(region._h, t._h)
    finally:
        STATE.enabled = with_grad
    if with_grad and any(t._rg for t in used):
        record(_cat_op(len(used)), tuple(used), {"dim": d, "sizes": sizes}, (out,))
    return out


_CAT_OPS = {}


def _cat_op(n):
    """cat's node differentiates n inputs; rows are made per arity on first use."""
    op = _CAT_OPS.get(n)
    if op is None:
        op = OpDef("cat", kind="memory", args=tuple(f"t{i}" for i in range(n)), grad=_cat_grad)
        _CAT_OPS[n] = op
    return op


@takes_out("stack", "inputs", "any")
def stack(tensors, dim=0, *, out=None):
    tensors = tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0]._shape
    norm_dim(dim, len(shape) + 1, "stack")
    for i, t in enumerate(tensors):
        if t._shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape)} at "
                               f"entry 0 and {list(t._shape)} at entry {i}")
    d = norm_dim(dim, len(shape) + 1, "stack")
    return cat([views.unsqueeze(t, d) for t in tensors], d)


concat = concatenate = cat
