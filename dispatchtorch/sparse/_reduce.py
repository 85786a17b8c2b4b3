"""Reductions over a sparse COO tensor: torch.sparse.sum (all, or by dims: sparse while
a sparse dim is left, dense otherwise) and torch.sparse.softmax / log_softmax (over the
specified entries only, as PyTorch: a missing entry is -inf, not 0). Index grouping runs
on the host; the values go through public ops, so gradients reach them."""
from __future__ import annotations


import numpy as np

from .. import ops
from .._dtype import int64, to_dtype
from .._shape import norm_dim
from .._sparse_forms import FORMS
from ._coo import SparseCOOTensor


def _groups(indices, keep, size):
    """(group of each entry, number of groups, the kept sparse indices of each group)
    for the sparse dims `keep`."""
    idx = indices.cpu().numpy()
    if not keep:
        return np.zeros(idx.shape[1], np.int64), 1, np.zeros((0, 1), np.int64)
    sub = idx[list(keep)]
    lin = np.ravel_multi_index(tuple(sub), tuple(size[d] for d in keep)) if idx.shape[1] \
        else np.zeros(0, np.int64)
    uniq, inverse = np.unique(lin, return_inverse=True)
    kept = np.stack(np.unravel_index(uniq, tuple(size[d] for d in keep))) if len(uniq) \
        else np.zeros((len(keep), 0), np.int64)
    return inverse.reshape(-1), len(uniq), kept


def sparse_sum(input, dim=None, dtype=None):
    """torch.sparse.sum: a dense 0-d (all dims, or every sparse dim summed) or a sparse
    COO tensor of the dims left."""
    if not isinstance(input, SparseCOOTensor):
        raise TypeError(f"sparse.sum(): argument 'input' must be a sparse COO tensor, not "
                        f"{type(input).__name__}")
    v = input._values_t
    if dtype is not None:
        v = v.to(to_dtype(dtype))
    elif not v.dtype.is_grad and dim is None:
        v = v.to(int64)                  # sum of all of an integer tensor is int64
    if dim is None:
        return v.sum()
    dims = [norm_dim(d, input.dim(), "sum") for d in (dim if isinstance(dim, (tuple, list))
                                                       else (dim,))]
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {[d for d in dims if dims.count(d) > 1][0]} appears multiple "
                           f"times in the list of dims")
    sd = input.sparse_dim()
    dense_axes = tuple(d - sd + 1 for d in dims if d >= sd)
    if dense_axes:
        v = v.sum(dense_axes)
    keep = tuple(d for d in range(sd) if d not in dims)
    size_left = tuple(n for d, n in enumerate(input._size) if d not in dims)
    summed_sparse = [d for d in dims if d < sd]
    if not summed_sparse:
        return SparseCOOTensor(input._indices_t, v, size_left, input._coalesced)
    if not keep:
        return v.sum(0)                  # every sparse dim summed: dense
    group, n, kept = _groups(input._indices_t, keep, input._size)
    dev = v.device
    out = ops.zeros((n,) + tuple(v.shape[1:]), dtype=v.dtype, device=dev)
    if len(group):
        out = out.index_add(0, ops.tensor(group, dtype=int64, device=dev), v)
    return SparseCOOTensor(ops.tensor(kept, dtype=int64, device=dev), out, size_left, True)


def _softmax(input, dim, dtype, log, op):
    if not isinstance(input, SparseCOOTensor):
        raise TypeError(f"sparse.{op}(): argument 'input' must be a sparse COO tensor, not "
                        f"{type(input).__name__}")
    if not isinstance(dim, int):
        raise TypeError(f"sparse.{op}(): argument 'dim' must be int, not {type(dim).__name__}")
    d = norm_dim(dim, input.dim(), op)
    c = input.coalesce()
    v = c._values_t if dtype is None else c._values_t.to(to_dtype(dtype))
    if not v.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating point sparse tensor, got {v.dtype}")
    sd = c.sparse_dim()
    if d >= sd:                          # a dense dim: every entry's own dense softmax
        f = ops.log_softmax if log else ops.softmax
        return SparseCOOTensor(c._indices_t, f(v, d - sd + 1), c._size, True)
    keep = tuple(k for k in range(sd) if k != d)
    group, n, _ = _groups(c._indices_t, keep, c._size)
    if not len(group):
        return SparseCOOTensor(c._indices_t, v, c._size, True)
    host = v.detach().cpu().numpy()
    peak = np.full((n,) + host.shape[1:], -np.inf, host.dtype)
    np.maximum.at(peak, group, host)     # the shift: softmax does not depend on it
    dev = v.device
    g = ops.tensor(group, dtype=int64, device=dev)
    shifted = v - ops.tensor(peak, dtype=v.dtype, device=dev).index_select(0, g)
    e = shifted.exp()
    den = ops.zeros((n,) + tuple(v.shape[1:]), dtype=v.dtype, device=dev).index_add(0, g, e)
    out = shifted - den.log().index_select(0, g) if log else e / den.index_select(0, g)
    return SparseCOOTensor(c._indices_t, out, c._size, True)


def softmax(input, dim, *, dtype=None):
    """torch.sparse.softmax: over the specified entries along dim (missing ones are -inf)."""
    return _softmax(input, dim, dtype, False, "softmax")


def log_softmax(input, dim, *, dtype=None):
    """torch.sparse.log_softmax: log of sparse.softmax, computed stably."""
    return _softmax(input, dim, dtype, True, "log_softmax")


def _sum_form(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """torch.sum / Tensor.sum of a sparse COO tensor (torch.sparse.sum's result)."""
    if out is not None:
        raise NotImplementedError("sum: out= with a sparse COO operand is not implemented")
    return input.sum(dim, keepdim, dtype)


FORMS.update({"sum": _sum_form, "t": lambda input: input.t(),
              "transpose": lambda input, dim0, dim1: input.transpose(dim0, dim1)})
