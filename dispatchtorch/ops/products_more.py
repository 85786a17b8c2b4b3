"""Products and statistics of PyTorch's set written over matmul, sums and views: addr,
addbmm, inner, kron, trace, cross / linalg.cross, cdist, dist, block_diag,
cartesian_prod, combinations, cov, corrcoef, matrix_power (n >= 0), linalg.vander."""
from __future__ import annotations

import itertools
import math
import warnings

from .. import _dtype as D
from .._shape import broadcast_shapes, norm_dim
from .._tensor import Tensor
from ._composite import composite, inplace_variant, run
from .linalg import _batched, _scaled_sum, matmul
from .norms import vector_norm
from ._out import takes_out
from ._bare_support import check_op as bare_check

L = dict(kind="linalg")


def _tensor(x, name, op):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(x).__name__}")


# -- addr / addbmm -----------------------------------------------------------------------------

def _addr(x, a, b, beta, alpha):
    prod = a.unsqueeze(1) * b.unsqueeze(0)
    if prod.dtype is D.bool_:
        r = prod if alpha else creation.zeros_like(prod)
        return r if not beta else r | x.to(D.bool_)
    return _scaled_sum(prod, x, beta, alpha)


ADDR = composite("addr", _addr, args=("x", "a", "b"), **L, signature="addr(x, a, b, *, beta=1, alpha=1)",
                 doc="beta * x + alpha * outer(a, b)")


@takes_out("addr", dtype="safe")
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    for n, v in (("input", input), ("vec1", vec1), ("vec2", vec2)):
        _tensor(v, n, "addr")
    if vec1.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D")
    shape = (vec1.shape[0], vec2.shape[0])
    if broadcast_shapes(input.shape, shape) != shape:
        raise RuntimeError(f"The expanded size of the tensor ({shape}) must match the existing "
                           f"size of input {tuple(input.shape)}")
    if vec1.dtype is D.bool_ and vec2.dtype is D.bool_ and not (isinstance(beta, bool) and
                                                                 isinstance(alpha, bool)):
        if beta not in (0, 1) or alpha not in (0, 1):
            raise RuntimeError("Boolean beta only supported for Boolean results.")
    return run(ADDR, (input, vec1, vec2), {"beta": beta, "alpha": alpha})


def _addbmm(x, a, b, beta, alpha):
    return _scaled_sum(_batched(a, b).sum(0), x, beta, alpha)


ADDBMM = composite("addbmm", _addbmm, args=("x", "a", "b"), **L, dtypes="numeric",
                   signature="addbmm(x, a: (B, n, m), b: (B, m, p), *, beta=1, alpha=1)",
                   doc="beta * x + alpha * sum over the batch of a @ b", opmath=True)


@takes_out("addbmm", dtype="exact")
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    for n, v in (("input", input), ("batch1", batch1), ("batch2", batch2)):
        _tensor(v, n, "addbmm")
    if batch1.dim() != 3 or batch2.dim() != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor, batch2 must be a 3D tensor; got "
                           f"{batch1.dim()}D and {batch2.dim()}D")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{batch1.shape[0]} and {batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x"
                           f"{batch1.shape[2]} and {batch2.shape[1]}x{batch2.shape[2]})")
    shape = (batch1.shape[1], batch2.shape[2])
    if broadcast_shapes(input.shape, shape) != shape:
        raise RuntimeError(f"The expanded size of the tensor must match the existing size of "
                           f"input {tuple(input.shape)}")
    if not batch1.dtype.is_grad:
        beta, alpha = int(beta), int(alpha)
    r = run(ADDBMM, (input, batch1, batch2), {"beta": beta, "alpha": alpha})
    return r.expand(shape).clone() if r.shape != shape else r


# -- inner, kron, trace ---------------------------------------------------------------------

def _inner(a, b):
    if a.dim() == 0 or b.dim() == 0:
        return a * b
    return tensordot(a, b, dims=([-1], [-1]))


INNER = composite("inner", _inner, args=("a", "b"), **L, signature="inner(a, b)",
                  doc="sum over the last dims of a and b (a * b if either is 0-d)")


@takes_out("inner", dtype="exact")
def inner(input, other):
    _tensor(input, "input", "inner")
    _tensor(other, "other", "inner")
    if input.dim() and other.dim() and input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got "
                           f"shapes {list(input.shape)} and {list(other.shape)}")
    return run(INNER, (input, other), {})


