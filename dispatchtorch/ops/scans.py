"""Scans: running sums, products and extremes along one dim (prims), and logcumsumexp
(a composite over them)."""
from __future__ import annotations

import math

from .. import _dtype as D
from .. import return_types
from .._run import apply
from .._shape import norm_dim
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from ..dispatch import OpDef, register_op
from ..dispatch.registry import Forms, form_of
from ._composite import composite, inplace_variant, run
from ._args import check_tensor, write_out
from ._out import takes_out
from . import creation, memory, pointwise
from ._bare_support import check_op as bare_check


def _reverse_cumsum(g, dim):
    """sum_{j >= i} g_j, as PyTorch's cumsum_backward: flip, cumsum, flip (total - prefix
    + g would give inf - inf = NaN for an infinite g)."""
    return cumsum(g.flip(dim), dim).flip(dim)


def _cumsum_grad(g, dim):
    return _reverse_cumsum(g, dim)


def _cumprod_grad(g, x, result, dim):
    """PyTorch's cumprod backward, written in public ops and safe with zeros: before the
    first zero of a slice the division formula holds; at the first zero the gradient
    is sum_{i >= z} g_i * prod_{j <= i, j != z} x_j; after it, zero."""
    if x.numel() == 0:
        return g
    if STATE.enabled:       # create_graph: a formula whose own derivative is right at zeros
        return _cumprod_grad_differentiable(g, x, dim)
    zero = x == 0
    seen = cumsum(zero, dim)            # number of zeros up to and including i
    before = seen == 0
    first = zero & (seen == 1)
    safe_x = pointwise.where(before, x, 1.0)
    grad_before = _reverse_cumsum(g * result, dim) / safe_x
    # PyTorch's order: (the product before the zero) * sum_{i >= z} g_i * prod_{z < j <= i}
    # x_j, so an inf before the zero is not inf - inf (nor 0 * inf) among the terms
    prefix = pointwise.where(before, x, 1.0).prod(dim, keepdim=True)
    after = cumprod(pointwise.where(before | first, 1.0, x), dim)
    at_first = prefix * pointwise.where(seen >= 1, g * after, 0.0).sum(dim, keepdim=True)
    return pointwise.where(before, grad_before, pointwise.where(first, at_first, 0.0))


def _cumprod_grad_differentiable(g, x, dim):
    """grad_k = sum_{i >= k} g_i prod_{m <= i, m != k} x_m, one k at a time (O(n^2), as
    PyTorch does for double backward): products only, so differentiable everywhere."""
    n = x.shape[dim]
    one = creation.ones_like(x.narrow(dim, 0, 1))
    before = one
    cols = []
    for k in range(n):
        after = cumprod(x.narrow(dim, k + 1, n - k - 1), dim)
        omitted = memory.cat([one, after], dim) * before
        cols.append((g.narrow(dim, k, n - k) * omitted).sum(dim, keepdim=True))
        before = before * x.narrow(dim, k, 1)
    return memory.cat(cols, dim)


def _cumext_grad(g, shape, result1, dim):
    return creation.zeros(shape, dtype=g[0].dtype, device=g[0].device).scatter_add(dim, result1, g[0])


def scan_meta(x, dim, dtype=None, n_out=1):
    """The scan family's shape rule: outputs of x's shape (values, then int64 indices)."""
    return ((x._shape, dtype or x._dtype),) + ((x._shape, D.int64),) * (n_out - 1)


def scan_row(name, grad, n_out=1, **row):
    """The scan family's helper: a scan prim's row with the family's shape rule."""
    return register_op(OpDef(name, kind="scan", grad=grad, n_out=n_out, meta=scan_meta, **row))


CUMSUM = scan_row("cumsum", _cumsum_grad)
CUMPROD = scan_row("cumprod", _cumprod_grad)
CUMMAX = scan_row("cummax", _cumext_grad, n_out=2)
CUMMIN = scan_row("cummin", _cumext_grad, n_out=2)


def _scan_input(input, dim, name):
    check_tensor(input, name)
    if input._dtype.bare:
        bare_check(name, input._dtype)
    d = norm_dim(dim, input.dim(), name)
    return d, (input if input.dim() else input.reshape(1))


def _scan(op, name):
    def fn(input, dim, *, dtype=None, out=None):
        d, x = _scan_input(input, dim, name)
        if dtype is not None:
            dt = D.to_dtype(dtype)
        else:
            dt = input._dtype if input._dtype.is_grad else D.int64
        if dtype is not None and input._dtype is not dt:
            input = input.to(dt)
            x = input if input.dim() else input.reshape(1)
        r = apply(op, x._place, (x,), (x._h,), op.meta(x, d, dt), {"dim": d})
        if not input.dim():
            r = r.reshape(())
        if out is not None:
            return write_out(out, r, name)
        return r
    fn.__name__ = fn.__qualname__ = name
    return fn


cumsum = _scan(CUMSUM, "cumsum")
cumprod = _scan(CUMPROD, "cumprod")


