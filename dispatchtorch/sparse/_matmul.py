"""sparse @ dense (and dense @ sparse, sparse @ sparse) in public ops: out = index_add over rows of
values * dense[cols], so the gradient reaches the dense operand and the values (on
exactly the nonzero pattern, as torch.sparse.mm's sparse gradient)."""
from __future__ import annotations

import numpy as np

from .. import ops
from .._dtype import int64
from ..autograd.grad_mode import is_grad_enabled
from .._tensor import Tensor
from ._build import coalesced_parts
from ._coo import SparseCOOTensor


def _dense_arg(x, op, name):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(x).__name__}")
    if x.is_sparse:
        raise NotImplementedError(f"{op}: sparse @ sparse is not implemented for sparse COO "
                                  f"tensors; call .to_dense() on one operand")
    if x.dim() != 2:
        raise NotImplementedError(f"{op}: a sparse COO operand needs a 2-D dense operand, got "
                                  f"{x.dim()}-D")


def _sparse_times_dense(s, d, op):
    if s.sparse_dim() != 2 or s.dense_dim() != 0:
        raise NotImplementedError(f"{op}: only 2-D sparse COO matrices (sparse_dim 2, "
                                  f"dense_dim 0) are implemented, got sparse_dim "
                                  f"{s.sparse_dim()}, dense_dim {s.dense_dim()}")
    if s.shape[1] != d.shape[0]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {s.shape[1]}, "
                           f"got {d.shape[0]}")
    if s.dtype is not d.dtype:
        raise RuntimeError(f"expected scalar type {s.dtype.pt_name} but found "
                           f"{d.dtype.pt_name}")
    if s.device != d.device:
        raise RuntimeError(f"{op}: expected all tensors to be on the same device, but found "
                           f"{s.device} and {d.device}")
    out = ops.zeros((s.shape[0], d.shape[1]), dtype=d.dtype, device=d.device)
    if not s._nnz():
        return out + 0 * d.sum()       # keeps the graph to d (its gradient: zeros)
    rows, cols = s._indices_t[0], s._indices_t[1]
    return out.index_add(0, rows, s._values_t.unsqueeze(1) * d.index_select(0, cols))


def _sparse_times_sparse(a, b, op):
    """sparse @ sparse: every product a[i, k] * b[k, j], summed into a coalesced sparse
    result (the pairs are matched on the host; the values multiply in public ops)."""
    for s in (a, b):
        if s.sparse_dim() != 2 or s.dense_dim() != 0:
            raise NotImplementedError(f"{op}: only 2-D sparse COO matrices (sparse_dim 2, "
                                      f"dense_dim 0) are implemented")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x"
                           f"{a.shape[1]} and {b.shape[0]}x{b.shape[1]})")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {a.dtype.pt_name} but found "
                           f"{b.dtype.pt_name}")
    ca, cb = a.coalesce(), b.coalesce()
    ia_idx, ib_idx = ca._indices_t.cpu().numpy(), cb._indices_t.cpu().numpy()
    starts = np.searchsorted(ib_idx[0], ia_idx[1], "left")    # b is row-major sorted
    counts = np.searchsorted(ib_idx[0], ia_idx[1], "right") - starts
    ia = np.repeat(np.arange(len(counts)), counts)
    first = np.cumsum(counts) - counts
    ib = starts[ia] + np.arange(len(ia)) - first[ia]
    dev = a.device
    ta, tb = (ops.tensor(x.astype(np.int64), dtype=int64, device=dev) for x in (ia, ib))
    idx = ops.tensor(np.stack([ia_idx[0][ia], ib_idx[1][ib]]).reshape(2, -1), dtype=int64,
                     device=dev)
    vals = ca._values_t.index_select(0, ta) * cb._values_t.index_select(0, tb)
    size = (a.shape[0], b.shape[1])
    i, v = coalesced_parts(idx, vals, size)
    return SparseCOOTensor(i, v, size, True)


def sparse_mm(a, b, op="mm"):
    """torch.sparse.mm: sparse @ dense, or dense @ sparse (= (sparseᵀ @ denseᵀ)ᵀ), or
    sparse @ sparse (sparse)."""
    if isinstance(a, SparseCOOTensor) and isinstance(b, SparseCOOTensor):
        return _sparse_times_sparse(a, b, op)
    if isinstance(a, SparseCOOTensor):
        _dense_arg(b, op, "mat2")
        return _sparse_times_dense(a, b, op)
    if isinstance(b, SparseCOOTensor):
        _dense_arg(a, op, "mat1")
        return _sparse_times_dense(b.t(), a.t(), op).t()
    return ops.mm(a, b)


def mm_entry(a, b, op):
    """torch.mm / matmul / spmm / @ with a sparse operand. Their gradient for a sparse
    leaf is dense in PyTorch (every entry of grad @ mat2ᵀ, not only the pattern), which
    a values-only leaf cannot hold: that case raises, pointing at torch.sparse.mm."""
    both = isinstance(a, SparseCOOTensor) and isinstance(b, SparseCOOTensor)
    for x in (a, b):           # (sparse @ sparse: PyTorch's gradient is sparse too)
        if isinstance(x, SparseCOOTensor) and x.requires_grad and x.is_leaf \
                and is_grad_enabled() and not both:
            raise NotImplementedError(
                f"{op}: the gradient of a sparse COO leaf through {op} is dense in PyTorch "
                f"and is not implemented here; use torch.sparse.mm (sparse gradient on the "
                f"nonzero pattern)")
    if op == "matmul":              # a dense vector on either side, as PyTorch's matmul
        if isinstance(b, Tensor) and not b.is_sparse and b.dim() == 1:
            return sparse_mm(a, b.unsqueeze(1), op).squeeze(1)
        if isinstance(a, Tensor) and not a.is_sparse and a.dim() == 1:
            return sparse_mm(a.unsqueeze(0), b, op).squeeze(0)
    return sparse_mm(a, b, op)
