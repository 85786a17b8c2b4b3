"""The `*_copy` forms functionalization gives the views that had none here yet: slice_copy,
split_copy, view_as_real_copy, view_as_complex_copy and the sparse accessors' copies
(indices, values, crow/col/row/ccol indices). Each is the view, then a fresh copy: the
same gradient as the view, no aliasing, `out=` as ATen's. PyTorch's own restrictions are
kept: view_as_complex_copy has no derivative for its complex result, and the accessor
copies have no kernel for a COO tensor (NotImplementedError there; on CSR they work)."""
from __future__ import annotations

import numbers

from .._shape import broadcast_shapes
from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled
from ..ops._out import check_out_list, takes_out, write_out
from ..ops.complex_ops import view_as_complex, view_as_real


def _int(v, fn, arg, pos):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be int, not "
                        f"{type(v).__name__}")
    return int(v)


def _self(input, fn):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input


def _wrap_dim(dim, ndim):
    lo, hi = -max(ndim, 1), max(ndim, 1) - 1
    if not lo <= dim <= hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], "
                         f"but got {dim})")
    return dim % max(ndim, 1)


@takes_out("slice_copy", dtype="exact")
def slice_copy(input, dim=0, start=None, end=None, step=1):
    """input[..., start:end:step, ...] along dim, copied (ATen's slice: bounds clamp)."""
    _self(input, "slice_copy")
    dim = _int(dim, "slice_copy", "dim", 2)
    start = None if start is None else _int(start, "slice_copy", "start", 3)
    end = None if end is None else _int(end, "slice_copy", "end", 4)
    step = _int(step, "slice_copy", "step", 5)
    if input.dim() == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.dim())
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return input[(slice(None),) * d + (slice(start, end, step),)].clone()


def split_copy(input, split_size, dim=0, *, out=None):
    """input.split(split_size, dim), each piece copied. With out= (a list or tuple of as
    many tensors) the pieces are copied into it as copy_ does (broadcast, cast) and the
    result is None, as ATen's split_copy.Tensor_out."""
    _self(input, "split_copy")
    split_size = _int(split_size, "split_copy", "split_size", 2)
    dim = _int(dim, "split_copy", "dim", 3)
    d = _wrap_dim(dim, input.dim())
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got "
                           f"split_size={split_size}")
    if split_size == 0 and input.shape[d] != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                           f"dimension size of {input.shape[d]}")
    if out is not None:
        check_out_list("split_copy", out, 3)
    pieces = input.split(split_size, d)
    if out is None:
        return tuple(p.clone() for p in pieces)
    if len(out) != len(pieces):
        raise RuntimeError(f"split_copy_Tensor_out() expected an out= argument of size "
                           f"{len(pieces)}, got size {len(out)}")
    for o, p in zip(out, pieces):
        if broadcast_shapes(o.shape, p.shape) != o.shape:
            raise RuntimeError(f"output with shape {list(o.shape)} doesn't match the "
                               f"broadcast shape {list(broadcast_shapes(o.shape, p.shape))}")
    for o, p in zip(out, pieces):
        o.copy_(p)
    return None


@takes_out("view_as_real_copy", dtype="exact")
def view_as_real_copy(input):
    return view_as_real(_self(input, "view_as_real_copy")).clone()


@takes_out("view_as_complex_copy", dtype="exact")
def view_as_complex_copy(input):
    """view_as_complex, copied. PyTorch declares no derivative for this copy's complex
    result, so a differentiable input raises as there."""
    r = view_as_complex(_self(input, "view_as_complex_copy"))
    if is_grad_enabled() and input.requires_grad:
        raise RuntimeError("view_as_complex_copy does not support automatic differentiation "
                           "for outputs with complex dtype.")
    return r.clone()


def _no_coo_kernel(name):
    """ATen registers the accessor copies for strided and CSR tensors only."""
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the 'SparseCPU' backend. This "
        f"could be because the operator doesn't exist for this backend, or was omitted "
        f"during the selective/custom build process (if using custom build).")


def _accessor_copy(accessor):
    name = accessor + "_copy"

    def fn(input, *, out=None):
        _self(input, name)
        if input.layout is _coo():
            raise _no_coo_kernel(name)
        # the sparse input holds no dense memory an out= could alias: no inputs to check
        return write_out(out, getattr(input, accessor)().clone(), name, (), "exact")
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Tensor.{accessor}() copied, as torch.{name} (the accessor's layout errors)."
    return fn


def _coo():
    from .. import sparse_coo
    return sparse_coo


PUBLIC = {"slice_copy": slice_copy, "split_copy": split_copy,
          "view_as_real_copy": view_as_real_copy, "view_as_complex_copy": view_as_complex_copy,
          "indices_copy": _accessor_copy("indices"),
          "values_copy": _accessor_copy("values"),
          **{a + "_copy": _accessor_copy(a) for a in (
              "crow_indices", "col_indices", "row_indices", "ccol_indices")}}
