"""matmul and friends: the frontend reduces every case to the batched prim
(a: (*B, M, K), b: (*B, K, N), equal batch dims), as PyTorch's matmul rules say."""
from __future__ import annotations

from .._layout import strided as _strided
from .._run import apply
from .._shape import broadcast_shapes
from .._tensor import Tensor
from ..dispatch.registry import prim_row
from ._out import takes_out
from ._bare_support import check_op as bare_check


def _matmul_grad(g, a, b, needs):
    return (matmul(g, b.mT) if needs[0] else None, matmul(a.mT, g) if needs[1] else None)


MATMUL = prim_row("matmul", kind="linalg", args=("a", "b"), dtypes="numeric",
                  grad=_matmul_grad, save_for={"a": ("b",), "b": ("a",)})


def _check(a, b, op):
    for name, x in (("input", a), ("other", b)):
        if not isinstance(x, Tensor):
            raise TypeError(f"{op}(): argument '{name}' must be a Tensor, not {type(x).__name__}")
    if a.dim() == 0 or b.dim() == 0:
        raise RuntimeError(f"both arguments to {op} need to be at least 1D, but they are "
                           f"{a.dim()}D and {b.dim()}D")
    if a.dtype is not b.dtype and a.layout is _strided and b.layout is _strided:  # sparse: its own
        raise RuntimeError(f"{op}: expected m1 and m2 to have the same dtype, but got: "
                           f"{a.dtype.cpp_name} != {b.dtype.cpp_name}")
    if a.dtype.name == "bool":
        raise RuntimeError(f"{op}: not implemented for 'Bool'")
    if a.dtype.bare:                 # (.dtype: a may be a sparse tensor)
        bare_check("matmul", a.dtype)


def _batched(a, b):
    """The prim on (*B, M, K) @ (*B, K, N), with batch dims broadcast by views."""
    (m, k), (k2, n) = a._shape[-2:], b._shape[-2:]
    if k != k2:
        raise RuntimeError(f"matmul: mat1 and mat2 shapes cannot be multiplied ({m}x{k} and "
                           f"{k2}x{n})")
    batch = broadcast_shapes(a._shape[:-2], b._shape[:-2])
    a = a.expand(batch + (m, k))
    b = b.expand(batch + (k, n))
    from .._run import same_place
    place = same_place("matmul", (a, b))
    return apply(MATMUL, place, (a, b), (a._h, b._h), ((batch + (m, n), a.dtype),))


@takes_out("matmul", dtype="exact")
def matmul(input, other):
    _check(input, other, "matmul")
    if input.layout is not _strided or other.layout is not _strided:   # class attributes:
        # dispatchtorch.sparse's COO / CSR classes' own path
        return (input if input.layout is not _strided else other).matmul_sparse(input, other,
                                                                                "matmul")
    da, db = input.dim(), other.dim()
    if da == 1 and db == 1:
        if input._shape != other._shape:
            raise RuntimeError(f"matmul: inconsistent tensor size, expected tensor "
                               f"[{input._shape[0]}] and "
                               f"src [{other._shape[0]}] to have the same number of elements, but "
                               f"got {input._shape[0]} and {other._shape[0]} elements respectively")
        return _batched(input.unsqueeze(0), other.unsqueeze(1)).reshape(())
    if da == 1:
        return _batched(input.unsqueeze(0), other).squeeze(-2)
    if db == 1:
        return _batched(input, other.unsqueeze(1)).squeeze(-1)
    return _batched(input, other)


# -- composites over matmul -------------------------------------------------------------------

from .. import _dtype as D  # noqa: E402
from ._composite import composite, inplace_variant, run  # noqa: E402


def _need(x, name, op):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(x).__name__}")


MM = composite("mm", lambda a, b: _batched(a, b), kind="linalg", args=("a", "b"),
               dtypes="numeric", signature="mm(a: (n, m), b: (m, p)) -> (n, p)",
               doc="the matmul prim on two matrices")
BMM = composite("bmm", lambda a, b: _batched(a, b), kind="linalg", args=("a", "b"),
                dtypes="numeric", signature="bmm(a: (B, n, m), b: (B, m, p)) -> (B, n, p)",
                doc="the matmul prim on two batches of matrices")


@takes_out("mm", dtype="exact")
def mm(input, mat2):
    _check(input, mat2, "mm")
    if input.layout is not _strided or mat2.layout is not _strided:
        return (input if input.layout is not _strided else mat2).matmul_sparse(input, mat2, "mm")
    if input.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError(f"mm: expected 2D tensors, got {input.dim()}D and {mat2.dim()}D")
    return run(MM, (input, mat2), {})


