"""The composite ops of the neural-network layers: one schema row each.

Each row is a composite (kind "nn"): a decomposition into public ops, which every
backend runs, and where it is cheaper than differentiating the decomposition, a
derivative rule of its own (then the forward runs as one graph node, whichever
kernel computed it). A backend may register its own fused kernel under the row's
name; it is called as `fn(*outs, *inputs, **params)`, inputs in the row's `args`
order (None where an optional input is absent), params as in the row's signature,
outputs allocated by the frontend with the shapes `meta` gives. `nn.functional`
validates arguments and calls these rows; nothing here checks user input.
"""
from __future__ import annotations

import math

from .. import _dtype as D
from .._place import place_of
from .._run import apply, decompose, resolve
from .._shape import norm_dim
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from ..dispatch import DECOMPOSE, OpDef, register_op
from . import _api
from . import nn_windows as W


class Composite:
    """A callable row: `ROW(*inputs, **params)` runs the backend's own kernel where
    it registered one (and autograd allows it), the decomposition otherwise."""

    __slots__ = ("op", "meta", "kernels", "check")

    def __init__(self, name, args, decomp, grad=None, meta=None, signature="", doc="",
                 save_for=None, check=None):
        self.op = register_op(OpDef(name, kind="nn", args=args, decomp=decomp, grad=grad,
                                    signature=signature, doc=doc, save_for=save_for))
        self.meta = meta
        self.kernels = self.op.kernels
        # check(name, *inputs, **params) -> params: the row's argument checks and
        # normalisation, run before any kernel (one place for every caller)
        self.check = check

    def __call__(self, *inputs, **params):
        if self.check is not None:
            params = self.check(self.op.name, *inputs, **params)
        for x in inputs:
            if isinstance(x, Tensor):
                place = x._place
                break
        k = self.kernels.get(place.type)
        if k is None:
            k = resolve(self.op, place.rt)
        low = _half(inputs)
        if k is not DECOMPOSE and (low is None or not _tracked(inputs)) and \
                (self.check is None or inputs[0].numel()):
            # rows with checks give an empty input to their decomposition: kernels never
            # see one
            return self._kernel(place, inputs, params)
        if low is not None:
            # float16/bfloat16 compute in float32 and round once, as the prims do (a
            # fused kernel doing the same then matches the decomposition); recorded on
            # the float32 inputs, the derivative rule runs in float32 too
            up = tuple(x.float() if isinstance(x, Tensor) and x._dtype is low else x
                       for x in inputs)
            return _round_to(decompose(self.op, up, params), low)
        return decompose(self.op, inputs, params)

    def _kernel(self, place, inputs, params):
        op = self.op
        if op.grad is None and _tracked(inputs):
            return decompose(op, inputs, params)     # a kernel is opaque to autograd
        handles = tuple(x._h if isinstance(x, Tensor) else x for x in inputs)
        kparams = {k: (v._h if isinstance(v, Tensor) else v) for k, v in params.items()}
        return apply(op, place, inputs, handles, self.meta(*inputs, **params), kparams, params)


def _half(inputs):
    """The half-precision dtype of the first floating input, if it is one."""
    for x in inputs:
        if isinstance(x, Tensor) and x._dtype.is_floating_point:
            return x._dtype if x._dtype in (D.float16, D.bfloat16) else None
    return None


def _tracked(inputs):
    return STATE.enabled and any(isinstance(x, Tensor) and x._rg for x in inputs)


def _round_to(r, dt):
    if isinstance(r, Tensor):
        return r.to(dt) if r._dtype is D.float32 else r
    return type(r)(_round_to(x, dt) for x in r) if isinstance(r, tuple) else r


def _same(x, **_):
    return ((x._shape, x._dtype),)


# -- softmax family ------------------------------------------------------------------------------

def _softmax(x, dim):
    if not x.numel():
        return x.clone()
    e = (x - x.amax(dim, keepdim=True)).exp_()
    return e.div_(e.sum(dim, keepdim=True))


