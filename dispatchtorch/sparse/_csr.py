"""A minimal 2-D CSR layout (torch.sparse_csr_tensor, Tensor.to_sparse_csr): row
pointers, column indices and values, to_dense, and products with a dense matrix (either
side, torch.mm / matmul / @), in public ops so gradients reach the values and the dense
operand on any backend. Index bookkeeping (row of each entry) runs on the host."""
from __future__ import annotations

import numpy as np

from .. import ops
from .._dtype import float32, float64, int64
from .._layout import sparse_csr
from .._shape import Size
from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled
from ._coo import SparseCOOTensor, SparseProducts, _DENSE_STATE, _calling_op, _inner


def _host(x, arg):
    if isinstance(x, Tensor) and x.layout is not Tensor.layout:
        raise TypeError(f"sparse_csr_tensor(): argument '{arg}' must be a dense Tensor")
    a = x.detach().cpu().numpy() if isinstance(x, Tensor) else np.asarray(x)
    if a.dtype.kind not in "biu":
        raise TypeError(f"sparse_csr_tensor(): {arg} of dtype {a.dtype} must be an integer "
                        f"tensor")
    return a.astype(np.int64)


def _check(crow, col, nnz, size):
    if crow.ndim != col.ndim:
        raise RuntimeError(f"crow_indices and col_indices dimensionalities must be equal but got "
                           f"{crow.ndim} and {col.ndim}, respectively")
    if crow.ndim != 1:
        raise NotImplementedError("sparse_csr_tensor: batched CSR (crow_indices of more than "
                                  "one dimension) is not implemented")
    if col.shape[-1] != nnz:
        raise RuntimeError(f"col_indices.shape[-1] must be equal to nnz (={nnz}) as defined by "
                           f"values.shape[0], but got {col.shape[-1]}")
    if len(size) != 2:
        raise RuntimeError(f"tensor dimensionality must be sum of batch, base, and dense "
                           f"dimensionalities (=0 + 2 + 0) but got {len(size)}")
    if crow.shape[-1] != size[0] + 1:
        raise RuntimeError(f"crow_indices.shape[-1] must be equal to the number of rows + 1 "
                           f"(={size[0] + 1}), but got {crow.shape[-1]}")
    if crow[0] != 0:
        raise RuntimeError("`crow_indices[..., 0] == 0` is not satisfied.")
    if crow[-1] != nnz:
        raise RuntimeError("`crow_indices[..., -1] == nnz` is not satisfied.")
    step = np.diff(crow)
    if step.size and (step.min() < 0 or step.max() > size[1]):
        raise RuntimeError("`0 <= crow_indices[..., 1:] - crow_indices[..., :-1] <= ncols` is "
                           "not satisfied.")
    if nnz and (col.min() < 0 or col.max() >= size[1]):
        raise RuntimeError("`0 <= col_indices < ncols` is not satisfied.")


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None,
                      device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None):
    """torch.sparse_csr_tensor of a 2-D matrix (no batch or dense dims); its invariants
    are always checked (PyTorch checks them under check_invariants=True)."""
    crow, col = _host(crow_indices, "crow_indices"), _host(col_indices, "col_indices")
    if isinstance(values, Tensor):
        vals = values if dtype is None else values.to(dtype)
        if device is not None:
            vals = vals.to(device)
    else:
        vals = ops.tensor(values, dtype=dtype, device=device)
    if vals.dim() != 1:
        raise NotImplementedError("sparse_csr_tensor: values of more than one dimension "
                                  "(dense dims) are not implemented")
    nnz = vals.shape[0]
    if size is None:
        if crow.ndim != 1:
            _check(crow, col, nnz, (0, 0))
        size = (len(crow) - 1, int(col.max()) + 1 if col.size else 0)
    size = tuple(int(n) for n in size)
    _check(crow, col, nnz, size)
    if requires_grad:
        vals = vals.detach().requires_grad_()
    elif vals.requires_grad:
        vals = vals.clone()
    dev = vals.device
    return SparseCSRTensor(ops.tensor(crow, dtype=int64, device=dev),
                           ops.tensor(col, dtype=int64, device=dev), vals, size)