def _kron(a, b):
    nd = max(a.dim(), b.dim())
    sa = (1,) * (nd - a.dim()) + tuple(a.shape)
    sb = (1,) * (nd - b.dim()) + tuple(b.shape)
    ea = a.reshape([v for s in sa for v in (s, 1)])
    eb = b.reshape([v for s in sb for v in (1, s)])
    return (ea * eb).reshape([x * y for x, y in zip(sa, sb)])


KRON = composite("kron", _kron, args=("a", "b"), **L, signature="kron(a, b)",
                 doc="Kronecker product (dims aligned from the right)")


@takes_out("kron", dtype="safe")
def kron(input, other):
    _tensor(input, "input", "kron")
    _tensor(other, "other", "kron")
    return run(KRON, (input, other), {})


TRACE = composite("trace", lambda x: x.diagonal().sum(), args=("x",), **L,
                  signature="trace(x: (n, m)) -> ()", doc="sum of the main diagonal")


def trace(input):
    _tensor(input, "input", "trace")
    if input._dtype.bare:
        bare_check("trace", input._dtype)
    if input.dim() != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " f"{input.dim()}")
    return run(TRACE, (input,), {})


# -- cross ------------------------------------------------------------------------------------

def _cross(a, b, dim):
    a0, a1, a2 = (a.select(dim, i) for i in range(3))
    b0, b1, b2 = (b.select(dim, i) for i in range(3))
    return memory.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], dim)


CROSS = composite("cross", _cross, args=("a", "b"), **L, signature="cross(a, b, dim)",
                  doc="3-vector cross product along dim (inputs broadcast)")


def _cross_args(input, other, name):
    _tensor(input, "input", name)
    _tensor(other, "other", name)
    if input.dim() != other.dim():
        raise RuntimeError(f"{name}: inputs must have the same number of dimensions.")
    shape = broadcast_shapes(input.shape, other.shape)
    return input.expand(shape), other.expand(shape), shape


@takes_out("linalg.cross", dtype="exact")
def linalg_cross(input, other, *, dim=-1):
    a, b, shape = _cross_args(input, other, "linalg.cross")
    d = norm_dim(dim, len(shape), "linalg.cross")
    sizes = [t.shape[norm_dim(dim, t.dim(), "linalg.cross")] for t in (input, other)]
    if sizes != [3, 3]:               # each input's own dim, before broadcasting (PyTorch's)
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{sizes[0]} and {sizes[1]}")
    return run(CROSS, (a, b), {"dim": d})


@takes_out("cross", dtype="exact")
def cross(input, other, dim=None):
    a, b, shape = _cross_args(input, other, "cross")
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.",
                      UserWarning, stacklevel=2)
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    d = norm_dim(dim, len(shape), "cross")
    if shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    return run(CROSS, (a, b), {"dim": d})


# -- distances --------------------------------------------------------------------------------

def _cdist(x1, x2, p):
    return vector_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, dim=-1)


def distance_grad(g, diff, dist, p):
    """g times d dist / d diff, as PyTorch's CPU cdist / pdist backward kernels (their
    `*dist_calc::backward`): 0 at a zero distance (not 0 / 0), and for p = inf the full g
    to every coordinate tied for the maximum. g, dist: (...); diff: (..., M)."""
    g, d = g.unsqueeze(-1), dist.unsqueeze(-1)
    if p == 0:
        return creation.zeros_like(diff)
    if p == 2:
        return P.where(d == 0, 0.0, g * diff / d)
    sign = P.where(diff == diff, diff.sign(), diff)    # the kernels' sign keeps a NaN
    if p == 1:
        return g * sign
    if p == math.inf:
        return g * sign * (1 - (diff.abs() - d).abs().ceil().clamp_max(1))
    if p < 2:
        r = sign * diff.abs() ** (p - 1) * g / d ** (p - 1)
        if p < 1:
            r = P.where(diff == 0, 0.0, r)
    else:
        r = diff * diff.abs() ** (p - 2) * g / d ** (p - 1)
    return P.where(d == 0, 0.0, r)


def _cdist_grad(g, x1, x2, result, p, needs):
    # x2's from its own differences (x2 - x1), as PyTorch's, not -(x1's): signs of zeros
    g1 = distance_grad(g, x1.unsqueeze(-2) - x2.unsqueeze(-3), result, p).sum(-2) \
        if needs[0] else None
    g2 = distance_grad(g.mT, x2.unsqueeze(-2) - x1.unsqueeze(-3), result.mT, p).sum(-2) \
        if needs[1] else None
    return g1, g2


