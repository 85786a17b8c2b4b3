"""Any input of the writer as a numpy array, as PyTorch's _convert_np.make_np."""
from __future__ import annotations

import numpy as np

from ..._dtype import bfloat16
from ..._tensor import Tensor


def to_numpy(x):
    """A tensor, a numpy array or a Python number as an array (a number as shape (1,),
    bfloat16 through float16, as PyTorch's make_np)."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        x = x.detach()
        if x.dtype is bfloat16:
            x = x.half()
        return x.cpu().numpy()
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")
