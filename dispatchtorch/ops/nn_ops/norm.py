"""The nn rows of layer_norm, rms_norm, group_norm and batch_norm."""
from __future__ import annotations

from ... import _dtype as D
from ..._tensor import Tensor
from ...autograd.grad_mode import STATE
from ._row import Composite, _same


# -- normalisation ---------------------------------------------------------------------------------


def _norm_stats(x, dims, eps):
    mu = x.mean(dims, keepdim=True)
    xc = x - mu
    rstd = (xc * xc).mean(dims, keepdim=True).add_(eps).rsqrt_()
    return xc, rstd


def _layer_norm(x, weight, bias, normalized_shape, eps):
    dims = tuple(range(x.dim() - len(normalized_shape), x.dim()))
    xc, rstd = _norm_stats(x, dims, eps)
    y = xc.mul_(rstd)
    if weight is not None:
        y = y.mul_(weight)
    # without a bias PyTorch's kernel adds beta = 0: a zero output is +0.0 (x = -0.0 at
    # a zero mean gave -0.0)
    return y.add_(0.0 if bias is None else bias)


def _layer_norm_grad(g, x, weight, normalized_shape, eps, needs):
    if not STATE.enabled and g._dtype is x._dtype and g._shape == x._shape:
        # no graph records the backward: one row, which a backend may fuse (its twenty
        # ops on the frontend were 1.1 ms of a (32, 64, 64) layer norm's backward)
        mask = (bool(needs[0]), bool(needs[1]), bool(needs[2]))
        if not any(mask):
            return None, None, None
        r = LAYER_NORM_BACKWARD(g, x, weight, normalized_shape=tuple(normalized_shape),
                                eps=eps, output_mask=mask)
        it = iter(r if isinstance(r, tuple) else (r,))
        return tuple(next(it) if m else None for m in mask)
    return _layer_norm_backward_all(g, x, weight, normalized_shape, eps, needs)


def _layer_norm_backward_all(g, x, weight, normalized_shape, eps, needs):
    """layer_norm's gradients in x, weight and bias (None where needs is false)."""
    k = len(normalized_shape)
    dims = tuple(range(x.dim() - k, x.dim()))
    lead = tuple(range(x.dim() - k))
    xc, rstd = _norm_stats(x, dims, eps)
    xhat = xc * rstd
    gx = gw = gb = None
    if needs[0]:
        # rstd (gh - mean(gh) - xhat mean(gh xhat)), in one buffer without a graph
        gh = g * weight if weight is not None else g
        gx = xhat * (gh * xhat).mean(dims, keepdim=True)
        if STATE.enabled:
            gx = rstd * (gh - gh.mean(dims, keepdim=True) - gx)
        else:
            gx = gx.add_(gh.mean(dims, keepdim=True)).neg_().add_(gh).mul_(rstd)
    if needs[1]:
        gw = (g * xhat).sum(lead) if lead else g * xhat
    if needs[2]:
        gb = g.sum(lead) if lead else g
    return gx, gw, gb


def _layer_norm_backward(g, x, weight, normalized_shape, eps, output_mask):
    r = _layer_norm_backward_all(g, x, weight, normalized_shape, eps, output_mask)
    return tuple(t for t in r if t is not None)


def _layer_norm_backward_meta(g, x, weight, normalized_shape, eps, output_mask):
    shapes = (x._shape, tuple(normalized_shape), tuple(normalized_shape))
    return tuple((s, g._dtype) for s, m in zip(shapes, output_mask) if m)


LAYER_NORM = Composite("layer_norm", ("x", "weight", "bias"), _layer_norm, _layer_norm_grad,
                       lambda x, *a, **k: _same(x),
                       "layer_norm(x, weight, bias, *, normalized_shape, eps)",
                       "normalise over the last len(normalized_shape) dims (biased variance)")
LAYER_NORM_BACKWARD = Composite(
    "layer_norm_backward", ("grad_output", "x", "weight"), _layer_norm_backward, None,
    _layer_norm_backward_meta,
    "layer_norm_backward(grad_output, x, weight, *, normalized_shape, eps, output_mask)",
    "layer_norm's gradients in (x, weight, bias), those output_mask asks for, in that order "
    "(its backward without a graph)")


def _rms_norm(x, weight, normalized_shape, eps):
    dims = tuple(range(x.dim() - len(normalized_shape), x.dim()))
    y = x * (x * x).mean(dims, keepdim=True).add(eps).rsqrt()
    return y if weight is None else y * weight


RMS_NORM = Composite("rms_norm", ("x", "weight"), _rms_norm, None, lambda x, *a, **k: _same(x),
                     "rms_norm(x, weight, *, normalized_shape, eps)",
                     "x / sqrt(mean(x^2) + eps) * weight over the last dims")


