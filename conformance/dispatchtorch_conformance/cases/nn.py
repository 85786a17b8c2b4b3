"""Neural-network ops (the `nn` rows of dispatchtorch/ops/nn_ops/), called through
`dispatchtorch.nn.functional` as models call them. A backend may give any of them a
fused kernel; the table then shows whether it ran (no `+d`) and matched."""
import dispatchtorch as torch
import dispatchtorch.nn.functional as F

from .. import samples as S
from ..case import Case, Tol

SUMS = Tol("the op adds many products or terms (a K-sum, a mean, a softmax denominator); "
           "backends order and block those sums differently", float32=(1e-5, 1e-5),
           float64=(1e-7, 1e-7))
FLOATS = "floating"


def _softmax_samples(g):
    a = g.arr
    yield g.sample("last", a((3, 4, 5)), -1)
    yield g.sample("first", a((3, 4, 5)), 0)
    yield g.sample("1d", a((7,)), 0)
    yield g.sample("0d", a(()), 0)
    yield g.sample("empty", a((0, 4)), 1)
    yield g.sample("T", a((5, 7), layout="T"), 0)
    yield g.sample("step", a((4, 9), layout="step"), -1)
    yield g.sample("wide", a((2, 1021), -20, 20), 1)
    yield g.sample("large", g.arr(S.LARGE), 1).skip_checks(*S.NO_LARGE)
    yield g.sample("extremes", g.special(), 0).skip_checks("grad")


def _linear_samples(g):
    a = g.arr
    yield g.sample("bias", a((5, 7)), a((3, 7)), a((3,)))
    yield g.sample("no-bias", a((5, 7)), a((3, 7)))
    # 65 output features: one past a tile of 64 (and of 16, 32)
    yield g.sample("tiles", a((17, 33), -1, 1), a((65, 33), -1, 1), a((65,))).skip_checks("grad")
    yield g.sample("batched", a((2, 4, 7)), a((3, 7)), a((3,)))
    yield g.sample("1d", a((7,)), a((3, 7)), a((3,)))
    yield g.sample("T-weight", a((5, 7), layout="step"), a((3, 7), layout="T"), a((3,)))
    yield g.sample("empty", a((0, 7)), a((3, 7)), a((3,)))
    yield g.sample("large", g.arr(S.LARGE, 0, 1), g.arr((3, S.LARGE[1]), 0, 1), a((3,))) \
        .skip_checks(*S.NO_LARGE)
    yield g.sample("mismatch", a((5, 7)), a((3, 6))).raises(RuntimeError)


def _conv2d_samples(g):
    a = g.arr
    x = a((2, 3, 9, 11))
    yield g.sample("plain", x, a((4, 3, 3, 3)), a((4,)))
    yield g.sample("stride-pad", x, a((4, 3, 3, 2)), None, stride=2, padding=1)
    yield g.sample("dilation", x, a((2, 3, 2, 3)), a((2,)), dilation=2)
    yield g.sample("groups", a((1, 4, 7, 7)), a((6, 2, 3, 3)), a((6,)), groups=2)
    yield g.sample("unbatched", a((3, 8, 8)), a((2, 3, 1, 1)))
    yield g.sample("same", a((1, 2, 6, 5)), a((3, 2, 4, 3)), padding="same")
    yield g.sample("step", a((2, 3, 5, 6), layout="step"), a((4, 3, 3, 3), layout="T"))
    yield g.sample("channels", x, a((4, 2, 3, 3))).raises(RuntimeError)


def _conv2d_backward(grad_output, x, weight, bias=None, wrt="all", **kw):
    """conv2d's backward without a graph: autograd runs the conv2d_backward row (for the
    gradients `wrt` asks for)."""
    x = x.detach().requires_grad_(wrt in ("all", "x"))
    weight = weight.detach().requires_grad_(wrt in ("all", "weight"))
    bias = None if bias is None else bias.detach().requires_grad_(wrt == "all")
    ins = [t for t in (x, weight, bias) if t is not None and t.requires_grad]
    return torch.autograd.grad(F.conv2d(x, weight, bias, **kw), ins, grad_output)


