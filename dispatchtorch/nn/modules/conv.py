"""Conv1d/2d/3d, ConvTranspose1d/2d/3d and their lazy forms, with PyTorch's arguments
and init."""
from __future__ import annotations

import math

from ... import ops as _ops
from .. import functional as F
from .. import init
from .._tuples import ntuple
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin, install_lazy_hooks
from .module import Module

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    _dims = 2
    transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None,
                 output_padding=0):
        super().__init__()
        tup = ntuple(self._dims)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {list(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.dilation = tup(kernel_size), tup(stride), tup(dilation)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"['valid', 'same']")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = tup(padding)
        self.output_padding = tup(output_padding)
        self.groups, self.padding_mode = groups, padding_mode
        shape = (in_channels, out_channels // groups) if self.transposed else \
            (out_channels, in_channels // groups)
        kw = {"device": device, "dtype": dtype}
        self.weight = Parameter(_ops.empty(shape + self.kernel_size, **kw))
        if bias:
            self.bias = Parameter(_ops.empty(out_channels, **kw))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _mode_padding(self):
        """F.pad's list for a non-zero padding_mode (last dim first)."""
        if self.padding == "valid":
            return [0, 0] * self._dims
        spec = []
        for i in reversed(range(self._dims)):
            if self.padding == "same":
                total = self.dilation[i] * (self.kernel_size[i] - 1)
                spec += [total // 2, total - total // 2]
            else:
                spec += [self.padding[i]] * 2
        return spec

    def _check_input(self, input):
        d = self._dims
        if input.dim() not in (d + 1, d + 2):
            raise RuntimeError(f"{self!r}: expected a {d + 1}-D (unbatched) or {d + 2}-D "
                               f"(batched) input, got input of shape {list(input.shape)}")
        c = input.shape[-d - 1]
        if c != self.in_channels:
            raise RuntimeError(f"{self!r}: expected input with {self.in_channels} channels (dim "
                               f"{input.dim() - d - 1}), got input of shape {list(input.shape)}")

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, " \
            f"stride={self.stride}"
        if self.padding != (0,) * self._dims:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._dims:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._dims:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    _dims = 1

    def forward(self, input):
        self._check_input(input)
        if self.padding_mode != "zeros":
            x = F.pad(input, self._mode_padding(), mode=self.padding_mode)
            return F.conv1d(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return F.conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)


class Conv2d(_ConvNd):
    _dims = 2

    def forward(self, input):
        self._check_input(input)
        if self.padding_mode != "zeros":
            x = F.pad(input, self._mode_padding(), mode=self.padding_mode)
            return F.conv2d(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)


class _ConvTransposeNd(_ConvNd):
    transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__} does not accept a padding string")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def _output_padding(self, input, output_size):
        if output_size is None:
            return self.output_padding
        d = self._dims
        size = list(output_size)[-d:]
        pads = []
        for i in range(d):
            smallest = (input.shape[-d + i] - 1) * self.stride[i] - 2 * self.padding[i] + \
                self.dilation[i] * (self.kernel_size[i] - 1) + 1
            extra = size[i] - smallest
            if not 0 <= extra < max(self.stride[i], self.dilation[i]):
                raise ValueError(f"requested an output size of {size}, but valid sizes range from "
                                 f"{smallest} to {smallest + self.stride[i] - 1} (for an input of "
                                 f"{list(input.shape[-d:])})")
            pads.append(extra)
        return tuple(pads)


class ConvTranspose1d(_ConvTransposeNd):
    _dims = 1

    def forward(self, input, output_size=None):
        self._check_input(input)
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    _dims = 2

    def forward(self, input, output_size=None):
        self._check_input(input)
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)


class Conv3d(_ConvNd):
    _dims = 3

    def forward(self, input):
        self._check_input(input)
        if self.padding_mode != "zeros":
            x = F.pad(input, self._mode_padding(), mode=self.padding_mode)
            return F.conv3d(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return F.conv3d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)


class ConvTranspose3d(_ConvTransposeNd):
    _dims = 3

    def forward(self, input, output_size=None):
        self._check_input(input)
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)


class _LazyConvXdMixin(LazyModuleMixin):
    """in_channels comes from the first input (its dim -dims-1)."""

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            from ...autograd.grad_mode import no_grad
            self.in_channels = input.shape[-self._dims - 1]
            if self.in_channels % self.groups:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups)
            else:
                shape = (self.out_channels, self.in_channels // self.groups)
            with no_grad():
                self.weight.materialize(shape + tuple(self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()


def _lazy_conv(base, name):
    def _finish(self, out_channels, device, dtype):
        self.out_channels = out_channels
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if self.bias is not None:
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        install_lazy_hooks(self)

    if base.transposed:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                     groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                     dtype=None):
            base.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups,
                          bias, dilation, padding_mode, device=device, dtype=dtype)
            _finish(self, out_channels, device, dtype)
    else:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                     bias=True, padding_mode="zeros", device=None, dtype=None):
            base.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, bias,
                          padding_mode, device=device, dtype=dtype)
            _finish(self, out_channels, device, dtype)

    return type(name, (_LazyConvXdMixin, base), {"__init__": __init__, "cls_to_become": base,
                                                 "__module__": __name__,
                                                 "__qualname__": name})


LazyConv1d = _lazy_conv(Conv1d, "LazyConv1d")
LazyConv2d = _lazy_conv(Conv2d, "LazyConv2d")
LazyConv3d = _lazy_conv(Conv3d, "LazyConv3d")
LazyConvTranspose1d = _lazy_conv(ConvTranspose1d, "LazyConvTranspose1d")
LazyConvTranspose2d = _lazy_conv(ConvTranspose2d, "LazyConvTranspose2d")
LazyConvTranspose3d = _lazy_conv(ConvTranspose3d, "LazyConvTranspose3d")