def _cumext(op, name):
    tuple_type = getattr(return_types, name)

    def fn(input, dim, *, out=None):
        if isinstance(dim, (bool, float, str)) or dim is None:
            raise TypeError(f"{name}(): argument 'dim' (position 1) must be int, not "
                            f"{type(dim).__name__}")
        if isinstance(input, Tensor) and input.dim() and not input.numel():
            # PyTorch returns empty results before it checks dim
            return tuple_type(creation.empty_like(input), creation.empty(input._shape, dtype=D.int64,
                                                                 device=input.device))
        d, x = _scan_input(input, dim, name)
        shape = input._shape
        if input.numel() == 0:
            return tuple_type(creation.empty_like(input), creation.empty(shape, dtype=D.int64,
                                                                 device=input.device))
        values, indices = apply(op, x._place, (x,), (x._h,), op.meta(x, d, n_out=2), {"dim": d},
                                {"dim": d, "shape": x._shape})
        if not input.dim():
            values, indices = values.reshape(()), indices.reshape(())
        return tuple_type(values, indices)
    fn.__name__ = fn.__qualname__ = name
    return fn


cummax = takes_out("cummax", "exact")(_cumext(CUMMAX, "cummax"))
cummin = takes_out("cummin", "exact")(_cumext(CUMMIN, "cummin"))


def _inplace_scan(fn, name):
    def method(self, dim, *, dtype=None):
        return inplace_variant(lambda x: fn(x, dim, dtype=dtype), name)(self)
    method.__name__ = name
    return method


cumsum_ = _inplace_scan(cumsum, "cumsum_")
cumprod_ = _inplace_scan(cumprod, "cumprod_")


def _logcumsumexp(x, dim):
    """An inclusive log-add-exp scan by doubling (Hillis-Steele): log2(n) steps of
    y_i = logaddexp(y_i, y_{i - 2^k}). Exact for any spread of values (a shift by one
    maximum would underflow the small ones) and safe with infinities and NaN."""
    if x.numel() == 0 or x.dim() == 0:
        return x.clone()
    n = x.shape[dim]
    if x.dtype.is_complex:
        # the imaginary part of a complex log is defined modulo 2 pi: the branch PyTorch's
        # answer takes is that of its sequential scan, so scan one element at a time
        outs = [x.narrow(dim, 0, 1)]
        for i in range(1, n):
            outs.append(pointwise.logaddexp(outs[-1], x.narrow(dim, i, 1)))
        return memory.cat(outs, dim)
    y = x
    step = 1
    while step < n:
        pad = creation.full_like(y.narrow(dim, 0, step), -math.inf)
        shifted = memory.cat([pad, y.narrow(dim, 0, n - step)], dim)
        y = pointwise.logaddexp(y, shifted)
        step *= 2
    return y


def _logcumsumexp_grad(g, x, result, dim):
    """PyTorch's logcumsumexp_backward (real inputs): g split by sign, each part's
    reversed log-add-exp scan of log|g| - result, exp(. + x), positive minus negative.
    The other part is the dtype's lowest number, not -inf, so a NaN or zero g gives
    exp(lowest) = 0 on both sides: 0 (+0.0), where the doubling scan's own derivative
    passed NaN along and kept -0.0."""
    if x.numel() == 0 or x.dim() == 0:
        return g.clone()
    lowest = D.finfo(g.dtype).min
    log_abs = pointwise.log(g.abs())
    # both sides in one scan of the two stacked (half the ops of two scans)
    t = memory.stack([pointwise.where(g > 0, log_abs, lowest),
                      pointwise.where(g < 0, log_abs, lowest)]) - result
    e = pointwise.exp(_logcumsumexp(t.flip(dim + 1), dim + 1).flip(dim + 1) + x)
    return e[0] - e[1]


LOGCUMSUMEXP = composite("logcumsumexp", _logcumsumexp, kind="scan", dtypes="floating",
                         grad=_logcumsumexp_grad,
                         forms=Forms(written=True, special=("logcumsumexp",)),
                         signature="logcumsumexp(x, dim)",
                         doc="log(cumsum(exp(x))) as a log-add-exp scan (log2(n) doubling "
                             "steps)",
                         opmath=True)


@form_of(LOGCUMSUMEXP)
@takes_out("logcumsumexp", "exact")
def logcumsumexp(input, dim, *, out=None):
    d, _ = _scan_input(input, dim, "logcumsumexp")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"\"logcumsumexp\" not implemented for '{input.dtype.pt_name}'")
    if input.dtype.is_complex:
        # PyTorch's rule above is the real one: a complex scan is differentiated through
        # its decomposition's steps (recorded one by one)
        return _logcumsumexp(input, d)
    return run(LOGCUMSUMEXP, (input,), {"dim": d})


METHODS = {"cumsum": cumsum, "cumprod": cumprod, "cummax": cummax, "cummin": cummin,
           "cumsum_": cumsum_, "cumprod_": cumprod_, "logcumsumexp": logcumsumexp}