def _conv2d_backward_samples(g):
    a = g.arr
    x = a((2, 3, 9, 11))
    yield g.sample("plain", a((2, 4, 7, 9)), x, a((4, 3, 3, 3)), a((4,)))
    yield g.sample("stride-pad", a((2, 4, 5, 6)), x, a((4, 3, 3, 2)), stride=2, padding=1)
    yield g.sample("dilation", a((2, 2, 7, 7)), x, a((2, 3, 2, 3)), a((2,)), dilation=2)
    yield g.sample("groups", a((1, 6, 3, 2)), a((1, 4, 7, 7)), a((6, 2, 3, 3)), a((6,)),
                   groups=2, stride=(2, 3), padding=(1, 0))
    yield g.sample("weight-only", a((2, 4, 9, 11), layout="T"), x, a((4, 3, 3, 3)),
                   wrt="weight", padding=1)
    yield g.sample("input-only", a((2, 4, 9, 11)), x, a((4, 3, 3, 3), layout="T"), wrt="x",
                   padding=1)


def _conv_transpose2d_samples(g):
    a = g.arr
    yield g.sample("plain", a((2, 4, 5, 6)), a((4, 3, 3, 3)), a((3,)))
    yield g.sample("stride", a((1, 4, 4, 5)), a((4, 2, 3, 2)), None, stride=2, padding=1,
                   output_padding=1)
    yield g.sample("groups", a((1, 4, 5, 5)), a((4, 3, 2, 2)), a((6,)), groups=2)
    yield g.sample("unbatched", a((4, 3, 3)), a((4, 2, 2, 2)))


def _pool_samples(avg):
    def gen(g):
        x = g.arr((2, 3, 9, 11))
        yield g.sample("k3", x, 3)
        yield g.sample("stride-pad", x, 3, 2, 1)
        yield g.sample("ceil", x, (2, 3), 2, ceil_mode=True)
        yield g.sample("unbatched", g.arr((3, 6, 7)), 2)
        yield g.sample("T", g.arr((2, 3, 8, 6), layout="T"), 2)
        if avg:
            yield g.sample("no-pad-count", x, 3, 2, 1, count_include_pad=False)
            yield g.sample("divisor", x, 2, divisor_override=3)
        else:
            yield g.sample("dilation", x, 2, 1, 0, 2)
            yield g.sample("extremes", g.host(g.special().values.reshape(1, 1, 2, 9)), 2) \
                .skip_checks("grad")
    return gen


def _max_pool2d_backward(grad_output, x, *args, **kw):
    """max_pool2d's backward without a graph: autograd runs the max_pool2d_backward row."""
    x = x.detach().requires_grad_()
    return torch.autograd.grad(F.max_pool2d(x, *args, **kw), x, grad_output)[0]


def _max_pool2d_backward_samples(g):
    a = g.arr
    x = a((2, 3, 9, 11))
    yield g.sample("k2", a((2, 3, 4, 5)), x, 2)
    yield g.sample("k3-overlap", a((2, 3, 7, 9)), x, 3, 1)
    yield g.sample("stride-pad", a((2, 3, 5, 6)), x, 3, 2, 1)
    yield g.sample("ceil", a((2, 3, 5, 5), layout="T"), x, (2, 3), 2, ceil_mode=True)
    yield g.sample("dilation", a((2, 3, 7, 9)), x, 2, 1, 0, 2)
    yield g.sample("ties", a((1, 2, 3, 3)), g.host([[[[float(v % 3) for v in range(r, r + 6)]
                                                      for r in range(6)]] * 2]), 2)