class SparseCSRTensor(SparseProducts, Tensor):
    """A 2-D sparse CSR matrix (layout sparse_csr), as torch.sparse_csr_tensor makes."""

    is_sparse = False              # as PyTorch: is_sparse is COO's alone
    is_sparse_csr = True
    layout = sparse_csr

    def __init__(self, crow, col, values, size):
        self._crow_t, self._col_t, self._values_t = crow, col, values
        self._size = tuple(size)

    def __getattr__(self, name):
        if name in _DENSE_STATE:          # (not SparseOperand: no op has a CSR form)
            raise NotImplementedError(
                f"{_calling_op()}: not implemented for sparse CSR tensors (layout "
                f"sparse_csr); dispatchtorch's CSR tensors support to_dense, to_sparse and "
                f"products with a dense matrix; call .to_dense() first")
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def shape(self):
        return Size(self._size)

    def size(self, dim=None):
        if dim is None:
            return Size(self._size)
        from .._shape import norm_dim
        return self._size[norm_dim(dim, 2, "size")]

    dtype = property(lambda self: self._values_t.dtype)
    device = property(lambda self: self._values_t.device)
    is_cpu = property(lambda self: self._values_t.is_cpu)
    is_cuda = property(lambda self: self._values_t.is_cuda)
    ndim = property(lambda self: 2)

    def dim(self):
        return 2

    def numel(self):
        return self._size[0] * self._size[1]

    def __len__(self):
        return self._size[0]

    def _nnz(self):
        return self._values_t.shape[0]

    def sparse_dim(self):
        return 2

    def dense_dim(self):
        return 0

    def crow_indices(self):
        return self._crow_t

    def col_indices(self):
        return self._col_t

    def values(self):
        return self._values_t

    # -- autograd: the values carry it ---------------------------------------------------
    requires_grad = property(lambda self: self._values_t.requires_grad,
                             lambda self, flag: self.requires_grad_(flag))
    is_leaf = property(lambda self: self._values_t.is_leaf)
    grad_fn = property(lambda self: self._values_t.grad_fn)

    def requires_grad_(self, requires_grad=True):
        self._values_t.requires_grad_(requires_grad)
        return self

    def detach(self):
        return SparseCSRTensor(self._crow_t, self._col_t, self._values_t.detach(), self._size)

    # -- conversions ---------------------------------------------------------------------
    def _rows(self):
        """The row of each entry (host bookkeeping from the row pointers)."""
        crow = self._crow_t.cpu().numpy()
        rows = np.repeat(np.arange(self._size[0], dtype=np.int64), np.diff(crow))
        return ops.tensor(rows, dtype=int64, device=self._values_t.device)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        """The same matrix as a coalesced COO tensor (CSR's entries are row-major)."""
        from .._layout import sparse_coo
        if layout is not None and layout is not sparse_coo:
            if layout is sparse_csr:
                return self
            raise NotImplementedError(f"to_sparse: layout {layout!r} is not implemented")
        idx = ops.stack([self._rows(), self._col_t])
        return SparseCOOTensor(idx, self._values_t, self._size, True)

    def to_sparse_csr(self, dense_dim=None):
        return self

    def to_dense(self, dtype=None, *, masked_grad=None):
        return self.to_sparse().to_dense(dtype)

    def to(self, *args, **kwargs):
        kwargs.pop("non_blocking", None)
        if kwargs.pop("copy", False) or kwargs.pop("memory_format", None) is not None:
            raise NotImplementedError("to: copy= / memory_format= of a sparse CSR tensor is "
                                      "not implemented")
        v = self._values_t.to(*args, **kwargs)
        if v is self._values_t:
            return self
        return SparseCSRTensor(self._crow_t.to(v.device), self._col_t.to(v.device), v,
                               self._size)

    def cpu(self):
        return self.to("cpu")

    def double(self):
        return self.to(float64)

    def float(self):
        return self.to(float32)

    def clone(self, *, memory_format=None):
        return SparseCSRTensor(self._crow_t.clone(), self._col_t.clone(),
                               self._values_t.clone(), self._size)

    # -- products with a dense matrix ----------------------------------------------------
    @staticmethod
    def matmul_sparse(a, b, op):
        """torch.mm / matmul with a CSR operand (ops.linalg routes here on its layout)."""
        return csr_mm(a, b, op)

    def __reduce_ex__(self, protocol):
        return (rebuild_csr, (self._crow_t, self._col_t, self._values_t, self._size))

    def __repr__(self, *, tensor_contents=None):
        from .._dtype import get_default_dtype
        suffixes = [f"size={self._size}", f"nnz={self._nnz()}"]
        if self.device.type != "cpu":
            suffixes.insert(0, f"device='{self.device}'")
        if not (self.dtype is get_default_dtype() or self.dtype is int64
                or self.dtype.name == "bool"):
            suffixes.append(f"dtype={self.dtype!r}")
        suffixes.append(f"layout={sparse_csr!r}")
        if self.requires_grad:
            fn = self.grad_fn
            suffixes.append("requires_grad=True" if fn is None
                            else f"grad_fn=<{type(fn).__name__}>")
        body = (f"tensor(crow_indices={_inner(self._crow_t, 20)},\n"
                f"       col_indices={_inner(self._col_t, 19)},\n"
                f"       values={_inner(self._values_t, 14)}")
        return _add_suffixes(body, suffixes, 7)


