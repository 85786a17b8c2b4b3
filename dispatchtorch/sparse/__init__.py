"""torch.sparse: a COO layout (construction, coalesce, to_dense, elementwise arithmetic,
sum, softmax, transpose, sparse @ dense, pickling, all with autograd to the values) and a
minimal CSR. Everything else a sparse tensor is handed to raises NotImplementedError
naming the op; see docs/dropin.md ("Sparse tensors")."""
from .._tensor import Tensor
from ._build import sparse_coo_tensor, to_sparse
from ._coo import SparseCOOTensor
from ._csr import SparseCSRTensor, sparse_csr_tensor, to_sparse_csr
from ._matmul import sparse_mm
from . import _arith, _select  # noqa: F401  (bind the COO arithmetic and selection)
from . import _layout_accessors  # noqa: F401  (indices(), values(), ... on every layout)
from . import _sspaddmm  # noqa: F401  (Tensor.smm / sspaddmm; torch.smm ... at the root)
from ._reduce import log_softmax, softmax, sparse_sum as sum  # noqa: A004


def mm(mat1, mat2, reduce=None):
    """torch.sparse.mm: a sparse operand's gradient is sparse, on its nonzero pattern."""
    if reduce is not None:
        raise NotImplementedError("torch.sparse.mm: reduce= is not implemented")
    return sparse_mm(mat1, mat2, "mm")


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """torch.sparse.addmm: beta * mat + alpha * (mat1 @ mat2), mat1 sparse COO."""
    if not isinstance(mat1, SparseCOOTensor):
        raise TypeError(f"sparse.addmm(): argument 'mat1' must be a sparse COO tensor, not "
                        f"{type(mat1).__name__}")
    prod = sparse_mm(mat1, mat2, "addmm")
    return (mat if beta == 1 else mat * beta) + (prod if alpha == 1 else prod * alpha)


def _dense_to_dense(self, dtype=None, *, masked_grad=None):
    """Tensor.to_dense of a strided tensor: itself (PyTorch returns self)."""
    return self if dtype is None else self.to(dtype)


Tensor.to_sparse = to_sparse
Tensor.to_dense = _dense_to_dense
Tensor.to_sparse_csr = to_sparse_csr
SparseCOOTensor.to_sparse_csr = to_sparse_csr

__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax", "sparse_coo_tensor", "SparseCOOTensor",
           "sparse_csr_tensor", "SparseCSRTensor"]
