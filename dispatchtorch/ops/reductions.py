"""Reductions: the frontend normalises dims and dtypes, the kernel reduces.

sum, prod, amax, amin, argmax and argmin are prims; mean, max, min, all, any,
aminmax, count_nonzero and the nan-ignoring forms are composites over them.
"""
from __future__ import annotations

from .. import _dtype as D
from .. import return_types
from .._run import apply
from .._shape import check_dim_arg, check_keepdim, norm_dim, norm_dims, numel, reduced_shape
from .._tensor import Tensor
from ._composite import composite, run
from ._args import check_tensor, write_out  # noqa: F401  (reductions.check_tensor)
from .reduction_prims import (AMAX, AMIN, ARGMAX, ARGMIN, LOWP, SUM, _ALL_DIMS,  # noqa: F401
                              _dims, _geometry, _reduce, _sum_dtype, _write, expand_back,
                              reduction_input, reduction_meta, reduction_row, sum, sum_to,
                              sum_to_size)
from . import creation, gather_scatter, memory, pointwise, scans, shape_ops, sorting
from ._bare_support import check_op as bare_check


def _prod_grad(g, x, result, dims, keepdim):
    """d prod / d x_i = the product of the other elements: exclusive cumulative products
    from both ends, so zeros need no division (and double backward works)."""
    if x.dim() == 0:
        return g
    if x.numel() == 0:
        return creation.zeros_like(x)
    if len(dims) == 1:
        others = prod_of_others(x, dims[0])
    else:
        others = prod_of_others(x.reshape(-1), 0).reshape(x.shape)
    grad = expand_back(g, x.shape, dims, keepdim) * others
    if len(dims) == x.dim():
        # PyTorch's prod_backward of all elements: with two zeros or more, zeros_like
        # (+0.0 whatever g is: an inf / NaN g gave NaN, g * -0.0 other signs here). Its
        # one-dim form (prod(x, d)) keeps the products; the rule cannot tell prod(x)
        # from prod(x, 0) of a 1-d x, and takes the former's
        grad = grad.where((x == 0).sum() < 2, 0.0)
    return grad


def prod_of_others(x, d):
    """For each element, the product of the other elements along dim d."""
    n = x.shape[d]
    if n == 1:
        return creation.ones_like(x)
    one = creation.ones_like(x.narrow(d, 0, 1))
    before = memory.cat([one, scans.cumprod(x.narrow(d, 0, n - 1), d)], d)
    after = memory.cat([one, scans.cumprod(shape_ops.flip(x, (d,)).narrow(d, 0, n - 1), d)], d)
    return before * shape_ops.flip(after, (d,))


PROD = reduction_row("prod", _prod_grad)


def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    check_tensor(input, "prod")
    if input._dtype.bare:
        bare_check("prod", input._dtype)
    check_keepdim(keepdim, "prod")
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    dt = _sum_dtype(input, dtype)
    if input._dtype is not dt:
        input = input.to(dt)
    dims = tuple(range(input.dim())) if dim is None else norm_dims(dim, input.dim(), "prod")
    return _write(out, _reduce(PROD, input, dims, keepdim and dim is not None, dt))


# -- mean and the nan-ignoring sums -----------------------------------------------------------------

def _mean(x, dims, keepdim):
    count = numel(tuple(x._shape[d] for d in dims))
    s = _reduce(SUM, x, dims, keepdim, x._dtype)          # dims are normalised already
    return s / count if count else s * float("nan")


MEAN = composite("mean", _mean, kind="reduction", dtypes="floating",
                 signature="mean(x, dim=None, keepdim=False, *, dtype=None)",
                 doc="sum / count; integer inputs raise (give dtype=)")


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    check_tensor(input, "mean")
    if input._dtype.bare:
        bare_check("mean", input._dtype)
    check_dim_arg(dim, "mean")
    check_keepdim(keepdim, "mean")
    dt = D.to_dtype(dtype) if dtype is not None else input._dtype
    if not dt.is_grad:
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {dt.pt_name}")
    if input._dtype is not dt:
        input = input.to(dt)
    params = {"dims": _dims(input, dim, "mean"), "keepdim": keepdim}
    if dt in LOWP:      # accumulate and divide in float32, round once (as PyTorch's opmath)
        return _write(out, run(MEAN, (input.float(),), params).to(dt))
    return _write(out, run(MEAN, (input,), params))