CDIST = composite("cdist", _cdist, args=("x1", "x2"), **L, dtypes="floating", grad=_cdist_grad,
                  signature="cdist(x1: (*, P, M), x2: (*, R, M), p=2.0) -> (*, P, R)",
                  doc="p-norm distance between each pair of rows")


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    _tensor(x1, "x1", "cdist")
    _tensor(x2, "x2", "cdist")
    if x1.dim() < 2 or x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if not x1.dtype.is_floating_point:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {x1.dtype}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    batch = broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    a = x1.expand(batch + tuple(x1.shape[-2:]))
    b = x2.expand(batch + tuple(x2.shape[-2:]))
    return run(CDIST, (a, b), {"p": float(p)})


def _pairs(n, device):
    return creation.triu_indices(n, n, 1, device=device)


def _pdist(x, p):
    i, j = _pairs(x.shape[0], x.device)
    return vector_norm(x.index_select(0, i) - x.index_select(0, j), p, dim=1)


def _pdist_grad(g, x, result, p):
    # PyTorch's _pdist_backward: each pair's kernel gradient added to row i, taken from j
    i, j = _pairs(x.shape[0], x.device)
    gd = distance_grad(g, x.index_select(0, i) - x.index_select(0, j), result, p)
    return creation.zeros_like(x).index_add(0, i, gd).index_add(0, j, -gd)


PDIST = composite("pdist", _pdist, **L, dtypes="floating", grad=_pdist_grad,
                  signature="pdist(x: (N, M), p=2.0) -> (N * (N - 1) / 2,)",
                  doc="p-norm distance between each pair of rows i < j (upper triangle)")


def pdist(input, p=2):
    """Distances between every pair of rows i < j, in row-major upper-triangle order."""
    if not isinstance(input, Tensor) or input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: "
                           f"{input.dim() if isinstance(input, Tensor) else type(input).__name__}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return run(PDIST, (input,), {"p": float(p)})


def dist(input, other, p=2):
    _tensor(input, "input", "dist")
    _tensor(other, "other", "dist")
    return vector_norm(input - other, p)


# -- block_diag, cartesian_prod, combinations ----------------------------------------------------

def _block_diag(*ts):
    dt = _elementwise.result_type(*ts) if ts else D.get_default_dtype()
    mats = [t.reshape(1, 1) if t.dim() == 0 else t.reshape(1, -1) if t.dim() == 1 else t
            for t in ts]
    cols = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        r, c = m.shape
        parts = [creation.zeros(r, left, dtype=dt, device=m.device), m.to(dt),
                 creation.zeros(r, cols - left - c, dtype=dt, device=m.device)]
        rows.append(memory.cat(parts, 1))
        left += c
    return memory.cat(rows, 0)


BLOCK_DIAG = composite("block_diag", _block_diag, args=("*tensors",), kind="memory",
                       signature="block_diag(*tensors)",
                       doc="the tensors (0-, 1- or 2-d) as diagonal blocks of one matrix")


def block_diag(*tensors):
    if not tensors:
        return creation.zeros(1, 0)
    for i, t in enumerate(tensors):
        _tensor(t, "tensors", "block_diag")
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.dim()} dimensions")
    return run(BLOCK_DIAG, tensors, {})


def cartesian_prod(*tensors):
    for t in tensors:
        _tensor(t, "tensors", "cartesian_prod")
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = creation.meshgrid(*tensors, indexing="ij")
    return memory.stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    _tensor(input, "input", "combinations")
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return creation.empty(0, dtype=input.dtype, device=input.device)
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    idx = list(pick(range(input.shape[0]), r))
    if not idx:
        return creation.empty(0, r, dtype=input.dtype, device=input.device)
    index = creation.tensor(idx, dtype=D.int64, device=input.device)
    return input[index]


# -- cov, corrcoef --------------------------------------------------------------------------

