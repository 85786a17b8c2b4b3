"""nn.grad: the gradients of convolutions with respect to their input or weight,
computed by differentiating the convolution itself (it is linear in each)."""
from __future__ import annotations

from .. import ops as _ops
from ..autograd import grad as _grad
from ..autograd.grad_mode import enable_grad
from . import functional as F

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _wrt(which, conv, input, weight, grad_output, stride, padding, dilation, groups):
    with enable_grad():
        if which == "input":
            x = _ops.zeros(tuple(input), dtype=grad_output.dtype, device=grad_output.device,
                           requires_grad=True)
            y = conv(x, weight.detach(), None, stride, padding, dilation, groups)
        else:
            x = _ops.zeros(tuple(weight), dtype=grad_output.dtype, device=grad_output.device,
                           requires_grad=True)
            y = conv(input.detach(), x, None, stride, padding, dilation, groups)
        if tuple(y.shape) != tuple(grad_output.shape):
            raise RuntimeError(f"{conv.__name__} gradient: grad_output of shape "
                               f"{list(grad_output.shape)} does not match the convolution's "
                               f"output shape {list(y.shape)}")
        return _grad(y, x, grad_output)[0]


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _wrt("input", F.conv1d, input_size, weight, grad_output, stride, padding, dilation,
                groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _wrt("weight", F.conv1d, input, weight_size, grad_output, stride, padding, dilation,
                groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _wrt("input", F.conv2d, input_size, weight, grad_output, stride, padding, dilation,
                groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _wrt("weight", F.conv2d, input, weight_size, grad_output, stride, padding, dilation,
                groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _wrt("input", F.conv3d, input_size, weight, grad_output, stride, padding, dilation,
                groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _wrt("weight", F.conv3d, input, weight_size, grad_output, stride, padding, dilation,
                groups)