def _nansum(x, dims, keepdim, dtype):
    if x.dtype.is_floating_point:
        x = pointwise.where(x != x, 0.0, x)
    return sum(x, dims, keepdim, dtype=dtype)


def _nansum_grad(g, x, dims, keepdim, dtype):
    """PyTorch's nansum_backward: g * ~isnan(x), a product (an inf g gives NaN at a NaN x,
    as PyTorch's; the where of the decomposition gave +0.0)."""
    g = expand_back(g, x.shape, dims, keepdim)
    return g * (x == x) if x.dtype.is_floating_point else g


NANSUM = composite("nansum", _nansum, kind="reduction", grad=_nansum_grad,
                   signature="nansum(x, dim=None, keepdim=False, *, dtype=None)",
                   doc="sum treating NaN as zero", opmath=True)


def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    check_tensor(input, "nansum")
    check_keepdim(keepdim, "nansum")
    return _write(out, run(NANSUM, (input,), {"dims": _dims(input, dim, "nansum"),
                                              "keepdim": keepdim, "dtype": dtype}))


def _nanmean(x, dims, keepdim):
    return run(NANSUM, (x,), {"dims": dims, "keepdim": keepdim, "dtype": None}) / \
        sum(x == x, dims, keepdim)


NANMEAN = composite("nanmean", _nanmean, kind="reduction", dtypes="floating",
                    signature="nanmean(x, dim=None, keepdim=False, *, dtype=None)",
                    doc="mean of the non-NaN elements", opmath=True)


def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    check_tensor(input, "nanmean")
    check_keepdim(keepdim, "nanmean")
    if dtype is not None:
        input = input.to(dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {input.dtype.pt_name}")
    return _write(out, run(NANMEAN, (input,), {"dims": _dims(input, dim, "nanmean"),
                                               "keepdim": keepdim}))


# -- extremes ----------------------------------------------------------------------------------------

def _check_nonempty(input, dims, name):
    """Extremes have no identity: an empty reduction raises (dims: the dims the caller
    named; () when it named none)."""
    if input._dtype.is_complex:        # complex numbers are not ordered
        raise NotImplementedError(f"\"{name}\" not implemented for '{input._dtype.pt_name}'")
    if input.numel() == 0:
        if not dims:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                               f"== 0. Specify the reduction dim with the 'dim' argument.")
        for d in dims:
            if input._shape[d] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _extreme_reduce(op, name):
    def fn(input, dim=(), keepdim=False, *, out=None):
        check_tensor(input, name)
        if input._dtype.bare:
            bare_check(name, input._dtype)
        check_keepdim(keepdim, name)
        if isinstance(dim, (tuple, list)) and dim and input.numel() == 0:
            # PyTorch checks each named dim's size before it checks for repeats
            _check_nonempty(input, [norm_dim(d, input.dim(), name) for d in dim], name)
        dims = norm_dims(dim, input.dim(), name)
        _check_nonempty(input, dims if dim not in (None, ()) else (), name)
        return _write(out, _reduce(op, input, dims or tuple(range(input.dim())), keepdim,
                                   input._dtype), name, (input,), "exact")
    fn.__name__ = fn.__qualname__ = name
    return fn


amax = _extreme_reduce(AMAX, "amax")
amin = _extreme_reduce(AMIN, "amin")


