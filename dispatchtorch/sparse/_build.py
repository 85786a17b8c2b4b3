"""Making COO tensors and turning them back: torch.sparse_coo_tensor (checked as
PyTorch's check_invariants=True checks), Tensor.to_sparse, to_dense, coalesce. Index
bookkeeping runs on the host (numpy); values move only through public ops, so
gradients reach them."""
from __future__ import annotations

import math

import numpy as np

from .. import ops
from .._dtype import float32, float64, int64, promote_types
from .._tensor import Tensor
from ._coo import SparseCOOTensor


def _host_indices(indices):
    """indices as a host int64 array (PyTorch converts any real dtype to long)."""
    if isinstance(indices, SparseCOOTensor):
        raise TypeError("sparse_coo_tensor(): argument 'indices' must be a dense Tensor")
    a = indices.detach().cpu().numpy() if isinstance(indices, Tensor) else np.asarray(indices)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"sparse_coo_tensor(): indices of dtype {a.dtype} cannot be converted "
                        f"to int64")
    return a.astype(np.int64)


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None,
                      is_coalesced=None):
    """torch.sparse_coo_tensor: indices (sparse_dim, nnz), values (nnz, *dense_dims)."""
    idx = _host_indices(indices)
    if isinstance(values, Tensor):
        vals = values if dtype is None else values.to(dtype)
        if device is not None:
            vals = vals.to(device)
    else:
        vals = ops.tensor(values, dtype=dtype, device=device)
    if idx.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    sparse_dim, nnz = idx.shape
    if vals.dim() == 0:
        vals = vals.reshape(1)                      # PyTorch reads 0-d values as nnz 1
    if vals.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz}, nnz from values: {vals.shape[0]}")
    dense_dim = vals.dim() - 1
    if idx.size and idx.min() < 0:
        d = int(np.nonzero((idx < 0).any(axis=1))[0][0])
        raise RuntimeError(f"found negative index {int(idx[d].min())} for dim {d}")
    if size is None:
        size = tuple(int(m) + 1 for m in (idx.max(axis=1) if nnz else np.zeros(sparse_dim)))
        size += tuple(vals.shape[1:])
    else:
        size = tuple(int(n) for n in size)
        if len(size) != sparse_dim + dense_dim:
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: "
                               f"len(size) = {len(size)}, sparse_dim = {sparse_dim}, "
                               f"dense_dim = {dense_dim}")
        for d in range(sparse_dim):
            if nnz and idx[d].max() >= size[d]:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                                   f"{size[d]} but found index {int(idx[d].max())}")
        if tuple(vals.shape[1:]) != size[sparse_dim:]:
            raise RuntimeError(f"values has incorrect size, expected "
                               f"{[nnz, *size[sparse_dim:]]}, got {list(vals.shape)}")
    if requires_grad:
        vals = vals.detach().requires_grad_()
    elif vals.requires_grad:
        vals = vals.clone()     # not a leaf: the gradient goes on to the values' own graph
    i = ops.tensor(idx, dtype=int64, device=vals.device)
    return SparseCOOTensor(i, vals, size, coalesced=nnz <= 1)


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """Tensor.to_sparse of a dense tensor: its nonzero entries, coalesced (row-major)."""
    from .._layout import sparse_coo
    if layout is not None and layout is not sparse_coo:
        raise NotImplementedError(f"to_sparse: layout {layout!r} is not implemented (only "
                                  f"sparse_coo)")
    if sparse_dim is not None and sparse_dim != self.dim():
        raise NotImplementedError("to_sparse: sparse_dim other than dim() (hybrid COO) is not "
                                  "implemented")
    nz = ops.nonzero(self.detach())                 # (nnz, ndim), row-major order
    idx = nz.t().contiguous()
    vals = self[tuple(idx[d] for d in range(self.dim()))] if self.dim() else self.reshape(1)[nz[:, 0]]
    return SparseCOOTensor(idx, vals, tuple(self.shape), coalesced=True)


def linear_index(indices, size):
    """Row-major position of each entry among the sparse dims."""
    sparse_dim = indices.shape[0]
    strides = [math.prod(size[d + 1:sparse_dim]) for d in range(sparse_dim)]
    st = ops.tensor(strides, dtype=int64, device=indices.device)
    return (indices * st.unsqueeze(1)).sum(0)


def dense_of(s):
    sd = s.sparse_dim()
    rows = math.prod(s._size[:sd])
    flat = ops.zeros((rows,) + tuple(s._size[sd:]), dtype=s.dtype, device=s.device)
    if s._nnz():
        flat = flat.index_add(0, linear_index(s._indices_t, s._size), s._values_t)
    return flat.reshape(s._size)


def coalesced_parts(indices, values, size):
    sd = indices.shape[0]
    lin = linear_index(indices, size).cpu().numpy()
    uniq, inverse = np.unique(lin, return_inverse=True)
    idx = np.stack(np.unravel_index(uniq, size[:sd])) if sd else np.zeros((0, len(uniq)))
    dev = values.device
    out = ops.zeros((len(uniq),) + tuple(values.shape[1:]), dtype=values.dtype, device=dev)
    if len(uniq):
        out = out.index_add(0, ops.tensor(inverse.reshape(-1), dtype=int64, device=dev),
                            values)
    return ops.tensor(idx.reshape(sd, -1), dtype=int64, device=dev), out


def check_same_shape(a, b, op):
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError(f"{op}: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(a.shape)} while other has size {list(b.shape)} (FYI: "
                           f"dense-sparse addition does not currently support broadcasting)")


def sparse_add(a, b):
    """sparse + sparse: the entries of both, coalesced (PyTorch's result is coalesced)."""
    check_same_shape(a, b, "add")
    if a.sparse_dim() != b.sparse_dim():
        raise NotImplementedError("add: sparse COO tensors of different sparse_dim")
    dt = promote_types(a.dtype, b.dtype)
    idx = ops.cat([a._indices_t, b._indices_t], 1)
    vals = ops.cat([a._values_t.to(dt), b._values_t.to(dt)], 0)
    i, v = coalesced_parts(idx, vals, a._size)
    return SparseCOOTensor(i, v, a._size, True)


def rebuild_coo(indices, values, size, coalesced):
    """Unpickling a sparse COO tensor (SparseCOOTensor.__reduce_ex__)."""
    return SparseCOOTensor(indices, values, tuple(size), bool(coalesced))
