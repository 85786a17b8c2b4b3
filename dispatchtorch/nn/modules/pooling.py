"""Max, average, adaptive (average and max), power-average pooling, 1-3 d, and
max unpooling."""
from __future__ import annotations

from .. import functional as F
from .module import Module


def _check(module, input, dims):
    if input.dim() not in (dims + 1, dims + 2):
        raise RuntimeError(f"{module!r}: expected a {dims + 1}-D (unbatched) or {dims + 2}-D "
                           f"(batched) input, got input of shape {list(input.shape)}")


class _MaxPoolNd(Module):
    _dims = 2

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    _dims = 1

    def forward(self, input):
        _check(self, input, 1)
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class MaxPool2d(_MaxPoolNd):
    def forward(self, input):
        _check(self, input, 2)
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class AvgPool1d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = (kernel_size,) if isinstance(kernel_size, int) else tuple(kernel_size)
        s = kernel_size if stride is None else stride
        self.stride = (s,) if isinstance(s, int) else tuple(s)
        self.padding = (padding,) if isinstance(padding, int) else tuple(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        _check(self, input, 1)
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        _check(self, input, 2)
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool1d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        _check(self, input, 1)
        return F.adaptive_avg_pool1d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        _check(self, input, 2)
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class MaxPool3d(_MaxPoolNd):
    _dims = 3

    def forward(self, input):
        _check(self, input, 3)
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class AvgPool3d(AvgPool2d):
    def forward(self, input):
        _check(self, input, 3)
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    def forward(self, input):
        _check(self, input, 3)
        return F.adaptive_avg_pool3d(input, self.output_size)


class _AdaptiveMaxPoolNd(Module):
    _dims = 1

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        _check(self, input, self._dims)
        fn = (F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d)[self._dims - 1]
        return fn(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    _dims = 1


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    _dims = 2


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    _dims = 3


class _LPPoolNd(Module):
    _dims = 1

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input):
        fn = (F.lp_pool1d, F.lp_pool2d, F.lp_pool3d)[self._dims - 1]
        return fn(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    _dims = 1


class LPPool2d(_LPPoolNd):
    _dims = 2


class LPPool3d(_LPPoolNd):
    _dims = 3


class _MaxUnpoolNd(Module):
    _dims = 1

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding

    def forward(self, input, indices, output_size=None):
        fn = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[self._dims - 1]
        return fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    _dims = 1


class MaxUnpool2d(_MaxUnpoolNd):
    _dims = 2


class MaxUnpool3d(_MaxUnpoolNd):
    _dims = 3


class _FractionalMaxPoolNd(Module):
    _dims = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        self.kernel_size, self.return_indices = kernel_size, return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size, self.output_ratio = output_size, output_ratio
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output size, "
                             f"or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if output_ratio is not None:
            ratios = output_ratio if isinstance(output_ratio, (tuple, list)) else \
                (output_ratio,) * self._dims
            if not all(0 < r < 1 for r in ratios):
                raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        fn = F.fractional_max_pool2d if self._dims == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio,
                  self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    _dims = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    _dims = 3
