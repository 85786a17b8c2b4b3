"""Tensor.fill_diagonal_: PyTorch's algorithm (aten Fill.cpp), a fill through as_strided
views of self, so autograd sees an in-place write into a view (the diagonal's gradient
is zero, as PyTorch's CopySlices gives)."""
from __future__ import annotations

from .._tensor import Tensor
from . import memory, views


def fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal (all dims equal when ndim > 2). wrap=True restarts the
    diagonal every width + 1 rows of a tall matrix, counted, as PyTorch counts them, over
    numel() elements from the first row's stride."""
    if not isinstance(self, Tensor):
        raise TypeError(f"fill_diagonal_(): argument 'input' must be Tensor, not "
                        f"{type(self).__name__}")
    n = self.dim()
    if n < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = self.shape[0], self.shape[1]
    if n > 2 and any(s != height for s in self.shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    offset = self.storage_offset()
    size = min(height, width)
    step = sum(self.stride())
    memory.fill_(views.as_strided(self, (size,), (step,), offset), fill_value)
    if wrap and n == 2 and height > width + 1:
        per = width + 1
        wrap_size = (self.numel() + per - 1) // per - size
        memory.fill_(views.as_strided(self, (wrap_size,), (step,),
                                      offset + self.stride(0) * per), fill_value)
    return self


METHODS = {"fill_diagonal_": fill_diagonal_}
