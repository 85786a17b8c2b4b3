"""Tensor.view(dtype): the same memory read as another dtype, with ATen's view_dtype
rules and the order of their checks (aten/src/ATen/native/TensorConversions.cpp). A smaller element multiplies the
last size and the other strides by the ratio of the sizes, a larger one divides them
(the last dim must be contiguous and everything divisible). Not differentiable, and no
autograd view: PyTorch's result never requires grad and has no `_base`, but it shares
the version counter, so a write through it still trips a saved tensor's check."""
from __future__ import annotations

from .._run import strides_of
from .retyped import is_conj, retyped_view


def view_dtype(input, dtype):
    if is_conj(input):
        raise RuntimeError("torch.Tensor.view is not supported for conjugate view tensors when "
                           "converting to a different dtype.")
    old = input._dtype
    shape, stride, offset = input._shape, strides_of(input), input._offset
    a, b = old.itemsize, dtype.itemsize
    if a != b:
        what = f"to view {old.pt_name} as {dtype.pt_name} (different element sizes)"
        if not shape:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if b < a:
            _last_contiguous(stride, what)
            r = a // b
            shape = shape[:-1] + (shape[-1] * r,)
            stride = tuple(s * r for s in stride[:-1]) + (1,)
            offset *= r
        else:
            r = b // a
            if shape[-1] % r:
                raise RuntimeError(f"self.size(-1) must be divisible by {r} {what}, but got "
                                   f"{shape[-1]}")
            if offset % r:
                raise RuntimeError(f"self.storage_offset() must be divisible by {r} {what}, but "
                                   f"got {offset}")
            _last_contiguous(stride, what)
            for i, s in enumerate(stride[:-1]):
                if s % r:
                    raise RuntimeError(f"self.stride({i}) must be divisible by {r} {what}, but "
                                       f"got {s}")
            shape = shape[:-1] + (shape[-1] // r,)
            stride = tuple(s // r for s in stride[:-1]) + (1,)
            offset //= r
    return retyped_view(input, dtype, shape, stride, offset, "view", base=False)


def _last_contiguous(stride, what):
    if stride[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {stride[-1]}")
