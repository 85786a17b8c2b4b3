"""torch.sparse: a minimal COO layout (construction, coalesce, to_dense, sparse @ dense
with autograd). Everything else a sparse tensor is handed to raises NotImplementedError
naming the op; see docs/dropin.md ("Sparse tensors")."""
from .._tensor import Tensor
from ._build import sparse_coo_tensor, to_sparse
from ._coo import SparseCOOTensor
from ._matmul import sparse_mm


def mm(mat1, mat2, reduce=None):
    """torch.sparse.mm: a sparse operand's gradient is sparse, on its nonzero pattern."""
    if reduce is not None:
        raise NotImplementedError("torch.sparse.mm: reduce= is not implemented")
    return sparse_mm(mat1, mat2, "mm")


def _dense_to_dense(self, dtype=None, *, masked_grad=None):
    """Tensor.to_dense of a strided tensor: itself (PyTorch returns self)."""
    return self if dtype is None else self.to(dtype)


Tensor.to_sparse = to_sparse
Tensor.to_dense = _dense_to_dense

__all__ = ["mm", "sparse_coo_tensor", "SparseCOOTensor"]
