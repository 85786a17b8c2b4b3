"""A matmul followed by ReLU's backward as one launch (dispatchtorch.compile's
matmul + threshold_backward epilogue, dispatchtorch/_compile/epilogue.py): the input
gradient `g @ W` of a Linear whose input came out of a ReLU, then relu's derivative
rule `where(result <= 0, 0.0, .)`. Eager writes the product, then a comparison and a
where read it back; here the GEMM kernel (the direct nn kernel, matmul_direct.py, or
the packed micro-kernel, matmul.py) zeroes each vector where the ReLU's result is
<= 0 just before its store. Leading dims are one matrix where they are laid out as
one and b is shared (a Linear's `g (B, T, N) @ W`). Other cases (a GPU's tiled
kernel, batched b, a mask with strided rows) run the matmul, then one masking pass
in place: the same values, one launch more.
"""
from __future__ import annotations

from math import prod

from .. import cltypes as T
from ..codegen import loop_launch
from ..handle import CLArray, contiguous_strides
from .elementwise import _maker, _spec
from .matmul import matmul, matmul_masked


def _matrix(h, rows):
    """h (*lead, R, C) as a (prod(lead) * R, C) view when its leading dims and rows
    are laid out as one, else None."""
    shape, st = h.shape, h.strides
    if len(shape) == 2:
        return h
    if any(st[i] != st[i + 1] * shape[i + 1] for i in range(len(shape) - 2)):
        return None
    return CLArray(h.buf, h.dev, h.dtype, (rows, shape[-1]), (st[-2], st[-1]), h.offset,
                   h.storage, h.capacity)


def matmul_relu_grad(out, a, b, result):
    """out = where(result <= 0, 0, a @ b); a (*B, M, K), b (*B, K, N), result and out
    (*B, M, N) of out's dtype (float32/float64: the compiler asks for no other)."""
    if out.size == 0:
        return
    lead = a.shape[:-2]
    if not any(b.strides[:-2]) and out.strides == contiguous_strides(out.shape):
        rows = prod(lead) * a.shape[-2]
        a2, h2, o2 = _matrix(a, rows), _matrix(result, rows), _matrix(out, rows)
        b2 = CLArray(b.buf, b.dev, b.dtype, b.shape[-2:], b.strides[-2:], b.offset, b.storage,
                     b.capacity)
        if a2 is not None and h2 is not None and matmul_masked(o2, a2, b2, h2):
            return
    matmul(out, a, b)
    _mask_in_place(out, result)


matmul_relu_grad.text = ("opencl: ReLU's backward in the GEMM kernel's store (the direct nn "
                         "kernel mmnn_*_mask or the packed mmmicro_*_mask); else matmul, "
                         "then the mask in place")


def _mask_in_place(out, result):
    """out = where(result <= 0, 0, out), element for element (any strides)."""
    dt = out.dtype
    c = T.COMPUTE[dt]
    fkey = ("ew", "relu_grad_mask", dt)
    make = _maker(fkey, lambda: _spec("relu_grad_mask", dt, (dt, dt), ("g", "h"),
                                      f"(h <= ({c})0 ? ({c})0 : g)", ""))
    loop_launch(out.dev, fkey, make, out.shape,
                [(out, out.strides), (out, out.strides), (result, result.strides)])
