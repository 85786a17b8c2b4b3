"""The layout accessors every tensor has in PyTorch (indices, values, coalesce,
is_coalesced, crow/col/ccol/row_indices, sparse_dim, dense_dim, to_sparse_coo): a layout
that lacks one raises PyTorch's RuntimeError naming the accessor, the layout it expects
and the one it got. Bound on Tensor, so strided tensors and the CSR class inherit them;
the COO and CSR classes keep the ones they implement."""
from __future__ import annotations

from .._layout import sparse_coo, sparse_csr, strided
from .._tensor import Tensor

# PyTorch's names of the layouts, as its messages print them
_LAYOUT_NAMES = {strided: "Strided", sparse_coo: "Sparse", sparse_csr: "SparseCsr"}
_EXPECTS = {"coo": "sparse coordinate tensor layout", "sparse": "sparse tensor layout",
            "csr": "sparse row compressed tensor layout",
            "csc": "sparse column compressed tensor layout"}


def _refuse(name, expects):
    def accessor(self):
        raise RuntimeError(f"{name} expected {_EXPECTS[expects]} but got "
                           f"{_LAYOUT_NAMES.get(self.layout, self.layout)}")
    accessor.__name__ = accessor.__qualname__ = name
    accessor.__doc__ = f"Tensor.{name}: only a layout that has it answers (PyTorch's error)."
    return accessor


def _sparse_dim(self):
    """0 for a strided tensor: all its dims are dense."""
    return 0


def _dense_dim(self):
    return self.dim()


def to_sparse_coo(self):
    """Tensor.to_sparse_coo: PyTorch's alias of to_sparse()."""
    return self.to_sparse()


for _name, _expects in (("indices", "coo"), ("values", "sparse"), ("coalesce", "coo"),
                        ("is_coalesced", "coo"), ("crow_indices", "csr"),
                        ("col_indices", "csr"), ("ccol_indices", "csc"),
                        ("row_indices", "csc")):
    setattr(Tensor, _name, _refuse(_name, _expects))
Tensor.sparse_dim = _sparse_dim
Tensor.dense_dim = _dense_dim
Tensor.to_sparse_coo = to_sparse_coo
# (the COO class defines its COO accessors and the CSR class crow/col_indices, values,
# sparse_dim and dense_dim: each inherits the refusals of the others, as in PyTorch)
