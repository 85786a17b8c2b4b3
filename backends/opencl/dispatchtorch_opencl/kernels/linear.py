"""F.linear's row (`linear`: x @ weight.T + bias) as one matmul launch with the bias
added before the store, where the matmul kernel takes it (the CPU in-place kernels,
a contiguous (N,) bias); otherwise the matmul then the add kernel, the decomposition's
two launches. The frontend keeps the row's derivative rule, so this is the forward
only. float16/bfloat16 run in float32 and round once, as the decomposition does.
"""
from __future__ import annotations

from math import prod

from .. import cltypes as T
from ..handle import CLArray, contiguous_strides
from .elementwise import KERNELS as _ELEMENTWISE, copy_kernel
from .matmul import matmul_bias, relu_epilogue_ok


def _view(h, shape, strides):
    return CLArray(h.buf, h.dev, h.dtype, tuple(shape), tuple(strides), h.offset, h.storage,
                   h.capacity)


def _expand(h, shape):
    """h broadcast to shape (right-aligned, size-1 and missing dims of stride 0)."""
    pad = len(shape) - len(h.shape)
    strides = [0] * pad + [0 if n == 1 else s for n, s in zip(h.shape, h.strides)]
    return _view(h, shape, strides)


def _float32(h):
    out = CLArray(h.dev.alloc(h.size * 4), h.dev, "float32", h.shape, contiguous_strides(h.shape), 0)
    copy_kernel(out, h)
    return out


def linear(out, x, weight, bias):
    if out.size == 0:
        return
    if out.dtype in T.LOWP:
        wide = CLArray(out.dev.alloc(out.size * 4), out.dev, "float32", out.shape,
                       contiguous_strides(out.shape), 0)
        _linear(wide, _float32(x), _float32(weight), None if bias is None else _float32(bias))
        copy_kernel(out, wide)
        return
    _linear(out, x, weight, bias)


def linear_relu(out, x, weight, bias):
    """relu(linear(x, weight, bias)) (dispatchtorch.compile's epilogue fusion): the
    ReLU in the CPU GEMM kernels' store (direct nt or packed), where the bias is a
    contiguous row; otherwise linear, then relu in place on its output.
    float32/float64 only (the compiler asks for no other)."""
    if out.size and _linear(out, x, weight, bias, relu=True):
        return
    linear(out, x, weight, bias)
    _ELEMENTWISE["relu"](out, out)


linear_relu.text = ("opencl: the ReLU in the GEMM kernel's store (the direct nt kernel "
                    "mmnt_*_relu or the packed mmmicro_*_relu); else linear, then relu in place")


def _linear(out, x, weight, bias, relu=False):
    """out (*lead, N) contiguous = x (*lead, K) @ weight (N, K).T + bias. relu: only
    where the kernel rectifies too (else nothing is launched): returns whether it ran."""
    (N, K), lead = weight.shape, x.shape[:-1]
    M = lead[-1] if lead else 1
    batch = lead[:-1]
    a_strides = x.strides[:-1] + x.strides[-1:] if lead else (0, x.strides[0])
    if batch and all(x.strides[i] == x.strides[i + 1] * lead[i + 1] for i in range(len(batch))):
        # lead dims laid out as one (a contiguous (B, T, K) input): one (B*T, K) product,
        # whose kernels pack the weight once, not once per batch
        M, batch, a_strides = prod(lead), (), x.strides[-2:]
    a = _view(x, batch + (M, K), a_strides)
    b = _view(weight, batch + (K, N), (0,) * len(batch) + (weight.strides[1], weight.strides[0]))
    o = _view(out, batch + (M, N), contiguous_strides(batch + (M, N)))
    row = bias if bias is not None and bias.shape == (N,) and (bias.strides == (1,) or N == 1) else None
    if relu:
        if (bias is not None and row is None) or not relu_epilogue_ok(o, a, b):
            return False
        return matmul_bias(o, a, b, row, relu=True)
    if matmul_bias(o, a, b, row) and row is not None:
        return
    if bias is not None:
        _ELEMENTWISE["add"](out, out, _expand(bias, out.shape))


KERNELS = {"linear": linear}
