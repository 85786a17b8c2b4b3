"""torch.linalg's functions built on the decomposition prims (decompositions.py): pinv,
matrix_rank, lstsq, cond, matrix_exp, householder_product, tensorinv, tensorsolve,
cholesky_solve / cholesky_inverse, and the torch.* spellings (svd, qr, cholesky,
triangular_solve, lu_solve, pinverse, inverse, det, ...). Their gradients flow through
the prims' rules."""
from __future__ import annotations

import math

from .. import _dtype as D
from .. import return_types as RT
from .._tensor import Tensor
from . import decompositions as DC
from .._shape import broadcast_shapes
from ._composite import composite, run
from .linalg import matmul
from .norms import matrix_norm


def _tol(S, A, atol, rtol, name):
    """PyTorch's threshold max(atol, rtol * smax); rtol defaults to eps * max(m, n)
    when atol is not given either."""
    eps = D.finfo(A.dtype).eps
    if rtol is None:
        rtol = eps * max(A.shape[-2:]) if atol is None or (not isinstance(atol, Tensor)
                                                           and atol == 0) else 0.0
    atol = 0.0 if atol is None else atol
    smax = S.amax(-1, keepdim=True) if S.shape[-1] else creation.zeros(tuple(S.shape[:-1]) + (1,),
                                                                    dtype=S.dtype, device=S.device)
    a = atol.unsqueeze(-1) if isinstance(atol, Tensor) else atol
    r = rtol.unsqueeze(-1) if isinstance(rtol, Tensor) else rtol
    return pointwise.maximum(smax * r, a * creation.ones_like(smax)) if isinstance(a, Tensor) or \
        isinstance(r, Tensor) else pointwise.clamp(smax * r, min=a)


def _pinv_grad(g, A, result):
    """PyTorch's pinv_backward: exact where the rank is constant, no 1 / (s_i - s_j)."""
    m, n = A.shape[-2:]
    P, Ph, gh = result, result.mH, g.mH
    if m <= n:
        K = matmul(gh, P)
        KPh = matmul(K, Ph)
        return -matmul(P, K).mH + KPh - matmul(matmul(A, P), KPh) + \
            matmul(matmul(Ph, P), gh - matmul(K, A))
    K = matmul(P, gh)
    PhK = matmul(Ph, K)
    return -matmul(K, P).mH + matmul(matmul(gh - matmul(A, K), P), Ph) + PhK - \
        matmul(matmul(PhK, P), A)


def _pinv(A, atol, rtol, hermitian):
    if hermitian:
        w, V = DC.eigh(A)
        tol = _tol(w.abs(), A, atol, rtol, "linalg.pinv")
        winv = pointwise.where(w.abs() > tol, 1 / pointwise.where(w.abs() > tol, w, 1.0), 0.0)
        return matmul(V * winv.unsqueeze(-2), V.mH)
    U, S, Vh = DC.svd(A, full_matrices=False)
    tol = _tol(S, A, atol, rtol, "linalg.pinv")
    sinv = pointwise.where(S > tol, 1 / pointwise.where(S > tol, S, 1.0), 0.0)
    return matmul(Vh.mH * sinv.unsqueeze(-2), U.mH)


PINV = composite("linalg_pinv", _pinv, kind="linalg", args=("A",), grad=_pinv_grad,
                 dtypes="float", signature="linalg_pinv(A, *, atol, rtol, hermitian)",
                 doc="Moore-Penrose pseudo-inverse through the SVD (eigh when hermitian)")


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    DC.check_matrix(A, "linalg.pinv")
    return run(PINV, (A,), {"atol": atol, "rtol": rtol, "hermitian": hermitian})


