"""Norms: linalg.vector_norm (with PyTorch's derivative rule), linalg.matrix_norm,
linalg.norm and torch.norm, all composites over the reduction prims."""
from __future__ import annotations

import math
import numbers

from .. import _dtype as D
from .._shape import norm_dim, norm_dims
from ._composite import composite, run
from ._out import takes_out
from .reductions import check_tensor, expand_back

INF = math.inf


def _vector_norm(x, ord, dims, keepdim):
    if ord == 2:
        return pointwise.sqrt((x * x).sum(dims, keepdim))
    if ord == 1:
        return x.abs().sum(dims, keepdim)
    if ord == INF:
        return reductions.amax(x.abs(), dims, keepdim)
    if ord == -INF:
        return reductions.amin(x.abs(), dims, keepdim)
    if ord == 0:
        return (x != 0).sum(dims, keepdim).to(x.dtype)
    return pointwise.pow(pointwise.pow(x.abs(), ord).sum(dims, keepdim), 1.0 / ord)


def _vector_norm_grad(g, x, result, ord, dims, keepdim):
    """PyTorch's norm_backward, in public ops (so double backward works)."""
    if ord == 0:
        return creation.zeros_like(x)
    g = expand_back(g, x.shape, dims, keepdim)
    n = expand_back(result, x.shape, dims, keepdim)
    if ord == 1:
        return g * pointwise.sign(x)
    if ord == 2:        # g * (x / n masked to 0 where n == 0): an inf g at 0 is NaN there
        return g * pointwise.where(n == 0, 0.0, x / n)
    if abs(ord) == INF:
        # amax(|x|)'s derivative respecting NaN: the maxima and the NaNs share g
        ax = x.abs()
        mask = ((ax == n) | (ax != ax)).to(x.dtype)
        count = mask.sum(dims, keepdim=True) if x.dim() else mask
        return pointwise.sign(x) * ((g / count) * mask)
    if ord < 1:
        scaled = pointwise.sign(x) * pointwise.where(x == 0, 0.0, pointwise.pow(x.abs(), ord - 1))
        return scaled * g * pointwise.pow(n, 1 - ord)
    if ord < 2:
        scaled = pointwise.sign(x) * pointwise.pow(x.abs(), ord - 1)
    else:
        scaled = x * pointwise.pow(x.abs(), ord - 2)
    return scaled * pointwise.where(n == 0, 0.0, g / pointwise.pow(n, ord - 1))


VECTOR_NORM = composite(
    "linalg_vector_norm", _vector_norm, kind="reduction", grad=_vector_norm_grad,
    dtypes="floating", signature="linalg.vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None)",
    doc="(sum |x|^ord)^(1/ord); ord inf/-inf: max/min |x|; ord 0: count of non-zeros", opmath=True)


def _float_input(x, dtype, name):
    check_tensor(x, name)
    if dtype is not None:
        dt = D.to_dtype(dtype)
        if not x.dtype.is_floating_point or not dt.is_floating_point:
            raise RuntimeError(f"{name}: dtype should be floating point, but got {dt.pt_name}")
        x = x.to(dt)
    if x.dtype.is_complex:          # norms of complex numbers are norms of their moduli
        return x.abs()
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{x.dtype.pt_name}")
    return x


@takes_out("linalg.vector_norm", dtype="exact")
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    x = _float_input(x, dtype, "linalg.vector_norm")
    if not isinstance(ord, numbers.Real) or isinstance(ord, bool):
        raise TypeError(f"linalg.vector_norm(): argument 'ord' must be a number, not "
                        f"{type(ord).__name__}")
    ord = float(ord)
    dims = norm_dims(dim, x.dim(), "linalg.vector_norm") or tuple(range(x.dim()))
    if ord < 0 or ord == INF:
        for d in dims:
            if x.shape[d] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on an "
                                   f"empty tensor because the operation does not have an identity")
        if not x.dim() and x.numel() == 0:
            raise RuntimeError("linalg.vector_norm: empty input")
    r = run(VECTOR_NORM, (x,), {"ord": ord, "dims": dims, "keepdim": keepdim})
    return r


def _matrix_norm(x, ord, dims, keepdim):
    if ord == "fro":
        return vector_norm(x, 2, dims, keepdim)
    d0, d1 = dims
    if ord in ("nuc", 2, -2):         # from the singular values (decompositions.py)
        from .decompositions import svdvals
        sv = svdvals(x.movedim((d0, d1), (-2, -1)))
        r = sv.sum(-1) if ord == "nuc" else sv.amax(-1) if ord == 2 else sv.amin(-1)
        return r.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1)) if keepdim else r
    # ord 1 / -1: max / min column sum; inf / -inf: max / min row sum
    summed, over = (d0, d1) if abs(ord) == 1 else (d1, d0)
    sums = x.abs().sum(summed, keepdim=True)
    r = (reductions.amax if ord > 0 else reductions.amin)(sums, over, keepdim=True)
    return r if keepdim else r.squeeze((d0, d1))