def cov(input, *, correction=1, fweights=None, aweights=None):
    """PyTorch's at::cov, step by step (weights, correction, the non-positive warning)."""
    _tensor(input, "input", "cov")
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.dim()} dimensions")
    x = input if input.dim() == 2 else input.reshape(1, -1)
    n = x.shape[1]
    w = None
    if fweights is not None:
        if fweights.dim() > 1 or fweights.numel() != n:
            raise RuntimeError("cov(): expected fweights to have one or fewer dimensions and "
                               f"{n} elements")
        if fweights.dtype.is_floating_point:
            raise RuntimeError("cov(): expected fweights to have integral dtype but got "
                               f"fweights with {fweights.dtype.pt_name} dtype")
        if bool((fweights < 0).any()):
            raise RuntimeError("cov(): fweights cannot be negative")
        w = fweights
    if aweights is not None:
        if aweights.dim() > 1 or aweights.numel() != n:
            raise RuntimeError("cov(): expected aweights to have one or fewer dimensions and "
                               f"{n} elements")
        if not aweights.dtype.is_floating_point:
            raise RuntimeError("cov(): expected aweights to have floating point dtype but got "
                               f"aweights with {aweights.dtype.pt_name} dtype")
        if bool((aweights < 0).any()):
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = float(n)
        avg = x.sum(1) / n if n else x.sum(1) * float("nan")
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm = w_sum - correction
    if bool(norm <= 0 if not isinstance(norm, Tensor) else (norm <= 0).all()):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than "
                      "the number of observations.", UserWarning, stacklevel=2)
        norm = norm * 0 if isinstance(norm, Tensor) else 0.0
    xm = x - avg.unsqueeze(1)
    from .complex_ops import conj   # late: complex_ops binds after pointwise_more
    c = matmul(xm, conj(xm * w if w is not None else xm).t())
    return (c / norm).squeeze()


def corrcoef(input):
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    std = d.sqrt()
    c = c / std.unsqueeze(1)
    c = c / std.unsqueeze(0)
    if c.dtype.is_complex:          # each part clamped, as PyTorch
        from .complex_ops import complex
        return complex(c.real.clamp(-1, 1), c.imag.clamp(-1, 1))
    return c.clamp(-1, 1) if c.dtype.is_floating_point else c


# -- matrix powers, Vandermonde -----------------------------------------------------------------

def _square(A, name):
    _tensor(A, "A", name)
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.dim() >= 2 else ''} by {A.shape[-1] if A.dim() else ''}"
                           " matrices")


@takes_out("matrix_power", dtype="exact")
def matrix_power(A, n):
    _square(A, "linalg.matrix_power")
    if n < 0:
        from .decompositions import inv
        A = inv(A)
        n = -n
    if n == 0:
        eye = creation.eye(A.shape[-1], dtype=A.dtype, device=A.device)
        return eye.expand(A.shape).clone()
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result.clone() if result is A else result


def linalg_vander(x, *, N=None):
    _tensor(x, "x", "linalg.vander")
    if x.dim() == 0:                  # PyTorch reads a 0-d x as one point
        x = x.reshape(1)
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    if x.dtype is D.bool_:
        x = x.to(D.int64)
    ones = creation.ones(tuple(x.shape) + (1,), dtype=x.dtype, device=x.device)
    powers = scans.cumprod(x.unsqueeze(-1).expand(tuple(x.shape) + (n - 1,)), -1)
    return memory.cat([ones, powers], -1)


def vander(x, N=None, increasing=False):
    _tensor(x, "x", "vander")
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    v = linalg_vander(x, N=N)
    return v if increasing else v.flip(-1)


def spmm(input, mat2):
    """torch.spmm: mm, whose sparse COO path (dispatchtorch.sparse) GCN's GraphConv uses."""
    from .linalg import mm
    return mm(input, mat2)


PUBLIC = {"spmm": spmm, "addr": addr, "addbmm": addbmm, "inner": inner, "kron": kron, "trace": trace,
          "cross": cross, "cdist": cdist, "pdist": pdist, "dist": dist, "block_diag": block_diag,
          "cartesian_prod": cartesian_prod, "combinations": combinations, "cov": cov,
          "corrcoef": corrcoef, "matrix_power": matrix_power, "vander": vander}
METHODS = {"addr": addr, "addr_": inplace_variant(addr, "addr_"), "addbmm": addbmm,
           "addbmm_": inplace_variant(addbmm, "addbmm_"), "inner": inner, "kron": kron,
           "trace": trace, "cross": cross, "dist": dist, "cov": cov, "corrcoef": corrcoef,
           "matrix_power": matrix_power}
LINALG = {"cross": linalg_cross, "matrix_power": matrix_power, "vander": linalg_vander}


# The op modules this one's derivative rules and decompositions call (at run time
# only). Imported last: they import this module in turn (see docs/architecture.md).
from . import _elementwise, creation, memory, scans  # noqa: E402
from . import pointwise as P  # noqa: E402
from .einsum import tensordot  # noqa: E402  (the package binds `einsum` to the function)
