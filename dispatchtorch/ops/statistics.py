"""var, std, var_mean, std_mean and logsumexp: composites with derivative rules of their
own, so that backward records one node and does not keep the intermediates."""
from __future__ import annotations

import math
import warnings

from .. import _dtype as D
from .._shape import check_dim_arg, check_keepdim, norm_dims, numel
from ..dispatch.registry import Forms, form_of
from ._composite import composite, run
from .reductions import LOWP, SUM, _reduce, check_tensor, expand_back
from ._args import write_out
from ._out import takes_out


def _count(shape, dims):
    return numel(tuple(shape[d] for d in dims))


def _var_decomp(x, dims, correction, keepdim, with_mean=True):
    """(var, mean): two passes (mean first), as accurate as PyTorch's for training data.
    dims are normalised (sorted, non-negative)."""
    n = _count(x.shape, dims)
    total = _reduce(SUM, x, dims, True, x._dtype)
    mean = total / n if n else total * math.nan
    d = x - mean
    var = _reduce(SUM, d * d, dims, keepdim, x._dtype) / builtin_max(0, n - correction)
    if not with_mean:
        return var, None
    return var, (mean if keepdim else mean.squeeze(dims) if x.dim() else mean)


builtin_max = max


def _var_grad_of(gv, x, dims, correction, keepdim):
    """PyTorch's var_backward: 2 (x - mean) / (n - correction) * g."""
    dof = _count(x.shape, dims) - correction
    scale = 2.0 / dof if dof else math.inf
    mean = x.mean(dims, keepdim=True)
    return scale * expand_back(gv, x.shape, dims, keepdim) * (x - mean)


def _mean_grad_of(gm, x, dims, keepdim):
    return expand_back(gm, x.shape, dims, keepdim) / builtin_max(1, _count(x.shape, dims))


def _std_to_var_grad(g, std):
    """std = sqrt(var): d var = g / (2 std), zero where std is zero (as PyTorch)."""
    return pointwise.where(std == 0, 0.0, g / (2 * std))


def _var_grad(g, x, dims, correction, keepdim):
    return _var_grad_of(g, x, dims, correction, keepdim)


def _std_grad(g, x, result, dims, correction, keepdim):
    return _var_grad_of(_std_to_var_grad(g, result), x, dims, correction, keepdim)


def _var_mean_grad(g, x, dims, correction, keepdim):
    gv, gm = g
    r = _var_grad_of(gv, x, dims, correction, keepdim) if gv is not None else None
    if gm is not None:
        m = _mean_grad_of(gm, x, dims, keepdim)
        r = m if r is None else r + m
    return r


def _std_mean_grad(g, x, result, dims, correction, keepdim):
    gs, gm = g
    return _var_mean_grad((None if gs is None else _std_to_var_grad(gs, result), gm),
                          x, dims, correction, keepdim)


_SIG = "(x, dim=None, *, correction=1, keepdim=False)"
VAR = composite("var", lambda x, dims, correction, keepdim: _var_decomp(x, dims, correction,
                                                                          keepdim, False)[0],
                kind="reduction", grad=_var_grad, dtypes="floating", signature="var" + _SIG,
                doc="sum((x - mean)^2) / max(0, N - correction); unbiased=True/False is "
                    "correction 1/0")
STD = composite("std", lambda x, dims, correction, keepdim: pointwise.sqrt(
                    _var_decomp(x, dims, correction, keepdim, False)[0]),
                kind="reduction", grad=_std_grad, dtypes="floating", signature="std" + _SIG,
                doc="sqrt(var); the gradient is zero where std is zero")
VAR_MEAN = composite("var_mean", _var_decomp, kind="reduction", n_out=2, grad=_var_mean_grad,
                     dtypes="floating", signature="var_mean" + _SIG + " -> (var, mean)",
                     doc="var and mean from one mean pass")


def _std_mean(x, dims, correction, keepdim):
    var, mean = _var_decomp(x, dims, correction, keepdim)
    return pointwise.sqrt(var), mean


STD_MEAN = composite("std_mean", _std_mean, kind="reduction", n_out=2, grad=_std_mean_grad,
                     dtypes="floating", signature="std_mean" + _SIG + " -> (std, mean)",
                     doc="std and mean from one mean pass")