def _softmax_grad(g, result, dim):
    # (g - sum(g y)) y; writing into fresh buffers only when no graph records them
    # (a double backward needs every intermediate unmodified)
    d = g - (g * result).sum(dim, keepdim=True)
    return d * result if STATE.enabled else d.mul_(result)


def _log_softmax(x, dim):
    if not x.numel():
        return x.clone()
    s = x - x.amax(dim, keepdim=True)
    return s.sub_(s.exp().sum(dim, keepdim=True).log_())


def _log_softmax_grad(g, result, dim):
    if STATE.enabled:
        return g - result.exp() * g.sum(dim, keepdim=True)
    # g - exp(y) sum(g), built in the one buffer exp(y) allocates
    return result.exp().mul_(g.sum(dim, keepdim=True)).neg_().add_(g)


def _softmax_check(name, x, dim):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    d = norm_dim(dim, x.dim(), name)
    if not x._dtype.is_floating_point and x.numel():
        kernel = f"{name}_lastdim_kernel_impl" if d == x.dim() - 1 or not x.dim() else \
            f"{name}_kernel_impl"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{x._dtype.pt_name}'")
    return {"dim": d}


SOFTMAX = Composite("softmax", ("x",), _softmax, _softmax_grad, _same,
                    "softmax(x, *, dim)", "exp(x) / sum(exp(x)) along dim, max-shifted",
                    check=_softmax_check)
LOG_SOFTMAX = Composite("log_softmax", ("x",), _log_softmax, _log_softmax_grad, _same,
                        "log_softmax(x, *, dim)", "x - logsumexp(x) along dim",
                        check=_softmax_check)

# -- activations -----------------------------------------------------------------------------------

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _gelu(x, approximate):
    if approximate == "tanh":
        inner = (x + 0.044715 * x * x * x) * _SQRT_2_OVER_PI
        return 0.5 * x * (1.0 + inner.tanh_())
    return 0.5 * x * (1.0 + (x * _SQRT_HALF).erf_())


def _gelu_grad(g, x, approximate):
    if approximate == "tanh":
        x2 = x * x
        t = ((x + 0.044715 * x2 * x) * _SQRT_2_OVER_PI).tanh()
        dinner = (1.0 + 3 * 0.044715 * x2) * _SQRT_2_OVER_PI
        return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * dinner)
    if STATE.enabled:
        cdf = 0.5 * (1.0 + (x * _SQRT_HALF).erf())
        pdf = (x * x * -0.5).exp() * _INV_SQRT_2PI
        return g * (cdf + x * pdf)
    # g (cdf + x pdf) in two buffers instead of ten
    cdf = (x * _SQRT_HALF).erf_().add_(1.0).mul_(0.5)
    xpdf = (x * x).mul_(-0.5).exp_().mul_(_INV_SQRT_2PI).mul_(x)
    return xpdf.add_(cdf).mul_(g)


def _silu_grad(g, x):
    s = x.sigmoid()
    return g * s * (1.0 + x * (1.0 - s))


GELU = Composite("gelu", ("x",), _gelu, _gelu_grad, _same, "gelu(x, *, approximate)",
                 "x * Phi(x); approximate='tanh' uses the tanh formula")
SILU = Composite("silu", ("x",), lambda x: x * x.sigmoid(), _silu_grad, _same, "silu(x)",
                 "x * sigmoid(x)")

# -- linear ------------------------------------------------------------------------------------------


def _linear(x, weight, bias):
    if x.dim() == 2:
        y = x @ weight.mT
    else:
        y = (x.reshape(-1, x._shape[-1]) @ weight.mT).reshape(x._shape[:-1] + (weight._shape[0],))
    return y if bias is None else y.add_(bias)


def _linear_grad(g, x, weight, needs):
    out_f, in_f = weight._shape
    g2 = g.reshape(-1, out_f)
    gx = gw = gb = None
    if needs[0]:
        gx = (g2 @ weight).reshape(g._shape[:-1] + (in_f,))
    if needs[1]:
        gw = g2.mT @ x.reshape(-1, in_f)
    if needs[2]:
        gb = g2.sum(0)
    return gx, gw, gb


