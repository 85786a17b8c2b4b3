"""torch.nonzero_static: nonzero's coordinates in a result of fixed length `size`
(truncated, or padded with fill_value), for code that needs static shapes."""
from __future__ import annotations

from .. import _dtype as D
from .._tensor import Tensor
from . import creation, gather_scatter, memory
from ._out import takes_out


@takes_out("nonzero_static", dtype="cast")
def nonzero_static(input, *, size, fill_value=-1):
    if not isinstance(input, Tensor):
        raise TypeError(f"nonzero_static(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    coords = gather_scatter.nonzero(input)[:size]
    missing = size - coords.shape[0]
    if missing:
        pad = creation.full((missing, input.dim()), fill_value, dtype=D.int64, device=input.device)
        coords = memory.cat([coords, pad], 0)
    return coords


PUBLIC = {"nonzero_static": nonzero_static}
METHODS = {"nonzero_static": nonzero_static}
