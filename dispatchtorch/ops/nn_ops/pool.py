"""The nn rows of max_pool2d and avg_pool2d: one elementwise op per kernel offset over strided
views."""
from __future__ import annotations

from ... import _dtype as D
from ...autograd.grad_mode import STATE
from ...dispatch.registry import FORMS as P
from . import windows as W
from ._row import Composite


# -- pooling: one elementwise op per kernel offset over strided views ---------------------------


def _pool_buffer(x, kernel_size, stride, padding, dilation, ceil_mode, fill):
    count, extra = W.pool_geometry(x, kernel_size, stride, padding, dilation, ceil_mode)
    return W.padded(x, padding[0], padding[1], fill, *extra), count


def _max_fill(dt):
    return float("-inf") if dt.is_floating_point else D.iinfo(dt).min


def _max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode):
    buf, count = _pool_buffer(x, kernel_size, stride, padding, dilation, ceil_mode,
                              _max_fill(x._dtype))
    out = None
    # the offsets last to first, each maximum_'s operand second (a maximum prim gives its
    # second operand at a tie): a tie keeps the window's row-major first element, as
    # PyTorch's kernel (max_pool of [0, -0.0] is 0, of [-0.0, 0] -0.0)
    for v in reversed(list(W.offset_views(buf, kernel_size, dilation, stride, count))):
        out = v.clone() if out is None else out.maximum_(v)
    return out


def _max_pool2d_grad(g, x, result, kernel_size, stride, padding, dilation, ceil_mode):
    if not STATE.enabled and g._dtype is x._dtype:
        # no graph records the backward: one row, which a backend may implement directly
        return MAX_POOL2D_BACKWARD(g, x, result, kernel_size=kernel_size, stride=stride,
                                   padding=padding, dilation=dilation, ceil_mode=ceil_mode)
    return _max_pool2d_backward(g, x, result, kernel_size, stride, padding, dilation, ceil_mode)


def _max_pool2d_backward(g, x, result, kernel_size, stride, padding, dilation, ceil_mode):
    """PyTorch's choice per window: its first maximum among the input's elements (never
    the padding), or its last NaN where it has one. Each window's offset is found by
    elementwise ops (no host read asks whether there is a NaN), then g is placed at it."""
    geometry = (kernel_size, stride, padding, dilation, ceil_mode)
    # NaN padding never equals a maximum; the NaN positions come from a False-padded mask
    buf, count = _pool_buffer(x, *geometry, float("nan"))
    nans, _ = _pool_buffer(x != x, *geometry, False)
    offsets = list(range(kernel_size[0] * kernel_size[1]))
    vals = list(W.offset_views(buf, kernel_size, dilation, stride, count))
    pos = creation.full(result._shape, -1.0, dtype=g._dtype, device=g.device)
    for k in reversed(offsets):                    # the earliest maximum wins
        pos = P.where(vals[k] == result, float(k), pos)
    for k, v in enumerate(W.offset_views(nans, kernel_size, dilation, stride, count)):
        pos = P.where(v, float(k), pos)            # the latest NaN wins (only NaN windows)
    acc = W.accumulate_buffer(x._shape[2:], kernel_size, dilation, padding, stride, count, g)
    for k, dst in zip(offsets, W.offset_views(acc, kernel_size, dilation, stride, count)):
        dst.add_(P.where(pos == k, g, 0.0))   # not g * hit: an inf g would put NaN elsewhere
    return W.crop(acc, x._shape[2:], padding)


def max_pool_argmax(x, kernel_size, stride, padding, dilation, ceil_mode):
    """Per window, the position (0 .. kh*kw-1) of its first maximum: (N, C, OH, OW)."""
    buf, count = _pool_buffer(x, kernel_size, stride, padding, dilation, ceil_mode,
                              _max_fill(x._dtype))
    win = W.windows(buf, kernel_size, dilation, stride, count)
    n, c, kh, kw, oh, ow = win._shape
    return win.permute(0, 1, 4, 5, 2, 3).reshape(n, c, oh, ow, kh * kw).argmax(-1)


