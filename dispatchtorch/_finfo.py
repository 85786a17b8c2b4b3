"""torch.finfo / torch.iinfo: a dtype's machine limits, with PyTorch's values and repr."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from . import _dtype as D

# where PyTorch's c10 limits differ from ml_dtypes' (c10's epsilon for e5m2fnuz is 2**-3)
_TORCH_EPS = {"float8_e5m2fnuz": 0.125}


class finfo:
    """Machine limits of a floating dtype, as torch.finfo."""

    def __init__(self, type=None):
        d = D.to_dtype(type) if type is not None else D.get_default_dtype()
        d = d.to_real()         # finfo(complex64) describes its float32 parts
        if not d.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        info = ml_dtypes.finfo(d.np)      # numpy's floats and ml_dtypes' alike
        self.dtype, self.bits = d, d.itemsize * 8
        self.eps = _TORCH_EPS.get(d.name, float(info.eps))
        self.max, self.min = float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.tiny)
        # PyTorch: 10 ** -floor(-log10(eps)), not numpy's decimal precision
        self.resolution = 10.0 ** -math.floor(-math.log10(self.eps))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype.name})")


class iinfo:
    """Limits of an integer dtype, as torch.iinfo."""

    def __init__(self, type):
        d = D.to_dtype(type)
        if d.is_floating_point or d.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            "to handle 'torch.iinfo'")
        if d is D.bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        info = np.iinfo(d.np)
        self.dtype, self.bits = d, d.itemsize * 8
        self.min, self.max = int(info.min), int(info.max)

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype.name})"


class int_limits(iinfo):
    """iinfo that also takes bool, as (0, 1): the frontend's own form (`_dtype.iinfo`),
    for the identities and bounds of reductions, fills and checks over any integral
    dtype; the public torch.iinfo refuses bool as PyTorch's."""

    def __init__(self, type):
        d = D.to_dtype(type)
        if d is D.bool_:
            self.dtype, self.bits, self.min, self.max = d, 8, 0, 1
        else:
            super().__init__(d)
