"""The COO sparse tensor: int64 indices (sparse_dim, nnz) and dense values (nnz, *dense),
written in public ops so autograd reaches the values and any device that runs
index_select / index_add runs it. A Tensor subclass so isinstance(s, Tensor) holds as
in PyTorch; it has none of a dense tensor's storage attributes, so a dense op handed
one fails in __getattr__ with a NotImplementedError naming the op (no check is added
to the dense path)."""
from __future__ import annotations

import re
import sys

import numpy as np

from .. import ops
from .._dtype import float32, float64, int64
from .._layout import sparse_coo
from .._shape import Size
from .._tensor import Tensor

# what every dense op reads first; a sparse tensor has none of them
_DENSE_STATE = frozenset(("_h", "_shape", "_dtype", "_place"))


def _calling_op():
    """The outermost dispatchtorch function on the stack: the op the user called."""
    f, outer = sys._getframe(2), None
    while f is not None:
        mod = f.f_globals.get("__name__", "")
        if mod.startswith("dispatchtorch") and not mod.startswith("dispatchtorch.sparse"):
            outer = f
        f = f.f_back
    if outer is None:
        return "this op"
    name = outer.f_code.co_name
    if name in ("fn", "op", "wrapper", "inner", "<lambda>"):   # a generated op wrapper
        spec = outer.f_locals.get("spec")
        name = getattr(spec, "name", None) or outer.f_locals.get("name") or "this op"
    return name


class SparseCOOTensor(Tensor):
    """A sparse COO tensor (layout sparse_coo), as torch.sparse_coo_tensor makes."""

    is_sparse = True

    def __init__(self, indices, values, size, coalesced=False):
        # indices / values are already checked by the factory; no Tensor.__init__
        self._indices_t = indices
        self._values_t = values
        self._size = tuple(size)
        self._coalesced = coalesced

    def __getattr__(self, name):
        if name in _DENSE_STATE:
            raise NotImplementedError(
                f"{_calling_op()}: not implemented for sparse COO tensors (layout "
                f"sparse_coo); dispatchtorch's sparse tensors support to_dense, coalesce, "
                f"torch.sparse.mm / mm / matmul / @ with a dense operand and "
                f"dense + sparse; call .to_dense() first")
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    # -- identity ------------------------------------------------------------------------
    layout = sparse_coo

    @property
    def shape(self):
        return Size(self._size)

    def size(self, dim=None):
        if dim is None:
            return Size(self._size)
        from .._shape import norm_dim
        return self._size[norm_dim(dim, len(self._size), "size")]

    @property
    def dtype(self):
        return self._values_t.dtype

    @property
    def device(self):
        return self._values_t.device

    @property
    def is_cpu(self):
        return self._values_t.is_cpu

    @property
    def is_cuda(self):
        return self._values_t.is_cuda

    @property
    def ndim(self):
        return len(self._size)

    def dim(self):
        return len(self._size)

    def numel(self):
        return int(np.prod(self._size, dtype=np.int64))

    def __len__(self):
        if not self._size:
            raise TypeError("len() of a 0-d tensor")
        return self._size[0]

    def sparse_dim(self):
        return self._indices_t.shape[0]

    def dense_dim(self):
        return len(self._size) - self.sparse_dim()

    def _nnz(self):
        return self._indices_t.shape[1]

    def is_coalesced(self):
        return self._coalesced

    def _indices(self):
        return self._indices_t

    def _values(self):
        return self._values_t

    def indices(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._indices_t

    def values(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._values_t

    # -- autograd: the values carry it ---------------------------------------------------
    @property
    def requires_grad(self):
        return self._values_t.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad=True):
        self._values_t.requires_grad_(requires_grad)
        return self

    @property
    def is_leaf(self):
        return self._values_t.is_leaf

    @property
    def grad_fn(self):
        return self._values_t.grad_fn

    @property
    def grad(self):
        """A leaf's gradient (from torch.sparse.mm): sparse, on the coalesced pattern."""
        g = self._values_t.grad
        if g is None:
            return None
        c = self if self._coalesced else self.detach().coalesce()
        if not self._coalesced:
            g = g.index_select(0, _first_of_each(self))
        return SparseCOOTensor(c._indices_t, g, self._size, True)

    @grad.setter
    def grad(self, value):
        if value is not None:
            raise NotImplementedError("setting .grad of a sparse COO tensor is not implemented")
        self._values_t.grad = None

    def detach(self):
        return SparseCOOTensor(self._indices_t, self._values_t.detach(), self._size,
                               self._coalesced)

    # -- conversions ---------------------------------------------------------------------
    def coalesce(self):
        """Duplicates summed, indices sorted (row-major), as PyTorch's coalesce."""
        if self._coalesced:
            return self
        from ._build import coalesced_parts
        idx, vals = coalesced_parts(self._indices_t, self._values_t, self._size)
        return SparseCOOTensor(idx, vals, self._size, True)

    def to_dense(self, dtype=None, *, masked_grad=None):
        from ._build import dense_of
        d = dense_of(self)
        return d if dtype is None else d.to(dtype)

    def to_sparse(self, sparse_dim=None):
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise NotImplementedError("to_sparse: changing sparse_dim of a sparse COO tensor "
                                      "is not implemented")
        return self

    def to(self, *args, **kwargs):
        if kwargs.pop("copy", False) or kwargs.pop("memory_format", None) is not None:
            raise NotImplementedError("to: copy= / memory_format= of a sparse COO tensor is "
                                      "not implemented")
        kwargs.pop("non_blocking", None)
        v = self._values_t.to(*args, **kwargs)
        i = self._indices_t.to(v.device)
        if v is self._values_t and i is self._indices_t:
            return self
        return SparseCOOTensor(i, v, self._size, self._coalesced)

    def cpu(self):
        return self.to("cpu")

    def double(self):
        return self.to(float64)

    def float(self):
        return self.to(float32)

    def t(self):
        if self.sparse_dim() != 2 or self.dense_dim() != 0:
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, "
                               f"but self is {self.sparse_dim()} sparse and "
                               f"{self.dense_dim()} dense")
        return SparseCOOTensor(self._indices_t.flip(0), self._values_t,
                               self._size[::-1], False)

    # -- products and the dense + sparse sum ---------------------------------------------
    @staticmethod
    def matmul_sparse(a, b, op):
        """torch.mm / matmul with a sparse operand (ops.linalg routes here on is_sparse)."""
        from ._matmul import mm_entry
        return mm_entry(a, b, op)

    def mm(self, mat2):
        from ._matmul import mm_entry
        return mm_entry(self, mat2, "mm")

    def matmul(self, other):
        from ._matmul import mm_entry
        return mm_entry(self, other, "matmul")

    __matmul__ = matmul

    def __rmatmul__(self, other):
        from ._matmul import mm_entry
        return mm_entry(other, self, "matmul")

    def __add__(self, other):
        if isinstance(other, SparseCOOTensor):
            from ._build import sparse_add
            return sparse_add(self, other)
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                           "instead.")

    def __radd__(self, other):
        if not isinstance(other, Tensor):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                               "instead.")
        from ._build import check_same_shape
        check_same_shape(other, self, "add")
        return other + self.to_dense()

    add = __add__

    def __repr__(self, *, tensor_contents=None):
        return _coo_repr(self)

    def __reduce_ex__(self, protocol):
        raise NotImplementedError("pickling a sparse COO tensor is not implemented")