def _arg(op, name, input, dim, keepdim):
    check_tensor(input, name)
    if input._dtype.bare:
        bare_check(name, input._dtype)
    check_keepdim(keepdim, name)
    if dim is None:
        if input.numel() == 0:
            raise IndexError(f"{name}(): Expected reduction dim 0 to have non-zero size.")
        r = _arg(op, name, input.reshape(-1), 0, False)
        return r.reshape((1,) * input.dim()) if keepdim else r
    d = norm_dim(dim, input.dim(), name)
    _check_nonempty(input, (d,) if input.dim() else (), name)
    x, kdims = reduction_input(input, (d,))
    return apply(op, input._place, (input,), (x._h,), op.meta(input, (d,) if input.dim() else (),
                                                              keepdim, D.int64),
                 {"dim": kdims[0], "keepdim": keepdim and bool(input._shape)})


def _no_bool(input, name):
    if isinstance(input, Tensor) and input._dtype is D.bool_:
        raise RuntimeError(f"{name}(): does not support bool input")


def argmax(input, dim=None, keepdim=False, *, out=None):
    check_keepdim(keepdim, "argmax")
    check_dim_arg(dim, "argmax")
    _no_bool(input, "argmax")
    return _write(out, _arg(ARGMAX, "argmax", input, dim, keepdim))


def argmin(input, dim=None, keepdim=False, *, out=None):
    check_keepdim(keepdim, "argmin")
    check_dim_arg(dim, "argmin")
    _no_bool(input, "argmin")
    return _write(out, _arg(ARGMIN, "argmin", input, dim, keepdim))


def _value_index(extreme, arg, name):
    """max/min along a dim: (values, indices), the values gathered at the indices (so the
    gradient goes to the chosen element, as in PyTorch)."""
    def decomp(x, dim, keepdim):
        if dim is None:
            return extreme(x)
        indices = arg(x, dim, keepdim=True)
        values = gather_scatter.gather(x, dim, indices) if x.dim() else x.clone()
        if not keepdim and x.dim():
            values, indices = values.squeeze(dim), indices.squeeze(dim)
        return values, indices
    return decomp


def _max_min_grad(g, x, result, result1, dim, keepdim):
    """PyTorch's two rules: of all elements, evenly_distribute_backward (ties share g, a
    NaN maximum's g goes to the NaNs, the rest +0.0 even for an inf g); along a dim,
    value_selecting_reduction_backward (g to the returned index)."""
    if dim is None:
        return sorting.evenly_distribute(g, x, result)
    return sorting.value_selecting(g[0], x, result1, dim, keepdim)


MAX = composite("max", _value_index(amax, lambda x, d, keepdim: _arg(ARGMAX, "max", x, d, keepdim),
                                    "max"), kind="reduction", n_out=2, grad=_max_min_grad,
                signature="max(x) | max(x, dim, keepdim=False) -> (values, indices) | max(x, other)",
                doc="full: amax (NaN propagates); along a dim: values and the first index of the "
                    "maximum; with a tensor: maximum")
MIN = composite("min", _value_index(amin, lambda x, d, keepdim: _arg(ARGMIN, "min", x, d, keepdim),
                                    "min"), kind="reduction", n_out=2, grad=_max_min_grad,
                signature="min(x) | min(x, dim, keepdim=False) -> (values, indices) | min(x, other)",
                doc="full: amin (NaN propagates); along a dim: values and the first index of the "
                    "minimum; with a tensor: minimum")


def _extreme(op, name, binary, tuple_type):
    def fn(input, dim=None, keepdim=False, *, out=None):
        check_tensor(input, name)
        if input._dtype.bare:
            bare_check(name if dim is None else name + '_dim', input._dtype)
        if isinstance(dim, Tensor):
            return _write(out, binary(input, dim), name, (input, dim), "safe")
        if dim is None:
            if keepdim:
                raise TypeError(f"{name}() received an invalid combination of arguments: keepdim "
                                f"needs dim")
            if input.numel() == 0:
                raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                                   f"input.numel() == 0. Specify the reduction dim with the 'dim' "
                                   f"argument.")
            return _write(out, run(op, (input,), {"dim": None, "keepdim": False}), name,
                          (input,), "exact")
        d = norm_dim(dim, input.dim(), name)
        return _write(out, tuple_type(*run(op, (input,), {"dim": d, "keepdim": keepdim})), name,
                      (input,), "exact")
    fn.__name__ = fn.__qualname__ = name
    return fn