def _var_args(name, input, dim, unbiased, keepdim, correction):
    check_tensor(input, name)
    if input._dtype.bare and input._dtype.is_floating_point:
        raise RuntimeError(f"std_var_all: Unsupported dtype {input._dtype.pt_name}")
    check_keepdim(keepdim, name)
    if not isinstance(dim, bool):
        check_dim_arg(dim, name)
    if isinstance(dim, bool):          # var(x, True): the old `unbiased` positional form
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}(): pass either unbiased or correction, not both")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if not input.dtype.is_grad:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = norm_dims(dim, input.dim(), name) or tuple(range(input.dim()))
    if _count(input.shape, dims) - correction <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less "
                      f"than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=3)
    return {"dims": dims, "correction": correction, "keepdim": keepdim}


def _opmath(op, input, params):
    """float16 / bfloat16 compute in float32 and round once, as PyTorch's opmath."""
    if input.dtype not in LOWP:
        return run(op, (input,), params)
    r = run(op, (input.float(),), params)
    return tuple(x.to(input.dtype) for x in r) if isinstance(r, tuple) else r.to(input.dtype)


def _complex_var(name, input, params):
    """var(z) = var(z.real) + var(z.imag) (real); std its root; the mean stays complex."""
    v = run(VAR, (input.real,), params) + run(VAR, (input.imag,), params)
    r = v.sqrt() if name.startswith("std") else v
    if name.endswith("_mean"):
        return r, input.mean(params["dims"], params["keepdim"])
    return r


def _reducer(op, name, takes_out_arg=True):
    def fn(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        params = _var_args(name, input, dim, unbiased, keepdim, correction)
        r = _complex_var(name, input, params) if input.dtype.is_complex else \
            _opmath(op, input, params)
        return r
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}: {op.doc}."
    return takes_out(name)(fn) if takes_out_arg else fn    # var_mean, std_mean: no out=


var = _reducer(VAR, "var")
std = _reducer(STD, "std")
var_mean = _reducer(VAR_MEAN, "var_mean", takes_out_arg=False)
std_mean = _reducer(STD_MEAN, "std_mean", takes_out_arg=False)


# -- logsumexp ------------------------------------------------------------------------------------------

def _logsumexp(x, dims, keepdim):
    if x.numel() == 0:
        return pointwise.log(pointwise.exp(x).sum(dims, keepdim))
    m = reductions.amax(x, dims, keepdim=True)
    m = pointwise.where(m.abs() == math.inf, 0.0, m)      # all -inf (or an inf): no shift
    r = pointwise.log(pointwise.exp(x - m).sum(dims, keepdim=True)) + m
    return r if keepdim or not x.dim() else r.squeeze(dims)


def _logsumexp_grad(g, x, result, dims, keepdim):
    return expand_back(g, x.shape, dims, keepdim) * pointwise.exp(
        x - expand_back(result, x.shape, dims, keepdim))


LOGSUMEXP = composite("logsumexp", _logsumexp, kind="reduction", grad=_logsumexp_grad,
                      forms=Forms(written=True, special=("logsumexp",)),
                      dtypes="float", promote="int_to_float", signature="logsumexp(x, dim, keepdim=False)",
                      doc="log(sum(exp(x))), shifted by the maximum; integers compute in the "
                          "default float dtype")


@form_of(LOGSUMEXP)
def logsumexp(input, dim, keepdim=False, *, out=None):
    check_tensor(input, "logsumexp")
    check_keepdim(keepdim, "logsumexp")
    if dim is None:
        raise TypeError("logsumexp(): argument 'dim' must be tuple of ints, not NoneType")
    if not input.dtype.is_grad:
        input = input.to(D.get_default_dtype())
    dims = norm_dims(dim, input.dim(), "logsumexp") or tuple(range(input.dim()))
    if input.dtype.is_complex:      # PyTorch: shifted by the maximum of the real parts
        m = reductions.amax(input.real, dims, keepdim=True).detach()     # a constant shift
        m = pointwise.where(m.abs() == math.inf, 0.0, m)
        r = pointwise.log(pointwise.exp(input - m).sum(dims, keepdim=True)) + m
        r = r if keepdim or not input.dim() else r.squeeze(dims)
    else:
        r = _opmath(LOGSUMEXP, input, {"dims": dims, "keepdim": keepdim})
    if out is not None:
        return write_out(out, r)
    return r


METHODS = {"var": var, "std": std, "logsumexp": logsumexp}


# The op modules this one's derivative rules and decompositions call (at run time
# only). Imported last: they import this module in turn (see docs/architecture.md).
from . import pointwise, reductions  # noqa: E402