def pinverse(input, rcond=1e-15):
    return pinv(input, rtol=rcond)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None, out=None):
    DC.check_matrix(A, "linalg.matrix_rank")
    if tol is not None:
        atol, rtol = tol, 0.0
    S = DC.eigvalsh(A).abs() if hermitian else DC.svdvals(A)
    t = _tol(S, A, atol, rtol, "linalg.matrix_rank")
    return (S > t).sum(-1)


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution through the SVD (PyTorch's CPU default 'gelsy' gives the
    same solution; rank and singular values as gelsy/gelsd report them)."""
    DC.check_matrix(A, "linalg.lstsq")
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg.lstsq(): argument 'B' must be Tensor, not {type(B).__name__}")
    if driver not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    vector = B.dim() == A.dim() - 1
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.shape[-2] != A.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    m, n = A.shape[-2:]
    if rcond is None:
        rcond = D.finfo(A.dtype).eps * max(m, n)
    X = matmul(pinv(A, rtol=rcond if driver != "gels" else 0.0), Bm)
    drv = driver or "gelsy"
    empty = creation.empty(0, dtype=A.dtype.to_real(), device=A.device)
    rank = matrix_rank(A, rtol=rcond).to(D.int64) if drv != "gels" else \
        creation.empty(0, dtype=D.int64, device=A.device)
    sv = DC.svdvals(A) if drv in ("gelsd", "gelss") else empty
    residuals = empty
    if m > n and drv != "gelsy" and bool((matrix_rank(A) == n).all()):
        residuals = ((matmul(A, X) - Bm).abs() ** 2).sum(-2)
    if vector:
        X = X.squeeze(-1)
        residuals = residuals.squeeze(-1) if residuals.numel() else residuals
    return RT.lstsq(X, residuals, rank, sv)


def cond(A, p=None):
    DC.check_matrix(A, "linalg.cond")
    if p is None or p in (2, -2):
        S = DC.svdvals(A)
        return S.amax(-1) / S.amin(-1) if p != -2 else S.amin(-1) / S.amax(-1)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices")
    return matrix_norm(A, p) * matrix_norm(DC.inv(A), p)


# -- matrix exponential ---------------------------------------------------------------------

def matrix_exp(A):
    """Scaling and squaring over a degree-18 Taylor polynomial (Horner form): the error is
    below float64's rounding for ||A / 2^s|| <= 1."""
    if not isinstance(A, Tensor):
        raise TypeError(f"matrix_exp(): argument 'input' must be Tensor, not {type(A).__name__}")
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_exp: A must be batches of square matrices")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as "
                           f"input. Got {A.dtype.pt_name}")
    n = A.shape[-1]
    if A.numel() == 0:
        return A.clone()
    if A.dtype in (D.float32, D.complex64):    # squaring amplifies rounding: square in double
        return matrix_exp(A.to(D.complex128 if A.dtype.is_complex else D.float64)).to(A.dtype)
    norm = float(A.detach().abs().sum(-2).amax()) if A.numel() else 0.0
    s = max(0, int(math.ceil(math.log2(norm))) + 1) if norm > 0.5 else 0
    X = A / (2 ** s) if s else A
    eye = creation.eye(n, dtype=A.dtype, device=A.device)
    R = eye + X / 18
    for k in range(17, 0, -1):
        R = eye + matmul(X, R) / k
    for _ in range(s):
        R = matmul(R, R)
    return R


# -- Householder products ------------------------------------------------------------------

def householder_product(A, tau, *, out=None):
    DC.check_matrix(A, "linalg.householder_product")
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    if n > m:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater "
                           "than or equal to input.shape[-1]")
    if k > n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater "
                           "than or equal to tau.shape[-1]")
    eye = creation.eye(m, dtype=A.dtype, device=A.device)
    Q = eye.expand(tuple(A.shape[:-2]) + (m, m))
    rows = creation.arange(m, device=A.device)
    for i in range(k):
        col = A[..., :, i]
        v = pointwise.where(rows < i, 0.0, pointwise.where(rows == i, 1.0, col))
        vh = v.conj() if v.dtype.is_complex else v          # H_i = I - tau_i v v^H
        H = eye - tau[..., i:i + 1].unsqueeze(-1) * (v.unsqueeze(-1) * vh.unsqueeze(-2))
        Q = matmul(Q, H)
    return Q[..., :, :n]


# -- tensor equations ----------------------------------------------------------------------

def tensorinv(A, ind=2, *, out=None):
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    left, right = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    p = math.prod(left)
    if p != math.prod(right):
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           "prod(self.shape[:ind])")
    return DC.inv(A.reshape(p, p)).reshape(right + left)


def tensorsolve(A, B, dims=None, *, out=None):
    if dims is not None:
        dims = [d % A.dim() for d in dims]
        rest = [d for d in range(A.dim()) if d not in dims]
        A = A.permute(rest + dims)
    n = B.numel()
    sol_shape = tuple(A.shape[B.dim():])
    return DC.solve(A.reshape(n, -1), B.reshape(n)).reshape(sol_shape)


# -- Cholesky solves -------------------------------------------------------------------------

def _cholesky_solve_grad(g, B, L, result, upper, needs):
    gB = cholesky_solve(g, L, upper)
    gL = None
    if needs[1]:
        common = matmul(gB, result.mH)
        common = common + common.mH
        gL = -matmul(L, common) if upper else -matmul(common, L)
    return gB, gL


def _cholesky_solve(B, L, upper):
    if upper:
        y = DC.solve_triangular(L.mH, B, upper=False)
        return DC.solve_triangular(L, y, upper=True)
    y = DC.solve_triangular(L, B, upper=False)
    return DC.solve_triangular(L.mH, y, upper=True)


CHOLESKY_SOLVE = composite("cholesky_solve", _cholesky_solve, kind="linalg", args=("B", "L"),
                           grad=_cholesky_solve_grad, dtypes="float",
                           signature="cholesky_solve(B, L, upper=False)",
                           doc="X with (L L^T) X = B (or U^T U) from a Cholesky factor")


