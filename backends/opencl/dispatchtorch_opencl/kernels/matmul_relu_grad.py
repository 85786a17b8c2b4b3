"""A matmul followed by ReLU's backward as one launch (dispatchtorch.compile's
matmul + threshold_backward epilogue, dispatchtorch/_compile/epilogue.py): the input
gradient `g @ W` of a Linear whose input came out of a ReLU, then relu's derivative
rule `where(result <= 0, 0.0, .)`. Eager writes the product, then a comparison and a
where read it back; here the direct nn kernel (matmul_direct.py) zeroes each vector
where the ReLU's result is <= 0 just before its store. Layouts that kernel does not
take (batch dims, a column-major operand, the packed sizes) run the matmul, then one
masking pass in place: the same values, one launch more.
"""
from __future__ import annotations

from .. import cltypes as T
from ..codegen import loop_launch
from .elementwise import _maker, _spec
from .matmul import matmul
from .matmul_direct import direct


def matmul_relu_grad(out, a, b, result):
    """out = where(result <= 0, 0, a @ b); a (M, K), b (K, N), result (M, N) of
    out's dtype (float32/float64: the compiler asks for no other)."""
    if out.size == 0:
        return
    if (len(a.shape) == len(b.shape) == 2 and out.dev.matmul_path == "direct"
            and out.strides == (out.shape[1], 1)):
        M, K = a.shape
        if direct(out, a, b, (), [(), ()], M, b.shape[1], K, mask=result):
            return
    matmul(out, a, b)
    _mask_in_place(out, result)


matmul_relu_grad.text = ("opencl: ReLU's backward in the GEMM kernel's store (the direct nn "
                         "kernel mmnn_*_mask); else matmul, then the mask in place")


def _mask_in_place(out, result):
    """out = where(result <= 0, 0, out), element for element (any strides)."""
    dt = out.dtype
    c = T.COMPUTE[dt]
    fkey = ("ew", "relu_grad_mask", dt)
    make = _maker(fkey, lambda: _spec("relu_grad_mask", dt, (dt, dt), ("g", "h"),
                                      f"(h <= ({c})0 ? ({c})0 : g)", ""))
    loop_launch(out.dev, fkey, make, out.shape,
                [(out, out.strides), (out, out.strides), (result, result.strides)])
