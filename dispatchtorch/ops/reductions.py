"""Reductions: the frontend normalises dims and dtypes, the kernel reduces."""
from __future__ import annotations

from .. import _dtype as D
from .. import return_types
from .._run import apply, decompose, kernel_error, record, resolve, storage_of, wrap
from ..autograd.grad_mode import STATE
from ..dispatch import DECOMPOSE
from .._shape import norm_dim, norm_dims, numel, reduced_shape
from .._tensor import Tensor
from ..dispatch import OpDef, register_op
from . import _api


def _expand_back(g, x, dims, keepdim):
    """g (a reduction's grad) broadcast back to x's shape."""
    if not keepdim and g._shape:
        for d in dims:
            g = g.unsqueeze(d)
    return g.expand(x.shape)


def _sum_grad(g, x, dims, keepdim):
    return _expand_back(g, x, dims, keepdim)


def _extreme_grad(g, x, result, dims, keepdim):
    # ties share the gradient evenly, as PyTorch's amax/amin backward
    r = _expand_back(result, x, dims, keepdim)
    mask = (x == r).to(g.dtype)
    count = mask.sum(dims, keepdim=True) if x.dim() else mask
    return _expand_back(g, x, dims, keepdim) * mask / count


def _row(name, grad=None):
    return register_op(OpDef(name, kind="reduction", grad=grad))


SUM = _row("sum", _sum_grad)
PROD = _row("prod")
AMAX = _row("amax", _extreme_grad)
AMIN = _row("amin", _extreme_grad)
ARGMAX = _row("argmax")
ARGMIN = _row("argmin")


def reduction_input(x, dims):
    """0-d tensors reduce as shape (1,): kernels always get non-empty dims."""
    if x._shape:
        return x, dims
    return x.reshape(1), (0,)


_ALL_DIMS = [tuple(range(n)) for n in range(64)]


