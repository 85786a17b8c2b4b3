"""Activation functions. The ones backends may fuse (softmax, log_softmax, gelu, silu)
are rows of ops/nn_ops/; the rest are a few public ops each."""
from __future__ import annotations

import struct
import warnings

from ... import ops as _ops
from ..._tensor import Tensor
from ...autograd.function import Function
from ...autograd.grad_mode import is_grad_enabled
from ...ops import nn_ops as N
from ...ops._out import takes_out, write_out


def _check(input, name):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")


def _inplace(input, result, inplace):
    return input.copy_(result) if inplace else result


def relu(input, inplace=False):
    _check(input, "relu")
    return input.relu_() if inplace else input.relu()


def relu_(input):
    return input.relu_()


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    _check(input, "leaky_relu")
    # x * (1 or slope), not where(x > 0, x, x * slope): the where's unused branch added its
    # +0.0 to a -0.0 g, PyTorch's leaky_relu_backward (x > 0 ? g : g * slope) keeps it
    slope = negative_slope
    if input.dtype.is_floating_point:  # the slope in the input's dtype, not float32's
        slope = _ops.full((), negative_slope, dtype=input.dtype, device=input.device)
    return _inplace(input, input * _ops.where(input > 0, 1.0, slope), inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    _check(input, "hardtanh")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    out = input.clamp(min_val, max_val)
    if is_grad_enabled() and input.requires_grad:
        # PyTorch's hardtanh_backward: 0 where input <= min_val or input >= max_val, g
        # elsewhere (a NaN passes g); clamp's passes g at the bounds, so relu6'(0) was 1
        inside = ~((input <= min_val) | (input >= max_val))
        out = _ops.where(inside, input, out.detach())
    return _inplace(input, out, inplace)


def _exp_branch(input, fn):
    """where(x <= 0, fn(x), x) as PyTorch's elu family: the exponential piece sees x only
    where it is taken (0 elsewhere), so the gradient at x = inf is g, not 0 * inf = NaN,
    and a NaN x takes the identity piece (gradient g), as elu_backward's scalar rule."""
    neg = input <= 0
    return _ops.where(neg, fn(_ops.where(neg, input, 0.0)), input)


class _Elu(Function):
    """The elu family (elu, selu, celu) with PyTorch's elu_backward (is_result=False):
    g * input_scale * alpha * scale * exp(x * input_scale) where x <= 0, g * scale elsewhere
    (a NaN x too). Differentiating the where-composition instead added the unused
    branch's +0.0 to a -0.0 g. The exponential sees x only where it is taken, so a
    double backward at x = inf is not 0 * inf."""

    @staticmethod
    def forward(ctx, input, alpha, scale, input_scale, grad_input_scale):
        ctx.save_for_backward(input)
        ctx.coefs = alpha, scale, grad_input_scale
        return _elu_values(input, alpha, scale, input_scale)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        alpha, scale, input_scale = ctx.coefs
        neg = x <= 0
        e = (_ops.where(neg, x, 0.0) * input_scale).exp()
        return (_ops.where(neg, g * input_scale * (alpha * scale) * e, g * scale),
                None, None, None, None)


def _elu_values(input, alpha, scale, input_scale):
    """PyTorch's elu forward: the identity piece at +-0 too (elu(+0, alpha=-2) is +0, not
    expm1(0) * -2 = -0), the exponential one below 0 (and it sees x only there)."""
    neg = input < 0
    x = _ops.where(neg, input, 0.0)
    x = x * input_scale if input_scale != 1 else x
    return _ops.where(neg, x.expm1() * (alpha * scale), input * scale if scale != 1 else input)


def _elu(input, alpha, scale, input_scale, inplace, grad_input_scale=None):
    """In place (elu_ of a tensor that needs grad) keeps the composition: the Function
    saves the input, which the in-place write overwrites. grad_input_scale: celu's
    backward takes 1 / float32(alpha) (derivatives.yaml's 1.0/alpha.toFloat())."""
    if input.requires_grad and is_grad_enabled():
        if not inplace:
            gscale = input_scale if grad_input_scale is None else grad_input_scale
            return _Elu.apply(input, alpha, scale, input_scale, gscale)
        x = input * input_scale if input_scale != 1 else input
        out = _exp_branch(x, lambda v: v.expm1() * (alpha * scale))
        if scale != 1:
            out = _ops.where(input <= 0, out, input * scale)
        return _inplace(input, out, inplace)
    return _inplace(input, _elu_values(input, alpha, scale, input_scale), inplace)


def elu(input, alpha=1.0, inplace=False):
    _check(input, "elu")
    return _elu(input, alpha, 1.0, 1.0, inplace)


def _softplus_values(input, beta, threshold):
    scaled = input * beta if beta != 1 else input
    soft = scaled.exp().log1p()
    if beta != 1:
        soft = soft / beta
    return _ops.where(scaled > threshold, input, soft)


class _Softplus(Function):
    """softplus with PyTorch's own derivative, g * z / (z + 1) with z = exp(beta * x) below
    the threshold and g above it: differentiating the formula instead gives 0 * inf = nan
    for beta = inf."""

    @staticmethod
    def forward(ctx, input, beta, threshold):
        ctx.save_for_backward(input)
        ctx.beta, ctx.threshold = beta, threshold
        return _softplus_values(input, beta, threshold)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        scaled = x * ctx.beta if ctx.beta != 1 else x
        z = scaled.exp()
        return _ops.where(scaled > ctx.threshold, g, g * z / (z + 1)), None, None


@takes_out("softplus")
def softplus(input, beta=1.0, threshold=20.0):
    _check(input, "softplus")
    if input.requires_grad and is_grad_enabled():
        return _Softplus.apply(input, beta, threshold)
    return _softplus_values(input, beta, threshold)


class _Mish(Function):
    """mish with PyTorch's mish_backward, g (tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2)) with
    sp = softplus(x) (the product rule of x * tanh(softplus(x)) gave inf * 0 = NaN for an
    infinite g at x = 0)."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input * _softplus_values(input, 1.0, 20.0).tanh()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        t = _softplus_values(x, 1.0, 20.0).tanh()
        return g * (t + x * x.sigmoid() * (1 - t * t))


def mish(input, inplace=False):
    _check(input, "mish")
    if input.requires_grad and is_grad_enabled():
        return _inplace(input, _Mish.apply(input), inplace)
    return _inplace(input, input * softplus(input).tanh(), inplace)


@takes_out("logsigmoid")
def logsigmoid(input):
    # 0 - softplus(-x), not its negation: PyTorch's min(x, 0) - log1p(exp(-|x|)) is +0.0
    # where softplus(-x) underflows to 0 (x > ~745), not -0.0
    return 0.0 - softplus(-input)


def gelu(input, approximate="none", *, out=None):
    _check(input, "gelu")
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}")
    r = N.GELU(input, approximate=approximate)
    # out= inline, not through takes_out's wrapper: gelu is on the training hot path
    return r if out is None else write_out(out, r, "gelu", (input,))


def silu(input, inplace=False):
    _check(input, "silu")
    return _inplace(input, N.SILU(input), inplace)


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def _softmax_dim(ndim, name):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  f"include dim=X as an argument.", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_input(input, dim, dtype, name):
    _check(input, name)
    if dim is None:
        dim = _softmax_dim(input.dim(), name)
    if dtype is not None:
        input = input.to(dtype)
    elif not input.dtype.is_floating_point:
        raise RuntimeError(f"\"{name}_lastdim_kernel_impl\" not implemented for "
                           f"'{input.dtype.pt_name}'")
    return input, dim


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    input, dim = _softmax_input(input, dim, dtype, "softmax")
    return N.SOFTMAX(input, dim=dim)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    input, dim = _softmax_input(input, dim, dtype, "softmin")
    return N.SOFTMAX(-input, dim=dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    input, dim = _softmax_input(input, dim, dtype, "log_softmax")
    return N.LOG_SOFTMAX(input, dim=dim)


# -- the rest of PyTorch's pointwise activations, a few public ops each -----------------------------

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def elu_(input, alpha=1.0):
    return elu(input, alpha, True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, True)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, True)


def selu(input, inplace=False):
    _check(input, "selu")
    return _elu(input, _SELU_ALPHA, _SELU_SCALE, 1.0, inplace)


def selu_(input):
    return selu(input, True)


def celu(input, alpha=1.0, inplace=False):
    _check(input, "celu")
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _elu(input, alpha, 1.0, 1.0 / alpha, inplace,
                1.0 / struct.unpack("f", struct.pack("f", alpha))[0])


def celu_(input, alpha=1.0):
    return celu(input, alpha, True)


def threshold(input, threshold, value, inplace=False):
    _check(input, "threshold")
    # x <= threshold takes value, as PyTorch's: a NaN stays NaN and passes g
    return _inplace(input, _ops.where(input <= threshold, value, input), inplace)


def threshold_(input, threshold, value):
    return globals()["threshold"](input, threshold, value, True)


def glu(input, dim=-1):
    _check(input, "glu")
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.dim()} is "
                           f"size {n}")
    if input.requires_grad and is_grad_enabled():
        return _Glu.apply(input, dim)
    a, b = input.narrow(dim, 0, n // 2), input.narrow(dim, n // 2, n // 2)
    return a * b.sigmoid()


class _Glu(Function):
    """glu with PyTorch's glu_backward: the halves' gradients g sigmoid(b) and
    g a sigmoid(b) (1 - sigmoid(b)) joined by one cat (the two narrows' backwards summed
    each half with the other's +0.0 padding: -0.0 g gave 0)."""

    @staticmethod
    def forward(ctx, input, dim):
        ctx.save_for_backward(input)
        ctx.dim = dim
        n = input.shape[dim] // 2
        return input.narrow(dim, 0, n) * input.narrow(dim, n, n).sigmoid()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        n = x.shape[ctx.dim] // 2
        a, s = x.narrow(ctx.dim, 0, n), x.narrow(ctx.dim, n, n).sigmoid()
        return _ops.cat([s * g, (1 - s) * s * a * g], ctx.dim), None


# PyTorch's hardsigmoid_backward multiplies by (scalar_t)(1.0f / 6.0f): float32's 1/6
_ONE_SIXTH = 0.1666666716337204


class _Hardsigmoid(Function):
    """hardsigmoid with PyTorch's hardsigmoid_backward, g / 6 inside (-3, 3) and 0 outside
    whatever g is (the clamp's formula gave inf * 0 = NaN there for an infinite g)."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return (input / 6 + 0.5).clamp(0.0, 1.0)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return _ops.where((x > -3) & (x < 3), g * _ONE_SIXTH, 0.0)


class _Hardswish(Function):
    """hardswish with PyTorch 2.13's hardswish_backward: 0 for x <= -3, g (x / 3 + 1/2) on
    (-3, 3), g from 3 up and at NaN (the product rule of x * clamp(x + 3, 0, 6) / 6 gave
    inf * 0 = NaN for an infinite g, and -g/2 at -3)."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input * (input + 3).clamp(0.0, 6.0) / 6

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return _ops.where(x <= -3, 0.0, _ops.where(x < 3, g * (x / 3 + 0.5), g))


def hardsigmoid(input, inplace=False):
    _check(input, "hardsigmoid")
    if input.requires_grad and is_grad_enabled():
        return _inplace(input, _Hardsigmoid.apply(input), inplace)
    return _inplace(input, (input / 6 + 0.5).clamp(0.0, 1.0), inplace)


def hardswish(input, inplace=False):
    _check(input, "hardswish")
    if input.requires_grad and is_grad_enabled():
        return _inplace(input, _Hardswish.apply(input), inplace)
    return _inplace(input, input * (input + 3).clamp(0.0, 6.0) / 6, inplace)


@takes_out("hardshrink")
def hardshrink(input, lambd=0.5):
    _check(input, "hardshrink")
    # PyTorch's: 0 inside [-lambd, lambd], x elsewhere (a NaN stays NaN and passes g)
    return _ops.where((input >= -lambd) & (input <= lambd), 0.0, input)


@takes_out("softshrink")
def softshrink(input, lambd=0.5):
    _check(input, "softshrink")
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    # PyTorch's: x * 0 inside [-lambd, lambd] (a gradient of 0), x -+ lambd elsewhere (a
    # NaN stays NaN and passes g)
    # x - (lambd or -lambd), not where(x > lambd, x - lambd, x + lambd): the inner where's
    # unused branch added its +0.0 to a -0.0 g (PyTorch's softshrink_backward passes g)
    inside = (input >= -lambd) & (input <= lambd)
    lam = lambd
    if input.dtype.is_floating_point:  # the shift in the input's dtype, not float32's
        lam = _ops.full((), lambd, dtype=input.dtype, device=input.device)
    return _ops.where(inside, input.detach() * 0, input - _ops.where(input > lambd, lam, -lam))


def tanhshrink(input):
    _check(input, "tanhshrink")
    return input - input.tanh()


def softsign(input):
    _check(input, "softsign")
    return input / (input.abs() + 1)


def prelu(input, weight):
    _check(input, "prelu")
    if weight.numel() != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.dim() >= 2 else 1
        if weight.numel() != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight.numel()} and channel size = "
                               f"{channels}.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.dim()}")
    if weight.dim() != input.dim():     # as ATen: weight takes input's rank (channels at dim 1)
        shape = [1] * input.dim()
        if input.dim() > 1:
            shape[1] = weight.numel()
        weight = weight.reshape(shape)
    # x times its slope (1 or the weight): PyTorch's prelu backward in one path each,
    # x: g * slope (-0.0 kept), weight: where(x > 0, 0, x * g) (0 at x = inf, not 0 * inf)
    return input * _ops.where(input > 0, 1.0, weight)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: a slope drawn from U(lower, upper) per element in training,
    their mean in evaluation."""
    _check(input, "rrelu")
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    slope = _ops.empty(input.shape, dtype=input.dtype, device=input.device).uniform_(lower, upper)
    return _inplace(input, _ops.where(input >= 0, input, input * slope), inplace)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, True)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Samples from the Gumbel-softmax distribution; hard=True returns one-hot vectors
    whose gradient is the soft sample's (straight-through)."""
    gumbels = -_ops.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = _ops.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


# Tensor.hardshrink / Tensor.prelu, as PyTorch's methods: bound here, in the nn layer that
# owns the functions (ops/methods.py sits below nn and cannot import them)
def _hardshrink_method(self, lambd=0.5):
    return hardshrink(self, lambd)


def _prelu_method(self, weight):
    return prelu(self, weight)


_hardshrink_method.__name__ = _hardshrink_method.__qualname__ = "hardshrink"
_prelu_method.__name__ = _prelu_method.__qualname__ = "prelu"
Tensor.hardshrink = _hardshrink_method
Tensor.prelu = _prelu_method