def _linear_meta(x, weight, bias):
    return ((x._shape[:-1] + (weight._shape[0],), x._dtype),)


LINEAR = Composite("linear", ("x", "weight", "bias"), _linear, _linear_grad, _linear_meta,
                   "linear(x, weight, bias)", "x @ weight.T + bias over the last dim of x",
                   save_for={"x": ("weight",)})

# -- sliding windows: F.unfold / F.fold ------------------------------------------------------------


def _geometry(x, kernel, dilation, padding, stride):
    h, w = x._shape[2:]
    return (W.out_size(h, kernel[0], stride[0], padding[0], dilation[0]),
            W.out_size(w, kernel[1], stride[1], padding[1], dilation[1]))


def _im2col(x, kernel_size, dilation, padding, stride):
    count = _geometry(x, kernel_size, dilation, padding, stride)
    win = W.windows(W.padded(x, *padding), kernel_size, dilation, stride, count)
    n, c = x._shape[:2]
    return win.reshape(n, c * kernel_size[0] * kernel_size[1], count[0] * count[1])


def _im2col_grad(g, x, kernel_size, dilation, padding, stride):
    n, c, h, w = x._shape
    count = _geometry(x, kernel_size, dilation, padding, stride)
    cols = g.reshape((n, c) + tuple(kernel_size) + count)
    return W.col2im(cols, (h, w), kernel_size, dilation, padding, stride)


def _im2col_meta(x, kernel_size, dilation, padding, stride):
    oh, ow = _geometry(x, kernel_size, dilation, padding, stride)
    n, c = x._shape[:2]
    return (((n, c * kernel_size[0] * kernel_size[1], oh * ow), x._dtype),)


