"""torch.testing.make_tensor: random test inputs with PyTorch's value ranges per dtype
(bool [0, 2), signed integers [-9, 10), unsigned [0, 10), floating and complex [-9, 9)),
its clamping of low / high to the dtype and its errors."""
from __future__ import annotations

import collections.abc
import math
import warnings

from .. import ops as _ops
from .._dtype import (bfloat16, bool_, complex64, complex128, finfo, float16, float32, float64,
                      iinfo, int8, int16, int32, int64, uint8)

_INTEGRAL = (uint8, int8, int16, int32, int64)
_FLOATING = (float16, bfloat16, float32, float64)
_COMPLEX = (complex64, complex128)


def _low_high(dtype, low, high, lowest, highest, default_low, default_high):
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype in _FLOATING + _COMPLEX:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex "
                      "types is deprecated since 2.1 and will be removed in 2.3. Use "
                      "`torch.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if dtype is bool_ or dtype in _INTEGRAL:
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of shape filled with values drawn uniformly from [low, high)."""
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous} and "
                         f"memory_format={memory_format}")
    integral = dtype is bool_ or dtype in _INTEGRAL
    if requires_grad and integral:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral dtypes, "
                         f"but got dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is bool_:
        low, high = _low_high(dtype, low, high, 0, 2, 0, 2)
        result = _ops.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL:
        info = iinfo(dtype)
        low, high = _low_high(dtype, low, high, info.min, info.max + (dtype is not int64),
                              -9, 10)
        result = _ops.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _FLOATING + _COMPLEX:
        info = finfo(dtype)
        low, high = _low_high(dtype, low, high, info.min, info.max, -9, 9)
        result = _ops.empty(shape, device=device, dtype=dtype)
        real = _ops.view_as_real(result) if dtype in _COMPLEX else result
        if high - low >= finfo(real.dtype).max:     # the range itself would overflow
            real.uniform_(low / 2, high / 2).mul_(2)
        else:
            real.uniform_(low, high)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by "
                        "torch.testing.make_tensor(). To request support, file an issue at: "
                        "https://github.com/pytorch/pytorch/issues")
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if integral else finfo(dtype).tiny
    if not integral:
        result.requires_grad = requires_grad
    return result