def _norm_samples(kind):
    def gen(g):
        a = g.arr
        if kind == "layer":
            yield g.sample("affine", a((4, 6, 8)), (8,), a((8,)), a((8,)))
            yield g.sample("2d-shape", a((3, 6, 8)), (6, 8), a((6, 8)), a((6, 8)), eps=1e-3)
            yield g.sample("plain", a((5, 7)), (7,))
            yield g.sample("T", a((6, 5), layout="T"), (6,), a((6,)), a((6,)))
        elif kind == "rms":
            yield g.sample("weight", a((4, 6, 8)), (8,), a((8,)))
            yield g.sample("plain", a((5, 7)), (7,))
            yield g.sample("eps", a((3, 6, 8)), (6, 8), a((6, 8)), eps=1e-3)
        else:
            yield g.sample("affine", a((2, 6, 5, 5)), 3, a((6,)), a((6,)))
            yield g.sample("plain", a((3, 4, 7)), 2)
            yield g.sample("one-group", a((2, 3, 4)), 1, a((3,)), a((3,)))
            yield g.sample("indivisible", a((2, 6, 5)), 4).raises(RuntimeError)
    return gen


def _layer_norm_backward(grad_output, x, normalized_shape, weight=None, bias=None, wrt="all",
                         **kw):
    """layer_norm's backward without a graph: autograd runs the layer_norm_backward row
    (for the gradients `wrt` asks for)."""
    x = x.detach().requires_grad_(wrt in ("all", "x"))
    weight = None if weight is None else weight.detach().requires_grad_(wrt in ("all", "weight"))
    bias = None if bias is None else bias.detach().requires_grad_(wrt == "all")
    ins = [t for t in (x, weight, bias) if t is not None and t.requires_grad]
    return torch.autograd.grad(F.layer_norm(x, normalized_shape, weight, bias, **kw), ins,
                               grad_output)


def _layer_norm_backward_samples(g):
    a = g.arr
    yield g.sample("affine", a((4, 6, 8)), a((4, 6, 8)), (8,), a((8,)), a((8,)))
    yield g.sample("2d-shape", a((3, 6, 8)), a((3, 6, 8)), (6, 8), a((6, 8)), a((6, 8)),
                   eps=1e-3)
    yield g.sample("plain", a((5, 7)), a((5, 7)), (7,))
    yield g.sample("T", a((6, 5), layout="T"), a((6, 5), layout="T"), (5,), a((5,)), a((5,)))
    yield g.sample("weight-only", a((9, 16)), a((9, 16)), (16,), a((16,)), a((16,)),
                   wrt="weight")
    yield g.sample("rows", a((300, 64)), a((300, 64)), (64,), a((64,)), a((64,)))


def _batch_norm_samples(g):
    a = g.arr
    x = a((4, 3, 5, 5))
    yield g.sample("train", x, a((3,)), a((3,), 0.5, 2), a((3,)), a((3,)), training=True)
    yield g.sample("train-no-stats", a((6, 4)), None, None, a((4,)), a((4,)), training=True)
    yield g.sample("eval", x, a((3,)), a((3,), 0.5, 2), a((3,)), a((3,)))
    yield g.sample("step", a((4, 3, 6), layout="step"), a((3,)), a((3,), 0.5, 2), training=True,
                   momentum=0.3)


def _embedding_samples(g):
    i = g.index
    yield g.sample("2d", i((3, 5), 10), g.arr((10, 4)))
    yield g.sample("padding", i((7,), 6), g.arr((6, 3)), padding_idx=0)
    yield g.sample("0d", i((), 6), g.arr((6, 3)))
    yield g.sample("T-weight", i((4,), 5), g.arr((5, 3), layout="T"))
    yield g.sample("out-of-range", g.host([9], dtype="int64", grad=False), g.arr((6, 3))) \
        .raises(IndexError)


def _dropout(x, p, training=True):
    torch.manual_seed(1234)         # the mask is drawn on the host: the same on every device
    return F.dropout(x, p, training)


def _sdpa_samples(g):
    a = g.arr
    q, k, v = a((2, 3, 4, 8)), a((2, 3, 6, 8)), a((2, 3, 6, 5))
    yield g.sample("plain", q, k, v)
    yield g.sample("causal", q, a((2, 3, 4, 8)), a((2, 3, 4, 5)), is_causal=True)
    yield g.sample("bool-mask", q, k, v, g.mask((4, 6), 0.8))
    yield g.sample("float-mask", q, k, v, a((4, 6)))
    yield g.sample("scale", a((5, 8)), a((7, 8)), a((7, 3)), scale=0.5)
    yield g.sample("T", a((3, 8, 4), layout="T"), a((3, 6, 4)), a((3, 6, 2)))


