"""matmul and friends: the frontend reduces every case to the batched prim
(a: (*B, M, K), b: (*B, K, N), equal batch dims), as PyTorch's matmul rules say."""
from __future__ import annotations

from .._run import apply
from .._shape import broadcast_shapes
from .._tensor import Tensor
from ..dispatch import OpDef, register_op


def _matmul_grad(g, a, b, needs):
    return (matmul(g, b.mT) if needs[0] else None, matmul(a.mT, g) if needs[1] else None)


MATMUL = register_op(OpDef("matmul", kind="linalg", args=("a", "b"), dtypes="numeric",
                           grad=_matmul_grad, save_for={"a": ("b",), "b": ("a",)}))


def _check(a, b, op):
    for name, x in (("input", a), ("other", b)):
        if not isinstance(x, Tensor):
            raise TypeError(f"{op}(): argument '{name}' must be a Tensor, not {type(x).__name__}")
    if a.dim() == 0 or b.dim() == 0:
        raise RuntimeError(f"both arguments to {op} need to be at least 1D, but they are "
                           f"{a.dim()}D and {b.dim()}D")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a.dtype} != {b.dtype}")
    if a.dtype.name == "bool":
        raise RuntimeError(f"{op}: not implemented for 'Bool'")


def _batched(a, b):
    """The prim on (*B, M, K) @ (*B, K, N), with batch dims broadcast by views."""
    (m, k), (k2, n) = a._shape[-2:], b._shape[-2:]
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m}x{k} and {k2}x{n})")
    batch = broadcast_shapes(a._shape[:-2], b._shape[:-2])
    a = a.expand(batch + (m, k))
    b = b.expand(batch + (k, n))
    from .._run import same_place
    place = same_place("matmul", (a, b))
    return apply(MATMUL, place, (a, b), (a._h, b._h), ((batch + (m, n), a.dtype),))


def matmul(input, other, *, out=None):
    _check(input, other, "matmul")
    da, db = input.dim(), other.dim()
    if da == 1 and db == 1:
        if input._shape != other._shape:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{input._shape[0]}] and "
                               f"src [{other._shape[0]}] to have the same number of elements, but "
                               f"got {input._shape[0]} and {other._shape[0]} elements respectively")
        return _batched(input.unsqueeze(0), other.unsqueeze(1)).reshape(())
    if da == 1:
        return _batched(input.unsqueeze(0), other).squeeze(-2)
    if db == 1:
        return _batched(input, other.unsqueeze(1)).squeeze(-1)
    return _batched(input, other)


def mm(input, mat2, *, out=None):
    _check(input, mat2, "mm")
    if input.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError(f"mm: expected 2D tensors, got {input.dim()}D and {mat2.dim()}D")
    return _batched(input, mat2)


def bmm(input, mat2, *, out=None):
    _check(input, mat2, "bmm")
    if input.dim() != 3 or mat2.dim() != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor and batch2 must be a 3D tensor; got "
                           f"{input.dim()}D and {mat2.dim()}D")
    if input._shape[0] != mat2._shape[0]:
        raise RuntimeError(f"bmm: batch sizes differ: {input._shape[0]} and {mat2._shape[0]}")
    return _batched(input, mat2)
