"""Kernels of the complex-only composites (the prims run complex64/complex128 through
numpy's own complex loops)."""
from __future__ import annotations

import numpy as np


def conj_physical(out, x):
    np.conjugate(x, out=out)


KERNELS = {"conj_physical": conj_physical}