MATRIX_NORM = composite(
    "linalg_matrix_norm", _matrix_norm, kind="reduction", dtypes="floating",
    signature="linalg.matrix_norm(A, ord='fro', dim=(-2, -1), keepdim=False, *, dtype=None)",
    doc="ord 'fro', 1, -1, inf, -inf; 'nuc', 2, -2 from the singular values",
                        opmath=True)


@takes_out("linalg.matrix_norm", dtype="exact")
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    check_tensor(A, "linalg.matrix_norm")
    if not (ord in ("nuc", 2, -2) and A.dtype.is_complex):    # those read A's own singular
        A = _float_input(A, dtype, "linalg.matrix_norm")       # values, not |A|'s
    if A.dim() < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 "
                           f"dimensions.")
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim}")
    d0, d1 = (norm_dim(d, A.dim(), "linalg.matrix_norm") for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    if ord not in ("fro", "nuc", 2, -2, 1, -1, INF, -INF):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if ord not in ("fro", "nuc"):
        # the dim reduced by max / min must not be empty (1: columns' sums, inf: rows')
        over = {1: d1, -1: d1, INF: d0, -INF: d0}.get(ord)
        for d in ((over,) if over is not None else (d0, d1)):
            if A.shape[d] == 0:
                raise RuntimeError(f"linalg.matrix_norm cannot compute the {ord} norm on an "
                                   f"empty tensor because the operation does not have an identity")
    r = run(MATRIX_NORM, (A,), {"ord": ord, "dims": (d0, d1), "keepdim": keepdim})
    return r


def _linalg_norm(A, ord, dim, keepdim, dtype):
    if dim is not None and not isinstance(dim, (tuple, list)):
        dim = (dim,)
    if dim is None:
        if ord is None:
            return vector_norm(A, 2, None, keepdim, dtype=dtype)
        if A.dim() == 1:
            return vector_norm(A, ord, None, keepdim, dtype=dtype)
        if A.dim() == 2:
            return matrix_norm(A, ord, (0, 1), keepdim, dtype=dtype)
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {A.dim()}D.")
    if len(dim) == 1:
        if isinstance(ord, str):
            raise RuntimeError(f"linalg.norm: Order {ord} not supported for vectors")
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {dim}")


LINALG_NORM = composite(
    "linalg_norm", _linalg_norm, kind="reduction", dtypes="floating",
    signature="linalg.norm(A, ord=None, dim=None, keepdim=False, *, dtype=None)",
    doc="vector_norm over one dim (or all, ord None), matrix_norm over two")


@takes_out("linalg.norm", dtype="exact")
def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    check_tensor(A, "linalg.norm")
    r = run(LINALG_NORM, (A,), {"ord": ord, "dim": dim, "keepdim": keepdim, "dtype": dtype})
    return r


def _norm(x, p, dim, keepdim, dtype):
    if p is None or p == "fro":
        if dim is not None and not isinstance(dim, (tuple, list)):
            dim = (dim,)
        if dim is not None and len(dim) > 2:
            raise RuntimeError(f"norm(p='fro'): expected at most 2 dims, got {len(dim)}")
        return vector_norm(x, 2, dim, keepdim, dtype=dtype)
    if p == "nuc":
        return matrix_norm(x, "nuc", (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    return vector_norm(x, p, dim, keepdim, dtype=dtype)


NORM = composite("norm", _norm, kind="reduction", dtypes="floating",
                 signature="norm(x, p='fro', dim=None, keepdim=False, dtype=None)",
                 doc="torch.norm: 'fro' and numbers p are vector norms over dim")


@takes_out("norm", dtype="exact")
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    check_tensor(input, "norm")
    r = run(NORM, (input,), {"p": p, "dim": dim, "keepdim": keepdim, "dtype": dtype})
    return r


@takes_out("linalg.vecdot", dtype="exact")
def vecdot(x, y, *, dim=-1):
    """linalg.vecdot: sum(conj(x) * y, dim) (conj is the identity on real tensors)."""
    from .complex_ops import conj   # late: complex_ops binds after pointwise_more
    return (conj(x) * y).sum(dim)


METHODS = {"norm": norm}


# The op modules this one's derivative rules and decompositions call (at run time
# only). Imported last: they import this module in turn (see docs/architecture.md).
from . import creation, pointwise, reductions  # noqa: E402
