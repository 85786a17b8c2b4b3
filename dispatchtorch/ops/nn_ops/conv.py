"""The nn rows of convolution in one place: the im2col / col2im rows (F.unfold / F.fold) and conv2d /
conv_transpose2d as batched matmuls over patches."""
from __future__ import annotations

from ...autograd.grad_mode import STATE
from . import windows as W
from ._row import Composite


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
    if not STATE.enabled and g._dtype is x._dtype:
        # no graph records the backward: one row, which a backend may implement directly
        mask = (bool(needs[0]), bool(needs[1]), bool(needs[2]))
        if not any(mask):
            return None, None, None
        r = CONV2D_BACKWARD(g, x, weight, stride=stride, padding=padding, dilation=dilation,
                            groups=groups, output_mask=mask)
        it = iter(r if isinstance(r, tuple) else (r,))
        return tuple(next(it) if m else None for m in mask)
    return _conv2d_backward_all(g, x, weight, stride, padding, dilation, groups, needs)


def _conv2d_backward_all(g, x, weight, stride, padding, dilation, groups, needs):
    """conv2d's gradients in x, weight and bias (None where needs is false)."""
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


def _conv2d_backward(g, x, weight, stride, padding, dilation, groups, output_mask):
    r = _conv2d_backward_all(g, x, weight, stride, padding, dilation, groups, output_mask)
    return tuple(t for t in r if t is not None)


def _conv2d_backward_meta(g, x, weight, stride, padding, dilation, groups, output_mask):
    shapes = (x._shape, weight._shape, (weight._shape[0],))
    return tuple((s, g._dtype) for s, m in zip(shapes, output_mask) if m)


def _conv2d_meta(x, weight, bias, stride, padding, dilation, groups):
    count = _geometry(x, weight._shape[2:], dilation, padding, stride)
    return (((x._shape[0], weight._shape[0]) + count, x._dtype),)


CONV2D = Composite("conv2d", ("x", "weight", "bias"), _conv2d, _conv2d_grad, _conv2d_meta,
                   "conv2d(x, weight, bias, *, stride, padding, dilation, groups)",
                   "x (N, C, H, W), weight (O, C/groups, kh, kw); padding symmetric (ph, pw)")
CONV2D_BACKWARD = Composite(
    "conv2d_backward", ("grad_output", "x", "weight"), _conv2d_backward, None,
    _conv2d_backward_meta,
    "conv2d_backward(grad_output, x, weight, *, stride, padding, dilation, groups, output_mask)",
    "conv2d's gradients in (x, weight, bias), those output_mask asks for, in that order "
    "(its backward without a graph)")


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
        # the conv2d row: a backend's own kernel where it has one (a graph, under
        # create_graph, records conv2d's rule)
        gx = CONV2D(g, weight, None, stride=stride, padding=padding, dilation=dilation,
                    groups=groups)
        # x's size from g's (x is saved only when the weight needs a gradient)
        h, w = ((n - 1 - op - d * (k - 1) + 2 * p) // s + 1 for n, op, d, k, p, s in
                zip(g._shape[2:], output_padding, dilation, weight._shape[2:], padding, stride))
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