@takes_out("bmm", dtype="exact")
def bmm(input, mat2):
    _check(input, mat2, "bmm")
    if input.dim() != 3 or mat2.dim() != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor and batch2 must be a 3D tensor; got "
                           f"{input.dim()}D and {mat2.dim()}D")
    if input._shape[0] != mat2._shape[0]:
        raise RuntimeError(f"bmm: batch sizes differ: {input._shape[0]} and {mat2._shape[0]}")
    return run(BMM, (input, mat2), {})


DOT = composite("dot", lambda a, b: _batched(a.unsqueeze(0), b.unsqueeze(1)).reshape(()),
                kind="linalg", args=("a", "b"), dtypes="numeric",
                signature="dot(a: (n,), b: (n,)) -> ()", doc="inner product of two vectors")


@takes_out("dot", dtype="exact")
def dot(input, other):
    _need(input, "input", "dot")
    _need(other, "tensor", "dot")
    if input.dtype.bare:
        bare_check("dot", input.dtype)
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(f"dot: 1D tensors expected, but got {input.dim()}D and {other.dim()}D "
                           f"tensors")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{input.dtype.pt_name} and {other.dtype.pt_name}")
    if input._shape != other._shape:
        raise RuntimeError(f"dot: inconsistent tensor size, expected tensor [{input._shape[0]}] "
                           f"and src "
                           f"[{other._shape[0]}] to have the same number of elements, but got "
                           f"{input._shape[0]} and {other._shape[0]} elements respectively")
    if input.dtype is D.bool_:
        raise NotImplementedError("\"dot\" not implemented for 'Bool'")
    return run(DOT, (input, other), {})




MV = composite("mv", lambda a, v: _batched(a, v.unsqueeze(1)).squeeze(-1), kind="linalg",
               args=("a", "v"), dtypes="numeric", signature="mv(a: (n, m), v: (m,)) -> (n,)",
               doc="matrix times vector")


@takes_out("mv", dtype="exact")
def mv(input, vec):
    _need(input, "input", "mv")
    _need(vec, "vec", "mv")
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.dim()}, {vec.dim()}")
    _check(input, vec, "mv")
    if input._shape[1] != vec._shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input._shape[0]}), mat ({input._shape[0]}x"
                           f"{input._shape[1]}), vec ({vec._shape[0]})")
    return run(MV, (input, vec), {})


OUTER = composite("outer", lambda a, b: a.unsqueeze(1) * b.unsqueeze(0), kind="linalg",
                  args=("a", "b"), signature="outer(a: (n,), b: (m,)) -> (n, m)",
                  doc="a[i] * b[j], with type promotion")


@takes_out("outer", dtype="safe")
def outer(input, vec2):
    _need(input, "input", "outer")
    _need(vec2, "vec2", "outer")
    if input.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input.dim()}-D")
    return run(OUTER, (input, vec2), {})


ger = outer


def _scaled_sum(product, input, beta, alpha):
    """beta * input + alpha * product (input ignored when beta is 0, NaN included)."""
    r = product if alpha == 1 else product * alpha
    if beta == 0:
        return r
    return r + (input if beta == 1 else input * beta)


ADDMM = composite("addmm", lambda x, a, b, beta, alpha: _scaled_sum(_batched(a, b), x, beta, alpha),
                  kind="linalg", args=("x", "a", "b"), dtypes="numeric",
                  signature="addmm(x, a, b, *, beta=1, alpha=1)",
                  doc="beta * x + alpha * (a @ b); x broadcasts; beta=0 ignores x", opmath=True)
BADDBMM = composite("baddbmm", lambda x, a, b, beta, alpha: _scaled_sum(_batched(a, b), x, beta,
                                                                        alpha),
                    kind="linalg", args=("x", "a", "b"), dtypes="numeric",
                    signature="baddbmm(x, a, b, *, beta=1, alpha=1)",
                    doc="beta * x + alpha * bmm(a, b); x broadcasts; beta=0 ignores x", opmath=True)
ADDMV = composite("addmv", lambda x, a, v, beta, alpha: _scaled_sum(
                      _batched(a, v.unsqueeze(1)).squeeze(-1), x, beta, alpha),
                  kind="linalg", args=("x", "a", "v"), dtypes="numeric",
                  signature="addmv(x, a, v, *, beta=1, alpha=1)",
                  doc="beta * x + alpha * (a @ v)", opmath=True)


def _product_shape(s1, s2, ndims):
    if ndims == (2, 1):
        return (s1[0],)
    return (*s1[:-1], s2[-1])


