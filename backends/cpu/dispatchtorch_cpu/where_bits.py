"""where(cond, a, b) on 4- and 8-byte values as bit operations on their integer views.

numpy's masked copy (np.copyto(where=)) is ~8x slower than a streaming pass (64K
float32: 240 against 30 us), and the ReLU backward's where(x <= 0, 0, g) runs once per
layer per step, eager and compiled. Bit-identical to the select (NaNs and -0.0 kept):
the mask -cond is all ones where cond holds, cond - 1 all ones where it does not.
"""
from __future__ import annotations

import numpy as np

BITS = {"float32": np.int32, "float64": np.int64, "int32": np.int32, "int64": np.int64}
_BITS_NP = {np.dtype(k): v for k, v in BITS.items()}


def _bits(x, it):
    return x.view(it)


def select(it):
    """out = b ^ ((a ^ b) & -cond)"""
    def kernel(out, cond, a, b):
        m = np.negative(cond.view(np.uint8), dtype=it)
        d = np.bitwise_xor(_bits(a, it), _bits(b, it))
        if type(d) is np.ndarray and d.shape == m.shape:
            np.bitwise_and(d, m, d)
        else:                   # operands of broadcast shapes, or 0-d ones (a scalar d)
            d = np.bitwise_and(d, m)
        np.bitwise_xor(d, _bits(b, it), out.view(it))
    kernel.text = "bits: b ^ ((a ^ b) & -cond)"
    return kernel


def zero_a(it):
    """out = where(cond, +0, b) = b & (cond - 1)"""
    def kernel(out, cond, a, b):
        m = np.subtract(cond.view(np.uint8), 1, dtype=it)
        np.bitwise_and(_bits(b, it), m, out.view(it))
    kernel.text = "bits: b & (cond - 1)"
    return kernel


def zero_b(it):
    """out = where(cond, a, +0) = a & -cond"""
    def kernel(out, cond, a, b):
        m = np.negative(cond.view(np.uint8), dtype=it)
        np.bitwise_and(_bits(a, it), m, out.view(it))
    kernel.text = "bits: a & -cond"
    return kernel


_KERNELS = {it: (select(it), zero_a(it), zero_b(it)) for it in (np.int32, np.int64)}


def _plus_zero(x):
    return x.size == 1 and not x.tobytes().strip(b"\0")


def where(out, cond, a, b):
    """The eager where on numpy arrays: True when done by bits, False (out untouched)
    when the dtypes do not allow it (a non-bool condition, mixed or other dtypes)."""
    it = _BITS_NP.get(out.dtype)
    if it is None or cond.dtype != np.bool_ or a.dtype != out.dtype or b.dtype != out.dtype:
        return False
    sel, za, zb = _KERNELS[it]
    if _plus_zero(a):
        za(out, cond, a, b)
    elif _plus_zero(b):
        zb(out, cond, a, b)
    else:
        sel(out, cond, a, b)
    return True
