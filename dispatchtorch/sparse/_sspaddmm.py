"""torch.sspaddmm / smm / hspmm: sparse COO @ dense with a sparse result, laid out as
PyTorch's CPU kernels lay it out (SparseTensorMath.cpp): sspaddmm's result is input's
entries times beta, then for each row of mat1 that has an entry, that row of
alpha * (mat1 @ mat2) over every column, uncoalesced; hspmm's has one sparse dim (the
rows with an entry) and the product rows as dense values. The products run in public
ops (mat1's values scaled by alpha first, each term added in entry order as PyTorch's
axpy loop adds it), so gradients reach the values and mat2 (PyTorch has no derivative
for these ops)."""
from __future__ import annotations

from .. import ops
from .._dtype import int64
from .._tensor import Tensor
from ._coo import SparseCOOTensor
from ._matmul import _sparse_times_dense


def _matrices(op, mat1, mat2, argn):
    if not isinstance(mat2, Tensor):
        raise TypeError(f"{op}(): argument 'mat2' must be Tensor, not {type(mat2).__name__}")
    if mat1.sparse_dim() != 2:
        raise RuntimeError(f"{op}: Argument #2: matrices expected, got {mat1.sparse_dim()}D tensor")
    if mat1.dense_dim() != 0:
        raise RuntimeError(f"{op}: Argument #2: scalar values expected, got {mat1.dense_dim()}D "
                           f"values")
    if mat2.dim() != 2:
        raise RuntimeError(f"{op}: Argument #{argn}: matrices expected, got {mat2.dim()}D tensor")


def _row_products(mat1, mat2, alpha, op):
    """The rows of mat1 that hold an entry (ascending) and alpha * (mat1 @ mat2) there."""
    s = mat1.coalesce()
    rows = ops.unique(s._indices_t[0]) if s._nnz() else s._indices_t[0]
    vals = s._values_t if alpha == 1 else s._values_t * alpha
    prod = _sparse_times_dense(SparseCOOTensor(s._indices_t, vals, s._size, True), mat2, op)
    return rows, prod.index_select(0, rows)


def sspaddmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2), sparse, with input's entries first."""
    if not isinstance(input, SparseCOOTensor):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    if not isinstance(mat1, SparseCOOTensor):
        raise RuntimeError(f"sspaddmm: expected 'mat1' to have sparse layout, got 'mat1' with "
                           f"layout {'Strided' if isinstance(mat1, Tensor) else type(mat1).__name__}")
    _matrices("sspaddmm", mat1, mat2, 3)
    (i, j), k = mat1.shape, mat2.shape[1]
    if mat2.shape[0] != j:
        raise RuntimeError(f"sspaddmm: Argument #3: Expected dim 0 size {j}, got {mat2.shape[0]}")
    if input.shape[0] != i:
        raise RuntimeError(f"sspaddmm: Argument #1: Expected dim 0 size {i}, got {input.shape[0]}")
    if input.shape[1] != k:
        raise RuntimeError(f"sspaddmm: Argument #1: Expected dim 1 size {k}, got {input.shape[1]}")
    return _assemble(input._indices_t, input._values_t * beta, mat1, mat2, alpha, (i, k))


def smm(input, mat):
    """sparse @ dense as a sparse matrix: sspaddmm with no input entries."""
    if not isinstance(input, SparseCOOTensor):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    _matrices("sspaddmm", input, mat, 3)
    if mat.shape[0] != input.shape[1]:
        raise RuntimeError(f"sspaddmm: Argument #3: Expected dim 0 size {input.shape[1]}, got "
                           f"{mat.shape[0]}")
    empty = ops.zeros((2, 0), dtype=int64, device=input.device)
    return _assemble(empty, None, input, mat, 1, (input.shape[0], mat.shape[1]))


def _assemble(idx, vals, mat1, mat2, alpha, size):
    rows, block = _row_products(mat1, mat2, alpha, "sspaddmm")
    k = size[1]
    cols = ops.arange(k, device=rows.device)
    new_idx = ops.stack([rows.repeat_interleave(k), cols.repeat(rows.shape[0])])
    new_vals = block.reshape(-1)
    if vals is not None and vals.shape[0]:
        new_idx = ops.cat([idx, new_idx], 1)
        new_vals = ops.cat([vals.to(new_vals.dtype), new_vals])
    return SparseCOOTensor(new_idx, new_vals, size, new_vals.shape[0] <= 1)


def hspmm(mat1, mat2):
    """sparse @ dense as a hybrid COO tensor: one sparse dim (mat1's rows with an entry),
    each holding its dense product row."""
    if not isinstance(mat1, SparseCOOTensor):
        raise NotImplementedError("hspmm: 'mat1' must be a sparse COO tensor (PyTorch has no "
                                  "strided hspmm either)")
    _matrices("hspmm", mat1, mat2, 3)
    if mat2.shape[0] != mat1.shape[1]:
        raise RuntimeError(f"hspmm: Argument #3: Expected dim 0 size {mat1.shape[1]}, got "
                           f"{mat2.shape[0]}")
    rows, block = _row_products(mat1, mat2, 1, "hspmm")
    size = (mat1.shape[0], mat2.shape[1])
    return SparseCOOTensor(rows.reshape(1, -1), block, size, rows.shape[0] <= 1)


PUBLIC = {"sspaddmm": sspaddmm, "smm": smm, "hspmm": hspmm}
Tensor.sspaddmm = sspaddmm          # a strided self raises PyTorch's error
Tensor.smm = smm