def _loss_samples(cross_entropy):
    def gen(g):
        a, i = g.arr, g.index
        yield g.sample("mean", a((5, 7)), i((5,), 7))
        yield g.sample("sum-weight", a((5, 7)), i((5,), 7), a((7,), 0.1, 2), reduction="sum")
        yield g.sample("none", a((5, 7)), i((5,), 7), reduction="none")
        yield g.sample("ignore", a((6, 4)), g.host([0, 3, 1, 1, 2, 0], dtype="int64", grad=False),
                       ignore_index=1)
        yield g.sample("k-dim", a((2, 7, 3)), i((2, 3), 7))
        yield g.sample("1d", a((7,)), i((), 7))
        yield g.sample("T", a((7, 5), layout="T"), i((5,), 7))
        if cross_entropy:
            yield g.sample("smoothing", a((5, 7)), i((5,), 7), label_smoothing=0.1)
            yield g.sample("probabilities", a((4, 6)), g.arr((4, 6), 0, 1))
        yield g.sample("class-out-of-range", a((3, 4)), g.host([0, 4, 1], dtype="int64", grad=False)) \
            .raises(IndexError)
    return gen


def _unfold_samples(g):
    a = g.arr
    yield g.sample("plain", a((2, 3, 6, 7)), (2, 3))
    yield g.sample("stride-pad", a((1, 2, 7, 7)), 3, 1, 1, 2)
    yield g.sample("dilation", a((1, 2, 8, 9)), 2, 2)
    yield g.sample("step", a((2, 2, 5, 4), layout="step"), 2)


def _fold_samples(g):
    a = g.arr
    yield g.sample("plain", a((2, 18, 20)), (6, 7), (2, 3))
    yield g.sample("stride-pad", a((1, 18, 16)), (7, 7), 3, 1, 1, 2)
    yield g.sample("T", a((1, 8, 12), layout="T"), (4, 5), 2)
    yield g.sample("blocks", a((1, 4, 5)), (4, 5), 2).raises(RuntimeError)


def _gelu_backward(approximate):
    """gelu's backward without a graph: autograd runs the gelu_backward row."""
    def fn(grad_output, x):
        x = x.detach().requires_grad_()
        return torch.autograd.grad(F.gelu(x, approximate=approximate), x, grad_output)[0]
    return fn


def _gelu_backward_samples(g):
    yield g.sample("basic", g.arr((3, 4), -1, 1), g.arr((3, 4), -5, 5))
    yield g.sample("wide", g.arr((2, 70), -2, 2), g.arr((2, 70), -8, 8))


def _softmax_backward(grad_output, x, dim):
    """softmax's backward without a graph: autograd runs the softmax_backward row."""
    x = x.detach().requires_grad_()
    return torch.autograd.grad(F.softmax(x, dim=dim), x, grad_output)[0]


def _softmax_backward_samples(g):
    a = g.arr
    yield g.sample("last", a((3, 4, 9)), a((3, 4, 9), -4, 4), -1)
    yield g.sample("middle", a((3, 4, 9)), a((3, 4, 9), -4, 4), 1)
    yield g.sample("T", a((6, 5), layout="T"), a((6, 5), layout="T"), 0)
    yield g.sample("rows", a((40, 64)), a((40, 64), -6, 6), -1)


def _log_softmax_backward(grad_output, x, dim):
    """log_softmax's backward without a graph: autograd runs the log_softmax_backward row."""
    x = x.detach().requires_grad_()
    return torch.autograd.grad(F.log_softmax(x, dim=dim), x, grad_output)[0]


def _nll_loss_backward(x, target, weight=None, **kw):
    """nll_loss's backward without a graph: autograd runs the nll_loss_backward row."""
    x = x.detach().requires_grad_()
    loss = F.nll_loss(x, target, weight, **kw)
    return torch.autograd.grad(loss, x, torch.ones_like(loss))[0]


