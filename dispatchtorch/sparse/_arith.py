"""Elementwise arithmetic on sparse COO tensors, as PyTorch's sparse kernels: ops that
keep zeros apply to the (coalesced) values; sparse * dense and sparse * sparse stay
sparse; dense + sparse is dense. All in public ops on the values, so gradients reach
them. Registered in _sparse_forms.FORMS for the function forms (torch.abs(s), ...)
and bound as SparseCOOTensor methods and operators."""
from __future__ import annotations

import numbers

import numpy as np

from .. import ops
from ..autograd.grad_mode import is_grad_enabled
from .._sparse_forms import FORMS
from .._tensor import Tensor
from .._dtype import int64
from .._shape import broadcast_shapes2
from ._coo import SparseCOOTensor
from ._build import check_same_shape, linear_index, sparse_add

# zero-preserving unary ops PyTorch's sparse COO kernels have (f(0) == 0): on the
# coalesced values, result coalesced
UNARY = ("abs", "sqrt", "relu", "sin", "tan", "tanh", "asin", "arcsin", "atan", "arctan",
         "sinh", "asinh", "arcsinh", "atanh", "arctanh", "expm1", "log1p", "trunc", "fix",
         "floor", "ceil", "round", "sign", "sgn", "square", "erf", "erfinv", "deg2rad",
         "rad2deg", "frac", "isnan", "isinf", "isposinf", "isneginf", "signbit",
         "nan_to_num", "absolute")

_ADD_DENSE = "add(sparse, dense) is not supported. Use add(dense, sparse) instead."


def _sparse(x):
    return isinstance(x, SparseCOOTensor)


def _no_out(out, op):
    if out is not None:
        raise NotImplementedError(f"{op}: out= with a sparse COO operand is not implemented")


def _scalar(x):
    """A Python number or a 0-d dense tensor: it scales every value."""
    return isinstance(x, numbers.Number) or isinstance(x, Tensor) and not x.is_sparse \
        and x.dim() == 0


def _unary(name):
    fn = getattr(ops, name)

    def op(input, *, out=None, **kwargs):
        _no_out(out, name)
        c = input.coalesce()
        return SparseCOOTensor(c._indices_t, fn(c._values_t, **kwargs), c._size, True)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"torch.{name} of a sparse COO tensor: on its coalesced values (f(0) = 0)."
    return op


def neg(input, *, out=None):
    _no_out(out, "neg")
    return SparseCOOTensor(input._indices_t, -input._values_t, input._size, input._coalesced)


def positive(input):
    return input


def mul(input, other, *, out=None):
    """sparse * scalar keeps the pattern; sparse * dense is sparse on the coalesced pattern
    (the dense operand broadcast to the sparse shape); sparse * sparse on the
    intersection of the patterns."""
    _no_out(out, "mul")
    if _sparse(input) and _sparse(other):
        return _mul_sparse(input, other)
    s, d = (input, other) if _sparse(input) else (other, input)
    if _scalar(d):
        return SparseCOOTensor(s._indices_t, s._values_t * d, s._size, s._coalesced)
    if not isinstance(d, Tensor):
        raise TypeError(f"mul(): argument 'other' must be Tensor or Number, not "
                        f"{type(d).__name__}")
    full = broadcast_shapes2(tuple(d.shape), s._size, "mul")
    if tuple(full) != s._size:
        raise NotImplementedError(f"mul: a dense operand of shape {list(d.shape)} broadcasting "
                                  f"the sparse COO operand of shape {list(s._size)} up to "
                                  f"{list(full)} is not implemented")
    c = s.coalesce()
    dx = d.expand(s._size)
    at = dx[tuple(c._indices_t[k] for k in range(c.sparse_dim()))]     # (nnz, *dense)
    return SparseCOOTensor(c._indices_t, c._values_t * at, s._size, s._coalesced)


def _mul_sparse(a, b):
    if a._size != b._size or a.sparse_dim() != b.sparse_dim():
        raise RuntimeError("sparse_binary_op_intersection_cpu(): expects sparse inputs with "
                           "equal dimensionality, number of sparse dimensions, and shape of "
                           "sparse dimensions")
    ca, cb = a.coalesce(), b.coalesce()
    la = linear_index(ca._indices_t, a._size).cpu().numpy()
    lb = linear_index(cb._indices_t, b._size).cpu().numpy()
    _, ia, ib = np.intersect1d(la, lb, assume_unique=True, return_indices=True)
    dev = a.device
    ia, ib = (ops.tensor(x, dtype=int64, device=dev) for x in (ia, ib))
    vals = ca._values_t.index_select(0, ia) * cb._values_t.index_select(0, ib)
    return SparseCOOTensor(ca._indices_t.index_select(1, ia), vals, a._size,
                           a._coalesced and b._coalesced)