def _add_suffixes(text, suffixes, indent, linewidth=80):
    """PyTorch's _tensor_str._add_suffixes: ", suffix" while the line stays within the
    print width, else a new indented line (its off-by-one line length kept)."""
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last + len(suffix) + 2 > linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    return "".join(parts) + ")"


def rebuild_csr(crow, col, values, size):
    """Unpickling a sparse CSR tensor (SparseCSRTensor.__reduce_ex__)."""
    return SparseCSRTensor(crow, col, values, tuple(size))


def _dense_operand(x, op, name):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(x).__name__}")
    if x.layout is not Tensor.layout:
        raise NotImplementedError(f"{op}: a sparse CSR operand with another sparse operand is "
                                  f"not implemented; call .to_dense() on one")
    if x.dim() not in (1, 2):
        raise NotImplementedError(f"{op}: a sparse CSR operand needs a 1-D or 2-D dense "
                                  f"operand, got {x.dim()}-D")


def csr_mm(a, b, op):
    """csr @ dense: out[rows] += values * dense[cols]; dense @ csr: out[:, cols] +=
    dense[:, rows] * values. A CSR leaf that requires grad has, in PyTorch, a dense
    gradient, which a values-only leaf cannot hold: that case raises."""
    s, d = (a, b) if isinstance(a, SparseCSRTensor) else (b, a)
    _dense_operand(d, op, "mat2" if s is a else "mat1")
    if s.requires_grad and s.is_leaf and is_grad_enabled():
        raise NotImplementedError(f"{op}: the gradient of a sparse CSR leaf is dense in PyTorch "
                                  f"and is not implemented here; make the CSR tensor from "
                                  f"values that require grad instead")
    if s.dtype is not d.dtype:
        raise RuntimeError(f"expected scalar type {s.dtype.pt_name} but found "
                           f"{d.dtype.pt_name}")
    vec = d.dim() == 1
    if s is a:
        m = d.unsqueeze(1) if vec else d
        if s._size[1] != m.shape[0]:
            raise RuntimeError(f"{op}: mat1 and mat2 shapes cannot be multiplied "
                               f"({s._size[0]}x{s._size[1]} and {m.shape[0]}x{m.shape[1]})")
        out = ops.zeros((s._size[0], m.shape[1]), dtype=m.dtype, device=m.device)
        if s._nnz():
            out = out.index_add(0, s._rows(), s._values_t.unsqueeze(1) *
                                m.index_select(0, s._col_t))
        else:
            out = out + 0 * m.sum()
        return out.squeeze(1) if vec else out
    m = d.unsqueeze(0) if vec else d
    if m.shape[1] != s._size[0]:
        raise RuntimeError(f"{op}: mat1 and mat2 shapes cannot be multiplied "
                           f"({m.shape[0]}x{m.shape[1]} and {s._size[0]}x{s._size[1]})")
    out = ops.zeros((m.shape[0], s._size[1]), dtype=m.dtype, device=m.device)
    if s._nnz():
        out = out.index_add(1, s._col_t, m.index_select(1, s._rows()) * s._values_t)
    else:
        out = out + 0 * m.sum()
    return out.squeeze(0) if vec else out


def to_sparse_csr(self, dense_dim=None):
    """Tensor.to_sparse_csr of a dense 2-D tensor (or a COO one): its nonzeros, row-major."""
    if dense_dim is not None:
        raise NotImplementedError("to_sparse_csr: dense_dim= is not implemented")
    if isinstance(self, SparseCOOTensor):
        c = self.coalesce()
        if c.dim() != 2 or c.sparse_dim() != 2:
            raise RuntimeError(f"to_sparse_csr: expected a 2-D sparse COO tensor without dense "
                               f"dims, got size {list(c._size)}")
        rows, cols, vals = c._indices_t[0], c._indices_t[1], c._values_t
    else:
        if self.dim() != 2:
            raise NotImplementedError(f"to_sparse_csr: only 2-D tensors are implemented (batched "
                                      f"CSR is not), got {self.dim()}-D")
        nz = ops.nonzero(self.detach())
        rows, cols = nz[:, 0], nz[:, 1]
        vals = self[rows, cols]
    n = self.shape[0]
    counts = np.bincount(rows.cpu().numpy(), minlength=n)
    crow = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return SparseCSRTensor(ops.tensor(crow, dtype=int64, device=vals.device), cols.clone(),
                           vals, tuple(self.shape))