def _group_norm(x, weight, bias, num_groups, eps):
    n, c = x._shape[:2]
    xg = x.reshape(n, num_groups, x.numel() // (n * num_groups) if n else 0)   # n = 0 too
    mu = xg.mean(2, keepdim=True)
    xc = xg - mu
    y = (xc * (xc * xc).mean(2, keepdim=True).add(eps).rsqrt()).reshape(x._shape)
    shape = (1, c) + (1,) * (x.dim() - 2)
    if weight is not None:
        y = y * weight.reshape(shape)
    return y if bias is None else y + bias.reshape(shape)


def _group_norm_grad(g, x, weight, num_groups, eps, needs):
    """PyTorch's native_group_norm_backward (its CPU kernel's formula): per channel
    ds = sum(g x), db = sum(g); per group c2 = (db mean - ds) rstd^3 / m and
    c3 = -c2 mean - db rstd / m (ds, db weighted by gamma), dx = rstd gamma g + c2 x + c3;
    d gamma = sum_n (ds - db mean) rstd, d beta = sum_n db. The decomposition's own
    derivative gave other zero signs (x = +-0 rows with a -0.0 g)."""
    n, c = x._shape[:2]
    if not x.numel():
        zc = g.new_zeros((c,))
        return (g * 0 if needs[0] else None, zc if needs[1] else None,
                zc if needs[2] else None)
    G = num_groups
    d = c // G
    hw = x.numel() // (n * c)
    x4, g4 = x.reshape(n, G, d, hw), g.reshape(n, G, d, hw)
    xg = x.reshape(n, G, 1, d * hw)
    mu = xg.mean(3, keepdim=True)                               # (n, G, 1, 1)
    xc = xg - mu
    rstd = (xc * xc).mean(3, keepdim=True).add(eps).rsqrt()
    ds = (g4 * x4).sum(3, keepdim=True)                         # (n, G, d, 1)
    db = g4.sum(3, keepdim=True)
    w = None if weight is None else weight.reshape(1, G, d, 1)
    gx = gw = gb = None
    if needs[0]:
        dsg = (ds if w is None else ds * w).sum(2, keepdim=True)    # (n, G, 1, 1)
        dbg = (db if w is None else db * w).sum(2, keepdim=True)
        m = 1.0 / (d * hw)
        c2 = (dbg * mu - dsg) * rstd * rstd * rstd * m
        c3 = -c2 * mu - dbg * rstd * m
        c1 = rstd if w is None else rstd * w
        gx = (c1 * g4 + c2 * x4 + c3).reshape(x._shape)
    if needs[1] and weight is not None:
        gw = ((ds - db * mu) * rstd).sum(0).reshape(weight._shape)
    if needs[2]:
        gb = db.sum(0).reshape((c,))
    return gx, gw, gb


GROUP_NORM = Composite("group_norm", ("x", "weight", "bias"), _group_norm, _group_norm_grad,
                       lambda x, *a, **k: _same(x),
                       "group_norm(x, weight, bias, *, num_groups, eps)",
                       "normalise (N, C, *) over groups of C/num_groups channels")


def _bn_shape(x):
    return (1, x._shape[1]) + (1,) * (x.dim() - 2)


def _batch_norm(x, weight, bias, running_mean, running_var, momentum, eps):
    dims = (0,) + tuple(range(2, x.dim()))
    shape = _bn_shape(x)
    mu = x.mean(dims)
    xc = x - mu.reshape(shape)
    var = (xc * xc).mean(dims)
    if running_mean is not None or running_var is not None:
        count = x.numel() // x._shape[1]
        with_grad = STATE.enabled
        STATE.enabled = False
        try:     # both new values first, then the writes: a failure changes neither
            new = []
            if running_mean is not None:
                new.append((running_mean, running_mean * (1 - momentum) + mu * momentum))
            if running_var is not None:
                new.append((running_var, running_var * (1 - momentum)
                            + var * (momentum * count / max(count - 1, 1))))
            from ..memory import write_into     # PyTorch writes expanded stats too
            for t, v in new:
                write_into(t, v)
        finally:
            STATE.enabled = with_grad
    y = xc.mul_(var.add_(eps).rsqrt_().reshape(shape))
    if weight is not None:
        y = y.mul_(weight.reshape(shape))
    return y if bias is None else y.add_(bias.reshape(shape))


def _batch_norm_grad(g, x, weight, eps, needs):
    dims = (0,) + tuple(range(2, x.dim()))
    shape = _bn_shape(x)
    xc, rstd = _norm_stats(x, dims, eps)
    xhat = xc * rstd
    gx = gw = gb = None
    if needs[0]:
        gh = g * weight.reshape(shape) if weight is not None else g
        gx = rstd * (gh - gh.mean(dims, keepdim=True) - xhat * (gh * xhat).mean(dims, keepdim=True))
    if needs[1]:
        gw = (g * xhat).sum(dims)
    if needs[2]:
        gb = g.sum(dims)
    return gx, gw, gb


def _batch_norm_check(name, x, weight, bias, **params):
    """The running statistics are checked before anything is computed or written."""
    c = x._shape[1]
    for what in ("running_mean", "running_var"):
        t = params.get(what)
        if t is None:
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"batch_norm(): argument '{what}' must be Tensor, not "
                            f"{type(t).__name__}")
        if t._shape != (c,):
            raise RuntimeError(f"batch_norm: {what} should be a 1-d tensor of {c} elements, got "
                               f"shape {list(t._shape)}")
        if t._dtype is not x._dtype and not (x._dtype in (D.float16, D.bfloat16)
                                             and t._dtype is D.float32):
            raise RuntimeError(f"batch_norm: expected scalar type {x._dtype.pt_name} but found "
                               f"{t._dtype.pt_name} ({what})")
        if STATE.enabled and t._rg:
            raise RuntimeError(f"batch_norm: the function 'native_batch_norm' is not "
                               f"differentiable with respect to argument '{what}'. This input "
                               f"cannot have requires_grad True.")
    return params


BATCH_NORM = Composite(
    "batch_norm", ("x", "weight", "bias"), _batch_norm, _batch_norm_grad,
    lambda x, *a, **k: _same(x),
    "batch_norm(x, weight, bias, *, running_mean, running_var, momentum, eps)",
    "training-mode batch norm over (N, C, *) with batch statistics; updates running_mean / "
    "running_var (tensors or None) in place with the unbiased variance, as PyTorch does",
    check=_batch_norm_check)