def _nll_loss_backward_samples(g):
    for sample in _loss_samples(False)(g):
        if sample.name != "class-out-of-range":
            yield sample


CASES = [
    Case("softmax", F.softmax, _softmax_samples, dtypes=FLOATS, tol=SUMS),
    Case("softmax_backward", _softmax_backward, _softmax_backward_samples, dtypes=FLOATS,
         tol=SUMS, grad=False),
    Case("log_softmax", F.log_softmax, _softmax_samples, dtypes=FLOATS, tol=SUMS),
    Case("log_softmax_backward", _log_softmax_backward, _softmax_backward_samples,
         dtypes=FLOATS, tol=SUMS, grad=False),
    Case("gelu", F.gelu, S.unary(-5, 5), dtypes=FLOATS),
    Case("gelu", lambda x: F.gelu(x, approximate="tanh"), S.unary(-5, 5), name="gelu_tanh",
         dtypes=FLOATS),
    Case("gelu_backward", _gelu_backward("none"), _gelu_backward_samples, dtypes=FLOATS,
         grad=False),
    Case("gelu_backward", _gelu_backward("tanh"), _gelu_backward_samples,
         name="gelu_backward_tanh", dtypes=FLOATS, grad=False),
    Case("silu", F.silu, S.unary(-8, 8), dtypes=FLOATS),
    Case("linear", F.linear, _linear_samples, dtypes=FLOATS, tol=SUMS),
    Case("conv2d", F.conv2d, _conv2d_samples, dtypes=FLOATS, tol=SUMS),
    Case("conv2d_backward", _conv2d_backward, _conv2d_backward_samples, dtypes=FLOATS,
         tol=SUMS, grad=False),
    Case("conv_transpose2d", F.conv_transpose2d, _conv_transpose2d_samples, dtypes=FLOATS,
         tol=SUMS),
    Case("max_pool2d", F.max_pool2d, _pool_samples(False), dtypes=FLOATS),
    Case("max_pool2d_backward", _max_pool2d_backward, _max_pool2d_backward_samples,
         dtypes=FLOATS, grad=False),
    Case("avg_pool2d", F.avg_pool2d, _pool_samples(True), dtypes=FLOATS, tol=SUMS),
    Case("im2col", F.unfold, _unfold_samples, dtypes=FLOATS),
    Case("col2im", F.fold, _fold_samples, dtypes=FLOATS, tol=SUMS),
    Case("layer_norm", F.layer_norm, _norm_samples("layer"), dtypes=FLOATS, tol=SUMS),
    Case("layer_norm_backward", _layer_norm_backward, _layer_norm_backward_samples,
         dtypes=FLOATS, tol=SUMS, grad=False),
    Case("rms_norm", F.rms_norm, _norm_samples("rms"), dtypes=FLOATS, tol=SUMS),
    Case("group_norm", F.group_norm, _norm_samples("group"), dtypes=FLOATS, tol=SUMS),
    Case("batch_norm", F.batch_norm, _batch_norm_samples, dtypes=FLOATS, tol=SUMS),
    Case("embedding", F.embedding, _embedding_samples, dtypes=FLOATS),
    Case("dropout", _dropout, lambda g: [
        g.sample("train", g.arr((7, 13)), 0.3), g.sample("eval", g.arr((5,)), 0.3, False),
        g.sample("step", g.arr((4, 9), layout="step"), 0.5),
        g.sample("large", g.arr(S.LARGE), 0.1).skip_checks(*S.NO_LARGE)], dtypes=FLOATS),
    Case("scaled_dot_product_attention", F.scaled_dot_product_attention, _sdpa_samples,
         dtypes=FLOATS, tol=SUMS),
    Case("nll_loss", F.nll_loss, _loss_samples(False), dtypes=FLOATS, tol=SUMS),
    Case("nll_loss_backward", _nll_loss_backward, _nll_loss_backward_samples, dtypes=FLOATS,
         tol=SUMS, grad=False),
    Case("cross_entropy", F.cross_entropy, _loss_samples(True), dtypes=FLOATS, tol=SUMS),
]