def div(input, other, *, rounding_mode=None, out=None):
    """sparse / scalar (or a 0-d tensor) only, as PyTorch."""
    _no_out(out, "div")
    if rounding_mode is not None:
        raise NotImplementedError("div: rounding_mode= with a sparse COO operand is not "
                                  "implemented")
    if not _sparse(input):
        if isinstance(input, Tensor):
            raise RuntimeError(f"Sparse division requires a scalar or zero-dim dense tensor "
                               f"divisor (got shape {list(other.shape)} for divisor)")
        raise NotImplementedError("div: a scalar divided by a sparse COO tensor "
                                  "(reciprocal) is not implemented for sparse COO tensors")
    if not _scalar(other):
        shape = list(other.shape) if isinstance(other, Tensor) else []
        raise RuntimeError(f"Sparse division requires a scalar or zero-dim dense tensor "
                           f"divisor (got shape {shape} for divisor)")
    return SparseCOOTensor(input._indices_t, input._values_t / other, input._size,
                           input._coalesced)


def add(input, other, *, alpha=1, out=None):
    """dense + sparse is dense (same shape, no broadcasting); sparse + sparse is sparse and
    coalesced; sparse + dense raises as PyTorch."""
    if _sparse(input) and _sparse(other):
        _no_out(out, "add")
        return sparse_add(input, other if alpha == 1 else other * alpha)
    if _sparse(input):
        raise RuntimeError(_ADD_DENSE)
    if not isinstance(input, Tensor):
        check_same_shape(ops.tensor(input), other, "add")
    check_same_shape(input, other, "add")
    dense_leaf_grad(other, "add")
    return ops.add(input, other.to_dense(), alpha=alpha, out=out)


def dense_leaf_grad(s, op):
    """PyTorch's gradient of a sparse leaf through dense + sparse (as through torch.mm) is
    dense, every entry, which a values-only leaf cannot hold: refused, not made sparse."""
    if s.requires_grad and s.is_leaf and is_grad_enabled():
        raise NotImplementedError(f"{op}: the gradient of a sparse COO leaf through {op} is "
                                  f"dense in PyTorch and is not implemented here; "
                                  f"make the sparse tensor from values that require grad")


def sub(input, other, *, alpha=1, out=None):
    if _sparse(other) and not (_sparse(input) or isinstance(input, Tensor)):
        check_same_shape(ops.tensor(input), other, "add")
    if _sparse(input) and not _sparse(other):
        raise RuntimeError(_ADD_DENSE)
    return add(input, other, alpha=-alpha, out=out)


def add_(input, other, *, alpha=1):
    """dense.add_(sparse) (and dense += sparse): the dense tensor, in place."""
    if _sparse(input):
        raise NotImplementedError("add_: in-place ops on a sparse COO tensor are not implemented")
    check_same_shape(input, other, "add")
    return input.add_(other.to_dense(), alpha=alpha)


def sub_(input, other, *, alpha=1):
    return add_(input, other, alpha=-alpha) if not _sparse(input) else add_(input, other)


def pow(input, exponent, *, out=None):
    """sparse ** scalar (not 0: that would make the result dense), on the coalesced values."""
    _no_out(out, "pow")
    if not _sparse(input) or isinstance(exponent, Tensor):
        raise NotImplementedError("pow: only a sparse COO base with a scalar exponent is "
                                  "implemented for sparse COO tensors")
    if exponent == 0:
        raise RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would make "
                           "the result tensor dense")
    c = input.coalesce()
    return SparseCOOTensor(c._indices_t, ops.pow(c._values_t, exponent), c._size, True)


def _reflected(fn):
    return lambda self, other: fn(other, self)


FUNCTIONS = {name: _unary(name) for name in UNARY}
FUNCTIONS.update({"neg": neg, "negative": neg, "mul": mul, "multiply": mul, "div": div,
                  "divide": div, "true_divide": div, "add": add, "sub": sub,
                  "subtract": sub, "add_": add_, "sub_": sub_, "pow": pow})
FORMS.update(FUNCTIONS)

for _name, _fn in FUNCTIONS.items():
    if not _name.endswith("_"):
        setattr(SparseCOOTensor, _name, _fn)
SparseCOOTensor.positive = positive
SparseCOOTensor.__neg__ = neg
SparseCOOTensor.__abs__ = FUNCTIONS["abs"]
SparseCOOTensor.__add__ = add
SparseCOOTensor.__radd__ = _reflected(add)
SparseCOOTensor.__sub__ = sub
SparseCOOTensor.__rsub__ = _reflected(sub)
SparseCOOTensor.__mul__ = mul
SparseCOOTensor.__rmul__ = _reflected(mul)
SparseCOOTensor.__truediv__ = div
SparseCOOTensor.__rtruediv__ = _reflected(div)
SparseCOOTensor.__pow__ = pow
SparseCOOTensor.__rpow__ = _reflected(pow)