def _check_expands(name, shape, target):
    """input must expand to the product's shape (PyTorch's expand_size check), checked
    before anything runs."""
    if len(shape) > len(target):
        raise RuntimeError(f"{name}: the number of sizes provided ({len(target)}) must be greater "
                           f"or equal to the number of dimensions in the tensor ({len(shape)})")
    lead = len(target) - len(shape)
    for i, n in enumerate(shape):
        t = target[lead + i]
        if n != t and n != 1:
            raise RuntimeError(f"{name}: The expanded size of the tensor ({t}) must match the "
                               f"existing size ({n}) at non-singleton dimension {lead + i}.  "
                               f"Target sizes: {list(target)}.  Tensor sizes: {list(shape)}")


def _add_product(op, name, ndims):
    @takes_out(name, dtype="exact")
    def fn(input, mat1, mat2, *, beta=1, alpha=1):
        for arg, x in (("input", input), ("mat1", mat1), ("mat2", mat2)):
            _need(x, arg, name)
        _check(mat1, mat2, name)
        if (mat1.dim(), mat2.dim()) != ndims:
            raise RuntimeError(f"{name}: expected {ndims[0]}D and {ndims[1]}D tensors, got "
                               f"{mat1.dim()}D and {mat2.dim()}D")
        if input.dtype is not mat1.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                               f"{input.dtype.pt_name} and {mat1.dtype.pt_name}")
        if name == "baddbmm" and mat1._shape[0] != mat2._shape[0]:
            raise RuntimeError(f"baddbmm: batch sizes differ: {mat1._shape[0]} and "
                               f"{mat2._shape[0]}")
        if ndims == (2, 2) and mat1._shape[1] != mat2._shape[0]:
            raise RuntimeError(f"{name}: mat1 and mat2 shapes cannot be multiplied "
                               f"({mat1._shape[0]}x{mat1._shape[1]} and "
                               f"{mat2._shape[0]}x{mat2._shape[1]})")
        if ndims[1] == 1 and mat1._shape[1] != mat2._shape[0]:
            raise RuntimeError(f"size mismatch, got input ({input._shape}), mat "
                               f"({mat1._shape[0]}x{mat1._shape[1]}), vec ({mat2._shape[0]})")
        if not mat1.dtype.is_grad:      # integer ops take integer scale factors
            beta, alpha = int(beta), int(alpha)
        _check_expands(name, input._shape, _product_shape(mat1._shape, mat2._shape, ndims))
        return run(op, (input, mat1, mat2), {"beta": beta, "alpha": alpha})
    fn.__name__ = fn.__qualname__ = name
    return fn


addmm = _add_product(ADDMM, "addmm", (2, 2))
baddbmm = _add_product(BADDBMM, "baddbmm", (3, 3))
addmv = _add_product(ADDMV, "addmv", (2, 1))
addmm_ = inplace_variant(addmm, "addmm_")
baddbmm_ = inplace_variant(baddbmm, "baddbmm_")
addmv_ = inplace_variant(addmv, "addmv_")


def _check_multi_dot(tensors):
    """ATen's multi_dot checks, in its order and wording: ranks, dtypes, then shapes."""
    last = len(tensors) - 1
    for i, t in enumerate(tensors):
        if i in (0, last):
            if t.dim() not in (1, 2):
                raise RuntimeError(f"multi_dot(): the {'first' if i == 0 else 'last'} tensor "
                                   f"must be 1D or 2D but got {t.dim()}D")
        elif t.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    for i, t in enumerate(tensors[1:], 1):
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but "
                               f"tensor 0 is {tensors[0].dtype.cpp_name} and tensor {i} "
                               f"{t.dtype.cpp_name}")
    for i in range(1, len(tensors)):
        a, b = tensors[i - 1], tensors[i]
        if a.shape[-1] != b.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes "
                               f"{list(a.shape)} and {list(b.shape)} cannot be multiplied")


@takes_out("linalg.multi_dot", dtype="exact")
def multi_dot(tensors):
    """linalg.multi_dot: left to right (first may be 1-d, last may be 1-d)."""
    if len(tensors) < 2:
        raise RuntimeError("multi_dot(): expected at least 2 tensors but got "
                           f"{len(tensors)}")
    _check_multi_dot(tensors)
    r = tensors[0]
    for t in tensors[1:]:
        r = matmul(r, t)
    return r


METHODS = {"matmul": matmul, "mm": mm, "bmm": bmm, "dot": dot, "mv": mv,
           "outer": outer, "ger": ger, "addmm": addmm, "addmm_": addmm_, "baddbmm": baddbmm,
           "baddbmm_": baddbmm_, "addmv": addmv, "addmv_": addmv_}