def _reduce(op, input, dim, keepdim, out_dtype, name):
    """The reduction executor (hot: `x.sum()` should cost little more than the kernel)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be a Tensor, not {type(input).__name__}")
    in_shape = input._shape
    nd = len(in_shape)
    if dim is None:
        dims = _ALL_DIMS[nd]
        shape = (1,) * nd if keepdim else ()
    else:
        dims = norm_dims(dim, nd, name)
        shape = reduced_shape(in_shape, dims, keepdim)
    place = input._place
    track = STATE.enabled and input._rg and op.differentiable
    k = op.kernels.get(place.type)
    if k is None:
        k = resolve(op, place.rt)
    if k is DECOMPOSE:
        return decompose(op, (input,), {"dims": dims, "keepdim": keepdim})
    if nd:
        h, kdims, kkeep = input._h, dims, keepdim
    else:       # 0-d reduces as shape (1,): kernels always get non-empty dims
        h = place.bk.as_strided(storage_of(input), (1,), (1,), input._offset)
        kdims, kkeep = (0,), False
    try:        # allocation inside: out of device memory names the op
        out = place.empty(shape, out_dtype.name, place.index)
        k(out, h, dims=kdims, keepdim=kkeep)
    except Exception as exc:
        raise kernel_error(op.name, place.type, (input._dtype,), exc) from exc
    r = wrap(out, shape, out_dtype, place)
    if track:
        record(op, (input,), {"dims": dims, "keepdim": keepdim}, (r,))
    return r


def _sum_dtype(x, dtype):
    if dtype is not None:
        return D.to_dtype(dtype)
    return x.dtype if x.dtype.is_floating_point else D.int64


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    dt = _sum_dtype(input, dtype)
    if dtype is not None and input.dtype is not dt:
        input = input.to(dt)
    return _reduce(SUM, input, dim, keepdim, dt, "sum")


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    if input.dtype.is_floating_point:
        input = _api.where(input != input, 0.0, input)
    return sum(input, dim, keepdim, dtype=dtype)


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    dt = D.to_dtype(dtype) if dtype is not None else input.dtype
    if not dt.is_floating_point:
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {dt.pt_name}")
    if input.dtype is not dt:
        input = input.to(dt)
    dims = norm_dims(dim, input.dim(), "mean")
    count = numel(tuple(input._shape[d] for d in dims))
    return sum(input, dim, keepdim) / count if count else sum(input, dim, keepdim) * float("nan")


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    valid = (input == input)
    return nansum(input, dim, keepdim, dtype=dtype) / valid.sum(dim, keepdim)


def _check_nonempty(input, dims, name):
    if input.numel() == 0:
        for d in dims or range(input.dim()):
            if input._shape[d] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        if not dims:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                               f"== 0. Specify the reduction dim with the 'dim' argument.")


def amax(input, dim=(), keepdim=False, *, out=None):
    dims = norm_dims(dim, input.dim(), "amax")
    _check_nonempty(input, dims, "amax")
    return _reduce(AMAX, input, dims, keepdim, input.dtype, "amax")


def amin(input, dim=(), keepdim=False, *, out=None):
    dims = norm_dims(dim, input.dim(), "amin")
    _check_nonempty(input, dims, "amin")
    return _reduce(AMIN, input, dims, keepdim, input.dtype, "amin")


def _arg(op, name, input, dim, keepdim):
    if dim is None:
        _check_nonempty(input, (), name)
        flat = input.reshape(-1)
        r = _arg(op, name, flat, 0, False)
        return r.reshape((1,) * input.dim()) if keepdim else r
    d = norm_dim(dim, input.dim(), name)
    _check_nonempty(input, (d,) if input.dim() else (), name)
    shape = reduced_shape(input._shape, (d,), keepdim) if input.dim() else ()
    x, kdims = reduction_input(input, (d,))
    return apply(op, input._place, (input,), (x._h,), ((shape, D.int64),),
                 {"dim": kdims[0], "keepdim": keepdim and bool(input._shape)})


def argmax(input, dim=None, keepdim=False):
    return _arg(ARGMAX, "argmax", input, dim, keepdim)


def argmin(input, dim=None, keepdim=False):
    return _arg(ARGMIN, "argmin", input, dim, keepdim)


def _extreme(name, full, arg, binary, tuple_type):
    def fn(input, dim=None, keepdim=False, *, out=None):
        if isinstance(dim, Tensor):
            return binary(input, dim)
        if dim is None:
            if keepdim:
                raise TypeError(f"{name}() received an invalid combination of arguments: keepdim "
                                f"needs dim")
            if input.numel() == 0:
                raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                                   f"input.numel() == 0. Specify the reduction dim with the 'dim' "
                                   f"argument.")
            return full(input)
        indices = arg(input, dim, keepdim=True)
        d = norm_dim(dim, input.dim(), name)
        values = _api.gather(input, d, indices) if input.dim() else input.clone()
        if not keepdim and input.dim():
            values, indices = values.squeeze(d), indices.squeeze(d)
        return tuple_type(values, indices)
    fn.__name__ = name
    return fn


max = _extreme("max", amax, argmax, lambda a, b: _api.maximum(a, b), return_types.max)
min = _extreme("min", amin, argmin, lambda a, b: _api.minimum(a, b), return_types.min)


def _logical_reduce(name, op, empty_value):
    def fn(input, dim=None, keepdim=False, *, out=None):
        b = input if input.dtype is D.bool_ else input != 0
        if b.numel() == 0:      # the identity of the reduction: all() of nothing is True
            return _api.full(reduced_shape(b._shape, norm_dims(dim, b.dim(), name), keepdim),
                             empty_value, dtype=D.bool_, device=b.device)
        return _reduce(op, b, dim, keepdim, D.bool_, name)
    fn.__name__ = name
    return fn


all = _logical_reduce("all", AMIN, True)
any = _logical_reduce("any", AMAX, False)


def sum_to(g, shape, op="op"):
    """g summed over the dims that broadcasting added or expanded: the one place
    where broadcasting is undone for every derivative rule."""
    shape = tuple(shape)
    if g._shape == shape:
        return g
    lead = g.dim() - len(shape)
    if lead < 0:
        raise RuntimeError(f"{op}: gradient of shape {list(g._shape)} can't be summed to "
                           f"{list(shape)}")
    dims = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and g._shape[lead + i] != 1)
    r = sum(g, dims, keepdim=True) if dims else g
    return r.reshape(shape) if r._shape != shape else r


def sum_to_size(input, *size):
    size = size[0] if len(size) == 1 and not isinstance(size[0], int) else size
    return sum_to(input, tuple(size), "sum_to_size")


def count_nonzero(input, dim=None):
    return sum(input != 0, dim)