def cholesky_solve(B, L, upper=False, *, out=None):
    DC.check_matrix(L, "cholesky_solve", "input2", square=True)
    DC.check_matrix(B, "cholesky_solve", "input")
    batch = broadcast_shapes(B.shape[:-2], L.shape[:-2])
    B = B.expand(batch + tuple(B.shape[-2:]))
    L = L.expand(batch + tuple(L.shape[-2:]))
    return run(CHOLESKY_SOLVE, (B, L), {"upper": bool(upper)})


def _cholesky_inverse_grad(g, L, result, upper):
    common = matmul(result, matmul(g + g.mH, result))
    return -matmul(L, common) if upper else -matmul(common, L)


CHOLESKY_INVERSE = composite(
    "cholesky_inverse", lambda L, upper: _cholesky_solve(
        creation.eye(L.shape[-1], dtype=L.dtype, device=L.device).expand(tuple(L.shape)), L, upper),
    kind="linalg", args=("L",), grad=_cholesky_inverse_grad, dtypes="float",
    signature="cholesky_inverse(L, upper=False)", doc="(L L^T)^-1 from a Cholesky factor")


def cholesky_inverse(L, upper=False, *, out=None):
    DC.check_matrix(L, "cholesky_inverse", "input", square=True)
    return run(CHOLESKY_INVERSE, (L,), {"upper": bool(upper)})


# -- torch.* spellings -----------------------------------------------------------------------

def svd_uv(input, some=True, compute_uv=True, *, out=None):
    """torch.svd: (U, S, V) with V, not V^T; reduced unless some=False."""
    U, S, Vh = DC.svd(input, full_matrices=not some)
    if not compute_uv:
        return RT.svd_uv(creation.zeros_like(U), S, creation.zeros_like(Vh.mH))
    return RT.svd_uv(U, S, Vh.mH)


def qr_some(input, some=True, *, out=None):
    Q, R = DC.qr(input, "reduced" if some else "complete")
    return RT.qr(Q, R)


def cholesky_legacy(input, upper=False, *, out=None):
    return DC.cholesky(input, upper=upper)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    M = A.mT if transpose else A
    X = DC.solve_triangular(M, b, upper=upper != transpose, unitriangular=unitriangular)
    return RT.triangular_solve(X, A.clone())


def lu_solve_legacy(b, LU_data, LU_pivots, *, out=None):
    return DC.lu_solve(LU_data, LU_pivots, b)


def _lu_legacy(A, pivot=True, get_infos=False, out=None):
    r = DC.lu_factor_ex(A, pivot=pivot)
    return (r.LU, r.pivots, r.info) if get_infos else (r.LU, r.pivots)


LINALG = {"cholesky": DC.cholesky, "cholesky_ex": DC.cholesky_ex, "eigh": DC.eigh,
          "eigvalsh": DC.eigvalsh, "svd": DC.svd, "svdvals": DC.svdvals, "qr": DC.qr,
          "lu_factor": DC.lu_factor, "lu_factor_ex": DC.lu_factor_ex, "lu": DC.lu,
          "lu_solve": DC.lu_solve, "solve_triangular": DC.solve_triangular, "solve": DC.solve,
          "solve_ex": DC.solve_ex, "inv": DC.inv, "inv_ex": DC.inv_ex, "det": DC.det,
          "slogdet": DC.slogdet, "pinv": pinv, "matrix_rank": matrix_rank, "lstsq": lstsq,
          "cond": cond, "matrix_exp": matrix_exp, "householder_product": householder_product,
          "tensorinv": tensorinv, "tensorsolve": tensorsolve, "LinAlgError": DC.LinAlgError}
PUBLIC = {"svd": svd_uv, "qr": qr_some, "cholesky": cholesky_legacy, "cholesky_solve":
          cholesky_solve, "cholesky_inverse": cholesky_inverse, "triangular_solve":
          triangular_solve, "lu_solve": lu_solve_legacy, "lu_unpack": DC.lu_unpack,
          "pinverse": pinverse, "inverse": DC.inv, "det": DC.det, "slogdet": DC.slogdet,
          "logdet": DC.logdet, "matrix_exp": matrix_exp, "orgqr": householder_product,
          "lu": _lu_legacy}
METHODS = {"svd": svd_uv, "qr": qr_some, "cholesky": cholesky_legacy,
           "cholesky_solve": cholesky_solve, "cholesky_inverse": cholesky_inverse,
           "triangular_solve": triangular_solve, "lu_solve": lu_solve_legacy,
           "pinverse": pinverse, "inverse": DC.inv, "det": DC.det, "slogdet": DC.slogdet,
           "logdet": DC.logdet, "matrix_exp": matrix_exp, "orgqr": householder_product,
           "lu": _lu_legacy}


# The op modules this one's derivative rules and decompositions call (at run time
# only). Imported last: they import this module in turn (see docs/architecture.md).
from . import creation, pointwise  # noqa: E402