def _first_of_each(s):
    """For an uncoalesced s: the position of one entry of each distinct index, in
    coalesced order (every duplicate's gradient is the same dense-gradient entry)."""
    from ._build import linear_index
    lin = linear_index(s._indices_t, s._size).cpu().numpy()
    _, first = np.unique(lin, return_index=True)
    return ops.tensor(first, dtype=int64, device=s.device)


_DTYPE_SUFFIX = re.compile(r",\s*dtype=[\w.]+\)$")


def _inner(t, indent):
    text = _DTYPE_SUFFIX.sub(")", repr(t.detach()))
    if t.numel() == 0 and t.dim() == 1:
        text = "tensor([], size=(0,))"        # PyTorch's sparse repr names the empty size
    return text.replace("\n", "\n" + " " * indent)


def _coo_repr(s):
    from .._dtype import get_default_dtype
    parts = [f"size={tuple(s._size)}", f"nnz={s._nnz()}"]
    if s.device.type != "cpu":
        parts.insert(0, f"device='{s.device}'")
    dt = s.dtype
    if not (dt is get_default_dtype() or dt is int64 or dt.name == "bool"):
        parts.append(f"dtype={dt!r}")
    parts.append(f"layout={sparse_coo!r}")
    if s.requires_grad:
        fn = s.grad_fn
        parts.append("requires_grad=True" if fn is None else f"grad_fn=<{type(fn).__name__}>")
    return (f"tensor(indices={_inner(s._indices_t, 15)},\n"
            f"       values={_inner(s._values_t, 14)},\n"
            f"       {', '.join(parts)})")