def _pool_meta(x, kernel_size, stride, padding, *rest, **kw):
    count, _ = W.pool_geometry(x, kernel_size, stride, padding, kw.get("dilation", (1, 1)),
                               kw.get("ceil_mode", False))
    return ((x._shape[:2] + count, x._dtype),)


MAX_POOL2D = Composite("max_pool2d", ("x",), _max_pool2d, _max_pool2d_grad, _pool_meta,
                       "max_pool2d(x, *, kernel_size, stride, padding, dilation, ceil_mode)",
                       "window maxima; NaN propagates; the gradient goes to the first maximum")
MAX_POOL2D_BACKWARD = Composite(
    "max_pool2d_backward", ("grad_output", "x", "result"), _max_pool2d_backward, None,
    lambda g, x, result, **_: ((x._shape, g._dtype),),
    "max_pool2d_backward(grad_output, x, result, *, kernel_size, stride, padding, dilation, "
    "ceil_mode)", "max_pool2d's gradient in x from its result (its backward without a graph)")

_DIVISORS: dict = {}


def avg_divisor(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """The divisor of each window: a number, or an (OH, OW) tensor cached per geometry."""
    if divisor_override:
        return float(divisor_override)
    h, w = x._shape[2:]
    count, extra = W.pool_geometry(x, kernel_size, stride, padding, (1, 1), ceil_mode)
    if not any(padding) and not any(extra):
        return float(kernel_size[0] * kernel_size[1])
    key = (h, w, tuple(kernel_size), tuple(stride), tuple(padding), ceil_mode, count_include_pad,
           x._place, x._dtype)
    d = _DIVISORS.get(key)
    if d is None:
        import numpy as np
        sizes = []
        for n, k, s, p, o in zip((h, w), kernel_size, stride, padding, count):
            start = np.arange(o) * s - p
            end = np.minimum(start + k, n + p)            # PyTorch clips windows at n + p
            if not count_include_pad:
                start, end = np.maximum(start, 0), np.minimum(end, n)
            sizes.append(end - start)
        d = creation.tensor(np.outer(sizes[0], sizes[1]), dtype=x._dtype, device=x.device)
        if len(_DIVISORS) < 256:
            _DIVISORS[key] = d
    return d


def _avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    buf, count = _pool_buffer(x, kernel_size, stride, padding, (1, 1), ceil_mode, 0.0)
    out = None
    # the first view + 0.0, not its clone: PyTorch's sum starts from 0, so a window of
    # -0.0 averages to +0.0
    fl = x._dtype.is_floating_point
    for v in W.offset_views(buf, kernel_size, (1, 1), stride, count):
        out = (v + 0.0 if fl else v.clone()) if out is None else out.add_(v)
    return out.div_(avg_divisor(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                divisor_override))


def _avg_pool2d_grad(g, x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override):
    count, _ = W.pool_geometry(x, kernel_size, stride, padding, (1, 1), ceil_mode)
    share = g / avg_divisor(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                            divisor_override)
    acc = W.accumulate_buffer(x._shape[2:], kernel_size, (1, 1), padding, stride, count, g)
    for dst in W.offset_views(acc, kernel_size, (1, 1), stride, count):
        dst.add_(share)
    return W.crop(acc, x._shape[2:], padding)


AVG_POOL2D = Composite(
    "avg_pool2d", ("x",), _avg_pool2d, _avg_pool2d_grad, _pool_meta,
    "avg_pool2d(x, *, kernel_size, stride, padding, ceil_mode, count_include_pad, "
    "divisor_override)", "window means, zero padding, PyTorch's divisor rules")


# The op modules this one's derivative rules and decompositions call (at run time only).
from .. import creation  # noqa: E402