def _col2im(x, output_size, kernel_size, dilation, padding, stride):
    n, ckk, _ = x._shape
    kh, kw = kernel_size
    count = tuple(W.out_size(o, k, s, p, d) for o, k, s, p, d in
                  zip(output_size, kernel_size, stride, padding, dilation))
    cols = x.reshape((n, ckk // (kh * kw), kh, kw) + count)
    return W.col2im(cols, tuple(output_size), kernel_size, dilation, padding, stride).contiguous()


def _col2im_grad(g, output_size, kernel_size, dilation, padding, stride):
    return _im2col(g, kernel_size, dilation, padding, stride)


def _col2im_meta(x, output_size, kernel_size, dilation, padding, stride):
    n, ckk, _ = x._shape
    return (((n, ckk // (kernel_size[0] * kernel_size[1])) + tuple(output_size), x._dtype),)


IM2COL = Composite("im2col", ("x",), _im2col, _im2col_grad, _im2col_meta,
                   "im2col(x, *, kernel_size, dilation, padding, stride)",
                   "F.unfold: (N, C, H, W) -> (N, C*kh*kw, L) sliding blocks, zero padding")
COL2IM = Composite("col2im", ("x",), _col2im, _col2im_grad, _col2im_meta,
                   "col2im(x, *, output_size, kernel_size, dilation, padding, stride)",
                   "F.fold: (N, C*kh*kw, L) -> (N, C, H, W), overlapping blocks summed")

# -- convolution: batched matmuls over patches (N, C*kh*kw, L) ----------------------------------


def _group_weight(weight, groups):
    """(O, C/G, kh, kw) -> (O, C/G*kh*kw) or (G, O/G, C/G*kh*kw)."""
    o = weight._shape[0]
    return weight.reshape(o, -1) if groups == 1 else weight.reshape(groups, o // groups, -1)


def _grouped(t, groups):
    """(N, C, *) -> (N, C, L) or (N, G, C/G, L)."""
    n, c = t._shape[:2]
    return t.reshape(n, c, -1) if groups == 1 else t.reshape(n, groups, c // groups, -1)


def _add_bias(y, bias):
    if bias is None:
        return y
    b = bias.reshape(-1, 1, 1)
    return y + b if STATE.enabled and (y._rg or b._rg) else y.add_(b)


def _strided_cols(x, kernel, stride, padding, dilation, groups):
    count = _geometry(x, kernel, dilation, padding, stride)
    win = W.windows(W.padded(x, *padding), kernel, dilation, stride, count)
    return _grouped(win.reshape(x._shape[0], -1, count[0] * count[1]), groups), count


def _conv2d(x, weight, bias, stride, padding, dilation, groups):
    n, o = x._shape[0], weight._shape[0]
    kernel = weight._shape[2:]
    wg = _group_weight(weight, groups)
    if stride == (1, 1):
        hp, wp, oh, ow = W.flat_geometry(*x._shape[2:], kernel, dilation, padding)
        y = W.from_flat(wg @ W.flat_cols(x, kernel, dilation, padding, groups), n, oh, ow, wp)
    else:
        cols, count = _strided_cols(x, kernel, stride, padding, dilation, groups)
        y = (wg @ cols).reshape((n, o) + count)
    return _add_bias(y, bias)


def _conv2d_grad(g, x, weight, stride, padding, dilation, groups, needs):
    gx = gw = gb = None
    n, c, h, w = x._shape
    kernel = weight._shape[2:]
    wg = _group_weight(weight, groups)
    if stride == (1, 1):
        _, wp, oh, _ = W.flat_geometry(h, w, kernel, dilation, padding)
        gf = W.to_flat(g, oh, wp, groups)                      # (O, N*OH*Wp), junk zero
        if needs[0]:
            gx = W.flat_fold(wg.mT @ gf, n, c, (h, w), kernel, dilation, padding)
        if needs[1]:
            cols = W.flat_cols(x, kernel, dilation, padding, groups)
            gw = (gf @ cols.mT).reshape(weight._shape)
    else:
        gf = _grouped(g, groups)
        if needs[0]:
            gcols = wg.mT @ gf                                 # (N, [G,] C/G*kh*kw, L)
            cols6 = gcols.reshape((n, c) + tuple(kernel) + g._shape[2:])
            gx = W.col2im(cols6, (h, w), kernel, dilation, padding, stride)
        if needs[1]:
            cols = _strided_cols(x, kernel, stride, padding, dilation, groups)[0]
            gw = (gf @ cols.mT).sum(0).reshape(weight._shape)
    if needs[2]:
        gb = g.sum((0, 2, 3))
    return gx, gw, gb


def _conv2d_meta(x, weight, bias, stride, padding, dilation, groups):
    count = _geometry(x, weight._shape[2:], dilation, padding, stride)
    return (((x._shape[0], weight._shape[0]) + count, x._dtype),)


CONV2D = Composite("conv2d", ("x", "weight", "bias"), _conv2d, _conv2d_grad, _conv2d_meta,
                   "conv2d(x, weight, bias, *, stride, padding, dilation, groups)",
                   "x (N, C, H, W), weight (O, C/groups, kh, kw); padding symmetric (ph, pw)")


def transposed_size(n, k, s, p, d, output_padding):
    return (n - 1) * s - 2 * p + d * (k - 1) + output_padding + 1


def _transposed_sizes(x, weight, stride, padding, output_padding, dilation):
    return tuple(transposed_size(x._shape[2 + i], weight._shape[2 + i], stride[i], padding[i],
                                 dilation[i], output_padding[i]) for i in range(2))


def _conv_transpose2d(x, weight, bias, stride, padding, output_padding, groups, dilation):
    """The adjoint of conv2d in its input: patches W^T x folded back into an image."""
    n, cin, h, w = x._shape
    cout = weight._shape[1] * groups
    kernel = weight._shape[2:]
    size = _transposed_sizes(x, weight, stride, padding, output_padding, dilation)
    wg = _group_weight(weight, groups).mT                     # (.., Cout/G*kh*kw, Cin/G)
    if stride == (1, 1):
        _, wp, oh, _ = W.flat_geometry(*size, kernel, dilation, padding)
        y = W.flat_fold(wg @ W.to_flat(x, oh, wp, groups), n, cout, size, kernel, dilation,
                        padding)
    else:
        cols = (wg @ _grouped(x, groups)).reshape((n, cout) + tuple(kernel) + (h, w))
        y = W.col2im(cols, size, kernel, dilation, padding, stride)
    return _add_bias(y.contiguous(), bias)


def _conv_transpose2d_grad(g, x, weight, stride, padding, output_padding, groups, dilation,
                           needs):
    gx = gw = gb = None
    if needs[0]:
        gx = _conv2d(g, weight, None, stride, padding, dilation, groups)
        h, w = x._shape[2:]
        if gx._shape[2:] != (h, w):           # output_padding rows have no input behind them
            gx = gx.narrow(2, 0, h).narrow(3, 0, w)
    if needs[1]:
        kernel = weight._shape[2:]
        if stride == (1, 1):
            _, wp, oh, _ = W.flat_geometry(*g._shape[2:], kernel, dilation, padding)
            gw = W.to_flat(x, oh, wp, groups) @ W.flat_cols(g, kernel, dilation, padding,
                                                              groups).mT
        else:
            cols, count = _strided_cols(g, kernel, stride, padding, dilation, groups)
            # output_padding can leave g room for more windows than x has pixels: those
            # windows meet zeros in x
            xz = W.padded(x, 0, 0, 0.0, count[0] - x._shape[2], count[1] - x._shape[3])
            gw = (_grouped(xz, groups) @ cols.mT).sum(0)
        gw = gw.reshape(weight._shape)
    if needs[2]:
        gb = g.sum((0, 2, 3))
    return gx, gw, gb


def _conv_transpose2d_meta(x, weight, bias, stride, padding, output_padding, groups, dilation):
    size = _transposed_sizes(x, weight, stride, padding, output_padding, dilation)
    return (((x._shape[0], weight._shape[1] * groups) + size, x._dtype),)


CONV_TRANSPOSE2D = Composite(
    "conv_transpose2d", ("x", "weight", "bias"), _conv_transpose2d, _conv_transpose2d_grad,
    _conv_transpose2d_meta,
    "conv_transpose2d(x, weight, bias, *, stride, padding, output_padding, groups, dilation)",
    "the adjoint of conv2d in x; weight (C_in, C_out/groups, kh, kw)",
    save_for={"x": ("weight",)})

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
    for v in W.offset_views(buf, kernel_size, dilation, stride, count):
        out = v.clone() if out is None else out.maximum_(v)
    return out


def _max_pool2d_grad(g, x, result, kernel_size, stride, padding, dilation, ceil_mode):
    """The gradient goes to the first maximum of each window (PyTorch's choice)."""
    buf, count = _pool_buffer(x, kernel_size, stride, padding, dilation, ceil_mode,
                              _max_fill(x._dtype))
    acc = W.accumulate_buffer(x._shape[2:], kernel_size, dilation, padding, stride, count, g)
    taken = None
    for v, dst in zip(W.offset_views(buf, kernel_size, dilation, stride, count),
                      W.offset_views(acc, kernel_size, dilation, stride, count)):
        hit = v == result
        if taken is None:
            taken = hit
        else:
            hit = hit & ~taken
            taken = taken | hit
        dst.add_(g * hit)
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
        d = _api.tensor(np.outer(sizes[0], sizes[1]), dtype=x._dtype, device=x.device)
        if len(_DIVISORS) < 256:
            _DIVISORS[key] = d
    return d


def _avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    buf, count = _pool_buffer(x, kernel_size, stride, padding, (1, 1), ceil_mode, 0.0)
    out = None
    for v in W.offset_views(buf, kernel_size, (1, 1), stride, count):
        out = v.clone() if out is None else out.add_(v)
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
    return y if bias is None else y.add_(bias)


def _layer_norm_grad(g, x, weight, normalized_shape, eps, needs):
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


LAYER_NORM = Composite("layer_norm", ("x", "weight", "bias"), _layer_norm, _layer_norm_grad,
                       lambda x, *a, **k: _same(x),
                       "layer_norm(x, weight, bias, *, normalized_shape, eps)",
                       "normalise over the last len(normalized_shape) dims (biased variance)")


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


GROUP_NORM = Composite("group_norm", ("x", "weight", "bias"), _group_norm, None,
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
            from .memory import write_into     # PyTorch writes expanded stats too
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

# -- embedding, dropout --------------------------------------------------------------------------


def _embedding(weight, indices, padding_idx, num_weights):
    flat = indices.reshape(-1)
    return weight.index_select(0, flat).reshape(indices._shape + (weight._shape[1],))


def _embedding_grad(g, indices, padding_idx, num_weights):
    dim = g._shape[-1]
    flat = indices.reshape(-1)
    g2 = g.reshape(-1, dim)
    if padding_idx is not None:
        g2 = g2 * (flat != padding_idx).unsqueeze(1)
    gw = _api.zeros((num_weights, dim), dtype=g._dtype, device=g.device)
    return gw.index_add(0, flat, g2), None


EMBEDDING = Composite("embedding", ("weight", "indices"), _embedding, _embedding_grad,
                      lambda weight, indices, **k: ((indices._shape + (weight._shape[1],),
                                                     weight._dtype),),
                      "embedding(weight, indices, *, padding_idx, num_weights)",
                      "rows of weight; the padding_idx row gets no gradient")


def _dropout(x, mask, scale):
    return (x * mask).mul_(scale)


DROPOUT = Composite("dropout", ("x", "mask"), _dropout,
                    lambda g, mask, scale: (g * mask * scale, None), _same,
                    "dropout(x, mask: bool, *, scale)",
                    "x * mask * scale; the frontend draws the keep-mask (same numbers on "
                    "every backend)")

# -- attention -------------------------------------------------------------------------------------

_CAUSAL: dict = {}


def causal_mask(L, S, device):
    """The (L, S) bool mask of allowed positions (j <= i), cached per size and device."""
    key = (L, S, str(device))
    m = _CAUSAL.get(key)
    if m is None or m._place is not place_of(device):   # a reloaded backend: a new place
        m = _api.arange(L, device=device).unsqueeze(1) >= _api.arange(S, device=device)
        if len(_CAUSAL) < 64:
            _CAUSAL[key] = m
    return m


def _scores(q, k, attn_mask, is_causal, scale):
    s = (q @ k.mT).mul_(scale) if not (STATE.enabled and (q._rg or k._rg)) else (q @ k.mT) * scale
    if is_causal:
        s = _api.where(causal_mask(q._shape[-2], k._shape[-2], q.device), s, float("-inf"))
    if attn_mask is not None:
        if attn_mask._dtype is D.bool_:
            s = _api.where(attn_mask, s, float("-inf"))
        else:
            s = s + attn_mask
    return s


def _sdpa(q, k, v, attn_mask, is_causal, scale):
    return _softmax(_scores(q, k, attn_mask, is_causal, scale), -1) @ v


def _sdpa_grad(g, q, k, v, attn_mask, is_causal, scale, needs):
    p = _softmax(_scores(q, k, attn_mask, is_causal, scale), -1)
    gv = p.mT @ g if needs[2] else None
    gp = g @ v.mT
    gs = p * (gp - (gp * p).sum(-1, keepdim=True))
    gq = (gs @ k) * scale if needs[0] else None
    gk = (gs.mT @ q) * scale if needs[1] else None
    gm = gs if needs[3] else None
    return gq, gk, gv, gm


SDPA = Composite("scaled_dot_product_attention", ("q", "k", "v", "attn_mask"), _sdpa, _sdpa_grad,
                 lambda q, k, v, m, **kw: ((q._shape[:-1] + (v._shape[-1],), q._dtype),),
                 "scaled_dot_product_attention(q, k, v, attn_mask, *, is_causal, scale)",
                 "softmax(q @ k^T * scale + mask) @ v; a bool mask marks allowed positions")

# -- losses ----------------------------------------------------------------------------------------


def _nll_parts(x, target, weight, ignore_index):
    """Per-element weights (0 where ignored) and the safe class index."""
    cdim = 1 if x.dim() > 1 else 0
    valid = target != ignore_index
    safe = _api.where(valid, target, 0)
    w = valid.to(x._dtype) if weight is None else weight.index_select(0, safe.reshape(-1)) \
        .reshape(safe._shape) * valid
    return cdim, safe, w


def _nll_loss(x, target, weight, reduction, ignore_index):
    cdim, safe, w = _nll_parts(x, target, weight, ignore_index)
    picked = x.gather(cdim, safe.unsqueeze(cdim)).squeeze(cdim) if x.dim() > 1 else x[safe]
    losses = -(picked * w)
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return losses.sum() / w.sum()


def _nll_loss_grad(g, x, target, weight, reduction, ignore_index):
    cdim, safe, w = _nll_parts(x, target, weight, ignore_index)
    if reduction == "mean":
        w = w * (g / w.sum())
    else:
        w = w * g
    coef = (-w).unsqueeze(cdim)
    gx = _api.zeros(x._shape, dtype=x._dtype, device=x.device)
    return gx.scatter(cdim, safe.unsqueeze(cdim), coef), None, None


def _nll_meta(x, target, weight, reduction, ignore_index):
    return ((target._shape if reduction == "none" else (), x._dtype),)


NLL_LOSS = Composite("nll_loss", ("x", "target", "weight"), _nll_loss, _nll_loss_grad, _nll_meta,
                     "nll_loss(x, target: int64, weight, *, reduction, ignore_index)",
                     "-x[n, target[n]] * weight[target[n]], class dim 1; mean divides by the "
                     "summed weights of the non-ignored targets")


def _cross_entropy(x, target, weight, reduction, ignore_index, label_smoothing):
    cdim = 1 if x.dim() > 1 else 0
    logp = LOG_SOFTMAX(x, dim=cdim)
    n_classes = x._shape[cdim]
    wshape = (n_classes,) + (1,) * (x.dim() - cdim - 1)
    if target._dtype.is_floating_point:           # class probabilities
        if label_smoothing:
            target = target * (1 - label_smoothing) + label_smoothing / n_classes
        terms = logp * target
        if weight is not None:
            terms = terms * weight.reshape(wshape)
        losses = -terms.sum(cdim)
        if reduction == "none":
            return losses
        return losses.sum() if reduction == "sum" else losses.sum() / max(losses.numel(), 1)
    nll = NLL_LOSS(logp, target, weight, reduction=reduction, ignore_index=ignore_index)
    if not label_smoothing:
        return nll
    _, _, w = _nll_parts(x, target, weight, ignore_index)
    valid = target != ignore_index
    terms = logp if weight is None else logp * weight.reshape(wshape)
    smooth = -terms.sum(cdim) * valid
    if reduction == "sum":
        smooth = smooth.sum()
    elif reduction == "mean":
        smooth = smooth.sum() / w.sum()
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / n_classes)


def _cross_entropy_meta(x, target, weight, reduction, **kw):
    shape = (x._shape[:1] + x._shape[2:]) if x.dim() > 1 else ()
    return ((shape if reduction == "none" else (), x._dtype),)


CROSS_ENTROPY = Composite(
    "cross_entropy", ("x", "target", "weight"), _cross_entropy, None, _cross_entropy_meta,
    "cross_entropy(x, target, weight, *, reduction, ignore_index, label_smoothing)",
    "log_softmax over dim 1 then nll_loss; target int64 class indices or float probabilities")


METHODS = {
    "softmax": lambda self, dim, dtype=None: SOFTMAX(self if dtype is None else self.to(dtype),
                                                     dim=dim),
    "log_softmax": lambda self, dim, dtype=None: LOG_SOFTMAX(
        self if dtype is None else self.to(dtype), dim=dim),
}
