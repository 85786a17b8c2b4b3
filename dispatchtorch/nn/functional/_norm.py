"""Normalisation: batch, layer, group and RMS norm, and `normalize`."""
from __future__ import annotations

from ... import _dtype as D
from ...ops.norms import vector_norm
from ..._tensor import Tensor
from ...ops import nn_ops as N
from ...ops._out import takes_out
from ._channels_last import in_input_format


def _shape_of(name, normalized_shape):
    """normalized_shape as PyTorch's parser takes it: a sequence of ints (an int is
    refused, as by torch.nn.functional; nn.LayerNorm(4) makes its own tuple)."""
    if not isinstance(normalized_shape, (tuple, list)):
        raise TypeError(f"{name}(): argument 'normalized_shape' (position 2) must be tuple of "
                        f"ints, not {type(normalized_shape).__name__}")
    return tuple(normalized_shape)


def _check_trailing(name, input, shape, weight, bias, star="*, "):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    k = len(shape)
    if input.dim() < k or tuple(input.shape[input.dim() - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[{star}{', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(f"Expected {what} to be of same shape as normalized_shape, but got "
                               f"{what} of shape {list(t.shape)} and normalized_shape = {list(shape)}")


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    shape = _shape_of("layer_norm", normalized_shape)
    _check_trailing("layer_norm", input, shape, weight, bias)
    return N.LAYER_NORM(input, weight, bias, normalized_shape=shape, eps=eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    shape = _shape_of("rms_norm", normalized_shape)
    if not shape:
        raise RuntimeError(f"Expected normalized_shape to be at least 1-dimensional, i.e., "
                           f"containing at least one element, but got normalized_shape = []")
    _check_trailing("rms_norm", input, shape, weight, None, star="*")   # ATen's "[*3]"
    if eps is None:
        eps = D.finfo(input.dtype).eps
    return N.RMS_NORM(input, weight, normalized_shape=shape, eps=eps)


@in_input_format()
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    c = input.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {list(input.shape)} and num_groups={num_groups}")
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (c,):
            raise RuntimeError(f"Expected {what} to be a vector of size equal to the number of "
                               f"channels in input, but got {what} of shape {list(t.shape)} and "
                               f"input of shape {list(input.shape)}")
    return N.GROUP_NORM(input, weight, bias, num_groups=num_groups, eps=eps)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    if not isinstance(input, Tensor):
        raise TypeError(f"batch_norm(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.dim() < 2 and input.numel() == 0:    # PyTorch: an empty input comes back cloned
        return input.clone()
    c = input.shape[1] if input.dim() > 1 else 0    # PyTorch counts no channels in 1-d input
    for what, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(f"batch_norm(): argument '{what}' must be Tensor, not "
                            f"{type(t).__name__}")
        if t is not None and t.numel() != c:
            raise RuntimeError(f"batch_norm: {what} should contain {c} elements not {t.numel()}")
    if input.dim() < 2:
        raise IndexError(f"batch_norm: Dimension out of range (expected to be in range of "
                         f"[{-max(input.dim(), 1)}, {max(input.dim(), 1) - 1}], but got 1)")
    shape = (1, c) + (1,) * (input.dim() - 2)
    if training:
        if input.numel() // c <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {list(input.shape)}")
        return N.BATCH_NORM(input, weight, bias, running_mean=running_mean,
                            running_var=running_var, momentum=momentum, eps=eps)
    if running_mean is None or running_var is None:
        raise RuntimeError(f"{'running_mean' if running_mean is None else 'running_var'} must "
                           "be defined in evaluation mode")
    # eval: a per-channel affine map of the running statistics, in float32 for
    # float16/bfloat16 inputs (rounded once, as the ops it is made of)
    low = input.dtype if input.dtype in (D.float16, D.bfloat16) else None
    up = (lambda t: t.float()) if low is not None else (lambda t: t)
    scale = (up(running_var) + eps).rsqrt()
    if weight is not None:
        scale = scale * up(weight)
    shift = -up(running_mean) * scale
    if bias is not None:
        shift = shift + up(bias)
    out = up(input) * scale.reshape(shape) + shift.reshape(shape)
    return out.to(low) if low is not None else out


@takes_out("normalize")
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p along dim, eps)."""
    if p == 2 and not input.dtype.is_complex:   # max(sqrt(s), eps) as sqrt(max(s, eps^2)):
        # no 0/0 in the gradient
        norm = (input * input).sum(dim, keepdim=True).clamp_min(eps * eps).sqrt()
        return input / norm.expand_as(input)
    if p == 1:
        norm = input.abs().sum(dim, keepdim=True)
    elif p == float("inf"):
        norm = input.abs().amax(dim, keepdim=True)
    else:
        norm = vector_norm(input, p, dim, keepdim=True)
    return input / norm.clamp_min(eps).expand_as(input)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Batch norm of the (1, N*C, *) view, as ATen does; running statistics, when given,
    are updated with the mean over the batch of each instance's statistics."""
    if not isinstance(input, Tensor):
        raise TypeError(f"instance_norm(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if input.dim() < 3:
        raise ValueError(f"instance_norm: expected an input with at least 3 dims (N, C, *), got "
                         f"{list(input.shape)}")
    if use_input_stats:
        spatial = 1
        for s in input.shape[2:]:
            spatial *= s
        if spatial <= 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input "
                             f"size {list(input.shape)}")
    n, c = input.shape[:2]
    x = input.reshape((1, n * c) + tuple(input.shape[2:]))
    rm = running_mean.repeat(n) if running_mean is not None else None
    rv = running_var.repeat(n) if running_var is not None else None
    w = weight.repeat(n) if weight is not None else None
    b = bias.repeat(n) if bias is not None else None
    out = batch_norm(x, rm, rv, w, b, use_input_stats, momentum, eps)
    if use_input_stats and running_mean is not None:
        from ...autograd.grad_mode import no_grad
        with no_grad():
            running_mean.copy_(rm.reshape(n, c).mean(0))
            running_var.copy_(rv.reshape(n, c).mean(0))
    return out.reshape(input.shape)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """input / (k + alpha * mean of squares over `size` neighbouring channels) ** beta."""
    if not isinstance(input, Tensor) or input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got "
                         f"{input.dim() if isinstance(input, Tensor) else type(input).__name__} "
                         f"dimensions)")
    if input.numel() == 0:
        return input
    from ._conv import avg_pool2d
    from ._vision import pad
    n, c = input.shape[:2]
    sq = (input * input).reshape(n, 1, c, -1)
    sq = pad(sq, (0, 0, size // 2, (size - 1) // 2))
    div = avg_pool2d(sq, (size, 1), stride=1).reshape(input.shape)
    return input / (div * alpha + k).pow(beta)
