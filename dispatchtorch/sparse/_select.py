"""Picking entries of a COO tensor: index_select along a sparse dim (the entries whose
index is selected, once per selection, uncoalesced as PyTorch's) and
dense.sparse_mask(sparse) (the dense tensor's entries at the mask's pattern). Matching
runs on the host; values move through index_select, so gradients reach them."""
from __future__ import annotations

import numpy as np

from .. import ops
from .._dtype import int64
from .._shape import norm_dim
from .._sparse_forms import FORMS
from .._tensor import Tensor
from ._coo import SparseCOOTensor


def index_select(input, dim, index, *, out=None):
    """torch.index_select of a sparse COO tensor along a sparse or a dense dim."""
    if out is not None:
        raise NotImplementedError("index_select: out= with a sparse COO operand is not "
                                  "implemented")
    d = norm_dim(dim, input.dim(), "index_select")
    if not isinstance(index, Tensor) or index.is_sparse or index.dim() > 1 \
            or index.dtype.name not in ("int64", "int32"):
        raise IndexError("index_select() argument index must be 1-D strided (non-sparse) "
                         "long-tensor.")
    sel = index.reshape(-1).cpu().numpy().astype(np.int64)
    n = input._size[d]
    if sel.size and (sel.min() < 0 or sel.max() >= n):     # (PyTorch drops negative ones)
        bad = sel[(sel < 0) | (sel >= n)][0]
        raise IndexError(f"index_select(): index contains {bad} that is out of range for "
                         f"tensor of size {list(input._size)} at dimension {d}")
    size = list(input._size)
    size[d] = len(sel)
    sd = input.sparse_dim()
    if d >= sd:
        at = ops.tensor(sel, dtype=int64, device=input.device)
        return SparseCOOTensor(input._indices_t, input._values_t.index_select(d - sd + 1, at),
                               size, input._coalesced)
    idx = input._indices_t.cpu().numpy()
    # for each selected position j (in order) the entries whose index along d is sel[j]
    order = np.argsort(idx[d], kind="stable")
    starts = np.searchsorted(idx[d][order], sel, "left")
    ends = np.searchsorted(idx[d][order], sel, "right")
    counts = ends - starts
    picks = np.concatenate([order[a:b] for a, b in zip(starts, ends)]) if len(sel) \
        else np.zeros(0, np.int64)
    new = idx[:, picks].copy()
    new[d] = np.repeat(np.arange(len(sel)), counts)
    dev = input.device
    at = ops.tensor(picks.astype(np.int64), dtype=int64, device=dev)
    return SparseCOOTensor(ops.tensor(new, dtype=int64, device=dev),
                           input._values_t.index_select(0, at), size, False)


def sparse_mask(self, mask):
    """Tensor.sparse_mask: self's entries at mask's pattern (mask's coalesced flag)."""
    if not isinstance(mask, SparseCOOTensor):
        raise NotImplementedError("sparse_mask: a mask that is not a sparse COO tensor is not "
                                  "implemented")
    if tuple(self.shape) != mask._size:
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(self.shape)} but mask has size {list(mask._size)}")
    at = self[tuple(mask._indices_t[k] for k in range(mask.sparse_dim()))]
    return SparseCOOTensor(mask._indices_t, at, mask._size, mask._coalesced)


FORMS["index_select"] = index_select
SparseCOOTensor.index_select = index_select
Tensor.sparse_mask = sparse_mask