max = _extreme(MAX, "max", lambda a, b: pointwise.maximum(a, b), return_types.max)
min = _extreme(MIN, "min", lambda a, b: pointwise.minimum(a, b), return_types.min)


def _aminmax(x, dims, keepdim):
    return amin(x, dims, keepdim), amax(x, dims, keepdim)


AMINMAX = composite("aminmax", _aminmax, kind="reduction", n_out=2,
                    signature="aminmax(x, *, dim=None, keepdim=False) -> (min, max)",
                    doc="amin and amax in one call")


def aminmax(input, *, dim=None, keepdim=False, out=None):
    check_tensor(input, "aminmax")
    check_keepdim(keepdim, "aminmax")
    dims = norm_dims(dim, input.dim(), "aminmax")
    _check_nonempty(input, dims if dim is not None else (), "aminmax")
    return _write(out, return_types.aminmax(*run(AMINMAX, (input,), {"dims": dims,
                                                                      "keepdim": keepdim})),
                  "aminmax", (input,), "exact")


# -- logical reductions --------------------------------------------------------------------------

def _logical_reduce(op, empty_value):
    def decomp(x, dims, keepdim):
        out = x.dtype if x.dtype is D.uint8 else D.bool_     # uint8 stays uint8, as PyTorch
        b = x if x.dtype is D.bool_ else x != 0
        if b.numel() == 0:
            return creation.full(reduced_shape(b._shape, dims, keepdim), empty_value, dtype=out,
                             device=b.device)
        r = _reduce(op, b, dims or tuple(range(b.dim())), keepdim, D.bool_)
        return r if out is D.bool_ else r.to(out)
    return decomp


ALL = composite("all", _logical_reduce(AMIN, True), kind="reduction", differentiable=False,
                signature="all(x, dim=None, keepdim=False)",
                doc="True where every element is non-zero (uint8 in, uint8 out)")
ANY = composite("any", _logical_reduce(AMAX, False), kind="reduction", differentiable=False,
                signature="any(x, dim=None, keepdim=False)",
                doc="True where some element is non-zero (uint8 in, uint8 out)")


def all(input, dim=None, keepdim=False, *, out=None):
    check_tensor(input, "all")
    check_keepdim(keepdim, "all")
    if isinstance(dim, (tuple, list)) and not dim:      # PyTorch: no dim reduced
        return _write(out, input.clone() if input._dtype is D.uint8 else input != 0)
    return _write(out, run(ALL, (input,), {"dims": norm_dims(dim, input.dim(), "all"),
                                           "keepdim": keepdim}))


def any(input, dim=None, keepdim=False, *, out=None):
    check_tensor(input, "any")
    check_keepdim(keepdim, "any")
    if isinstance(dim, (tuple, list)) and not dim:      # PyTorch: no dim reduced
        return _write(out, input.clone() if input._dtype is D.uint8 else input != 0)
    return _write(out, run(ANY, (input,), {"dims": norm_dims(dim, input.dim(), "any"),
                                           "keepdim": keepdim}))


COUNT_NONZERO = composite("count_nonzero", lambda x, dims: sum(x != 0, dims), kind="reduction",
                          differentiable=False, signature="count_nonzero(x, dim=None)",
                          doc="int64 count of the non-zero elements")


def count_nonzero(input, dim=None):
    check_tensor(input, "count_nonzero")
    if input._dtype.bare:
        bare_check("count_nonzero", input._dtype)
    return run(COUNT_NONZERO, (input,), {"dims": _dims(input, dim, "count_nonzero")})


METHODS = {"prod": prod, "aminmax": aminmax}
