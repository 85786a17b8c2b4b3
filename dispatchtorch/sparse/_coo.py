"""The COO sparse tensor: int64 indices (sparse_dim, nnz) and dense values (nnz, *dense),
written in public ops so autograd reaches the values and any device that runs
index_select / index_add runs it. A Tensor subclass so isinstance(s, Tensor) holds as
in PyTorch; it has none of a dense tensor's storage attributes, so a dense op handed
one fails in __getattr__ with SparseOperand, a NotImplementedError naming the op (no
check is added to the dense path); the function forms with a sparse implementation
catch it and call the one registered in _sparse_forms.FORMS."""
from __future__ import annotations

import re
import sys

import numpy as np

from .. import ops
from .._dtype import float32, float64, int64
from .._layout import sparse_coo
from .._shape import Size
from .._tensor import Tensor
from .._sparse_forms import SparseOperand

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


class SparseProducts:
    """mm, matmul and @ of a sparse layout, all through its class's
    matmul_sparse(a, b, op) (the entry ops.linalg calls for torch.mm / torch.matmul)."""

    __slots__ = ()

    def mm(self, mat2):
        return self.matmul_sparse(self, mat2, "mm")

    def matmul(self, other):
        return self.matmul_sparse(self, other, "matmul")

    __matmul__ = matmul

    def __rmatmul__(self, other):
        return self.matmul_sparse(other, self, "matmul")


class SparseCOOTensor(SparseProducts, Tensor):
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
            raise SparseOperand(
                f"{_calling_op()}: not implemented for sparse COO tensors (layout "
                f"sparse_coo); dispatchtorch's sparse tensors support the ops listed in "
                f"docs/dropin.md (\"Sparse tensors\"); call .to_dense() first")
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

    def long(self):
        return self.to(int64)

    def int(self):
        from .._dtype import int32
        return self.to(int32)

    def half(self):
        from .._dtype import float16
        return self.to(float16)

    def bool(self):
        from .._dtype import bool_
        return self.to(bool_)

    def cuda(self, device=None):
        return self.to("cuda" if device is None else device)

    def clone(self, *, memory_format=None):
        return SparseCOOTensor(self._indices_t.clone(), self._values_t.clone(), self._size,
                               self._coalesced)

    def t(self):
        if self.sparse_dim() > 2 or self.dense_dim() != 0:
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, "
                               f"but got {self.sparse_dim()} sparse and "
                               f"{self.dense_dim()} dense dimensions")
        return self.transpose(0, 1) if self.dim() == 2 else self

    def transpose(self, dim0, dim1):
        """Sparse dims swap index rows (uncoalesced after, as PyTorch); dense dims swap
        the values' dims; a sparse with a dense dim raises as PyTorch."""
        from .._shape import norm_dim
        n, sd = self.dim(), self.sparse_dim()
        d0, d1 = norm_dim(dim0, n, "transpose"), norm_dim(dim1, n, "transpose")
        if d0 == d1:
            return self
        size = list(self._size)
        size[d0], size[d1] = size[d1], size[d0]
        if d0 < sd and d1 < sd:
            rows = list(range(sd))
            rows[d0], rows[d1] = rows[d1], rows[d0]
            order = ops.tensor(rows, dtype=int64, device=self._indices_t.device)
            return SparseCOOTensor(self._indices_t.index_select(0, order), self._values_t,
                                   size, False)
        if d0 >= sd and d1 >= sd:
            return SparseCOOTensor(self._indices_t,
                                   self._values_t.transpose(d0 - sd + 1, d1 - sd + 1), size,
                                   self._coalesced)
        raise RuntimeError(f"sparse transpose: transposed dimensions must be sparse Got "
                           f"sparse_dim: {sd}, d0: {d0}, d1: {d1}")

    swapaxes = swapdims = transpose

    def sum(self, dim=None, keepdim=False, dtype=None):
        from ._reduce import sparse_sum
        if keepdim:
            raise NotImplementedError("sum: keepdim=True of a sparse COO tensor is not "
                                      "implemented")
        if dim is None:
            from ._arith import dense_leaf_grad
            dense_leaf_grad(self, "sum")
        elif dtype is None and not self.dtype.is_grad:
            dtype = int64                # as a dense sum: integers add up in int64
        return sparse_sum(self, dim, dtype=dtype)

    # -- products (arithmetic: _arith.py binds it) ---------------------------------------
    @staticmethod
    def matmul_sparse(a, b, op):
        """torch.mm / matmul with a sparse operand (ops.linalg routes here on is_sparse)."""
        from ._matmul import mm_entry
        return mm_entry(a, b, op)

    def __repr__(self, *, tensor_contents=None):
        return _coo_repr(self)

    def __reduce_ex__(self, protocol):
        """Pickled as its indices, values (dense tensors, pickled as any), size and
        coalesced flag; rebuilt by sparse._build.rebuild_coo."""
        from . import _build
        return (_build.rebuild_coo, (self._indices_t, self._values_t, self._size,
                                     self._coalesced))


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
