"""The CPU backend's allocating elementwise kernels (`Backend.fresh_kernels`).

A numpy ufunc that allocates its own output skips `np.empty`'s argument parsing: on 10
float32 elements `np.add(a, b)` took 256 ns against 386 ns for `np.empty` then
`np.add(a, b, out)`, a tenth of a whole `a + b`. Only ufuncs whose loop for two inputs
of one dtype outputs that dtype (bool for the comparisons) are listed, so the result is
the dtype the frontend would have allocated; `order="C"` keeps the result C-contiguous
whatever the inputs' layout. Large arrays (the pool's chunks) and float16/bfloat16
(computed in float32) take the ordinary kernel into an `np.empty` output.
"""
from __future__ import annotations

import numpy as np

from .parallel import THRESHOLD as _BIG
from .threaded import _LOWP

_BOOL = np.dtype(np.bool_)

UNARY = {"exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
         "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos,
         "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
         "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh,
         "acosh": np.arccosh, "atanh": np.arctanh, "neg": np.negative,
         "bitwise_not": np.invert}
BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum,
          "minimum": np.minimum, "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
          "bitwise_xor": np.bitwise_xor}
COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
           "gt": np.greater, "ge": np.greater_equal}


def _unary(kernel, ufunc):
    def fresh(x):
        if x.size < _BIG and x.dtype not in _LOWP:
            return ufunc(x, order="C")
        out = np.empty(x.shape, x.dtype)
        kernel(out, x)
        return out
    return fresh


def _binary(kernel, ufunc, out_bool=False):
    def fresh(a, b):
        if a.size < _BIG and a.dtype not in _LOWP:
            return ufunc(a, b, order="C")
        out = np.empty(a.shape, _BOOL if out_bool else a.dtype)
        kernel(out, a, b)
        return out
    return fresh


def fresh_kernels(kernels):
    """The allocating forms of the listed ops' entries of the kernel table `kernels`."""
    table = {name: _unary(kernels[name], f) for name, f in UNARY.items()}
    table.update({name: _binary(kernels[name], f) for name, f in BINARY.items()})
    table.update({name: _binary(kernels[name], f, True) for name, f in COMPARE.items()})
    return table
