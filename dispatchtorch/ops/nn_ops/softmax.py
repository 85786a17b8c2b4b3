"""The nn rows of softmax and log_softmax (F.softmax, F.log_softmax, Tensor.softmax)."""
from __future__ import annotations

from ..._shape import norm_dim
from ..._tensor import Tensor
from ...autograd.grad_mode import STATE
from ._row import Composite, _same


# -- softmax family ------------------------------------------------------------------------------

def _softmax(x, dim):
    if not x.numel():
        return x.clone()
    e = (x - x.amax(dim, keepdim=True)).exp_()
    return e.div_(e.sum(dim, keepdim=True))


def _softmax_grad(g, result, dim):
    if not STATE.enabled and g._dtype is result._dtype and g._shape == result._shape:
        # no graph records the backward: one row, which a backend may fuse (its four
        # ops on the frontend were about 1.5 ms of a (32, 4, 64, 64) attention softmax's)
        return SOFTMAX_BACKWARD(g, result, dim=dim)
    return _softmax_backward(g, result, dim)


def _row_sum(p, dim):
    """p's sum along dim as PyTorch's softmax backward kernels add it: the last-dim
    kernel reduces each row from its first element (a row of -0.0 sums to -0.0, so
    g - sum is +0.0 there), the other dims' kernel from +0.0, as `sum` does. The sum's
    sign only changes where every term has its sign bit set (then it is <= -0.0)."""
    s = p.sum(dim, keepdim=True)
    if p.dim() and dim != p.dim() - 1:
        return s
    return s.where(~p.signbit().all(dim, keepdim=True), -s.abs())


def _softmax_backward(g, result, dim):
    """(g - sum(g y)) y along dim: the softmax_backward row's decomposition and the
    rule's formula under create_graph=True. Fresh buffers only when a graph records
    them (a double backward needs every intermediate unmodified)."""
    d = g - _row_sum(g * result, dim)
    return d * result if STATE.enabled else d.mul_(result)


def _log_softmax(x, dim):
    if not x.numel():
        return x.clone()
    s = x - x.amax(dim, keepdim=True)
    return s.sub_(s.exp().sum(dim, keepdim=True).log_())


def _log_softmax_grad(g, result, dim):
    if not STATE.enabled and g._dtype is result._dtype and g._shape == result._shape:
        # no graph records the backward: one row, which a backend may fuse (its seven
        # frontend ops were about 80 us of cross_entropy's backward on (128, 10))
        return LOG_SOFTMAX_BACKWARD(g, result, dim=dim)
    return _log_softmax_backward(g, result, dim)


def _log_softmax_backward(g, result, dim):
    """g - exp(y) sum(g) along dim: the log_softmax_backward row's decomposition and the
    rule's formula under create_graph=True."""
    if STATE.enabled:
        return g - result.exp() * _row_sum(g, dim)
    # built in the one buffer exp(y) allocates
    return result.exp().mul_(_row_sum(g, dim)).neg_().add_(g)


def _softmax_check(name, x, dim):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    d = norm_dim(dim, x.dim(), name)
    if (not x._dtype.is_floating_point or x._dtype.bare) and x.numel():
        kernel = f"{name}_lastdim_kernel_impl" if d == x.dim() - 1 or not x.dim() else \
            f"{name}_kernel_impl"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{x._dtype.pt_name}'")
    return {"dim": d}


SOFTMAX = Composite("softmax", ("x",), _softmax, _softmax_grad, _same,
                    "softmax(x, *, dim)", "exp(x) / sum(exp(x)) along dim, max-shifted",
                    check=_softmax_check)
SOFTMAX_BACKWARD = Composite("softmax_backward", ("grad_output", "output"), _softmax_backward,
                             None, lambda g, y, **_: ((y._shape, y._dtype),),
                             "softmax_backward(grad_output, output, *, dim)",
                             "softmax's gradient from its output y: (g - sum(g y)) y along dim "
                             "(its backward without a graph)")
LOG_SOFTMAX = Composite("log_softmax", ("x",), _log_softmax, _log_softmax_grad, _same,
                        "log_softmax(x, *, dim)", "x - logsumexp(x) along dim",
                        check=_softmax_check)
LOG_SOFTMAX_BACKWARD = Composite("log_softmax_backward", ("grad_output", "output"),
                                 _log_softmax_backward, None,
                                 lambda g, y, **_: ((y._shape, y._dtype),),
                                 "log_softmax_backward(grad_output, output, *, dim)",
                                 "log_softmax's gradient from its output y: g - exp(y) sum(g) "
                                 "along dim (its backward without a graph)")
