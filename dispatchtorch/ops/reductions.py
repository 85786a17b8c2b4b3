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


def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """The product over one dim (all elements when None); integers and bool give int64."""
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    dt = _sum_dtype(input, dtype)
    if dtype is not None and input.dtype is not dt:
        input = input.to(dt)
    return _reduce(PROD, input, dim, keepdim, dt, "prod")


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
    if dt in (D.float16, D.bfloat16):
        # accumulate and divide in float32, round once (a float16 sum overflows at 65504)
        return mean(input.float(), dim, keepdim).to(dt)
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


def _check_all_nonempty(input, dim, name):
    """Reducing every dim of an empty tensor without an identity (PyTorch: RuntimeError)."""
    if input.numel() == 0 and (dim is None or isinstance(dim, (tuple, list)) and not dim):
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                           f"== 0. Specify the reduction dim with the 'dim' argument.")


def amax(input, dim=(), keepdim=False, *, out=None):
    _check_all_nonempty(input, dim, "amax")
    dims = norm_dims(dim, input.dim(), "amax")
    _check_nonempty(input, dims, "amax")
    return _reduce(AMAX, input, dims, keepdim, input.dtype, "amax")


def amin(input, dim=(), keepdim=False, *, out=None):
    _check_all_nonempty(input, dim, "amin")
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


def _no_bool(input, name):
    if isinstance(input, Tensor) and input.dtype is D.bool_:
        raise RuntimeError(f"{name}(): does not support bool input")


def argmax(input, dim=None, keepdim=False):
    _no_bool(input, "argmax")
    return _arg(ARGMAX, "argmax", input, dim, keepdim)


def argmin(input, dim=None, keepdim=False):
    _no_bool(input, "argmin")
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


# max/min with a dim accept bool (argmax does not): they call the row directly
max = _extreme("max", amax, lambda x, d, keepdim: _arg(ARGMAX, "max", x, d, keepdim),
               lambda a, b: _api.maximum(a, b), return_types.max)
min = _extreme("min", amin, lambda x, d, keepdim: _arg(ARGMIN, "min", x, d, keepdim),
               lambda a, b: _api.minimum(a, b), return_types.min)


def _logical_reduce(name, op, empty_value):
    def fn(input, dim=None, keepdim=False, *, out=None):
        b = input if input.dtype is D.bool_ else input != 0
        if b.numel() == 0:      # the identity of the reduction: all() of nothing is True
            r = _api.full(reduced_shape(b._shape, norm_dims(dim, b.dim(), name), keepdim),
                          empty_value, dtype=D.bool_, device=b.device)
        else:
            r = _reduce(op, b, dim, keepdim, D.bool_, name)
        # uint8 in, uint8 out (PyTorch keeps this legacy rule); everything else gives bool
        return r.to(D.uint8) if input.dtype is D.uint8 else r
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
