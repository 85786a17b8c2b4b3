"""torch.linalg's decompositions and solvers: six prims (Cholesky, eigh, SVD, QR, LU,
triangular solve) with the derivative rules of PyTorch's derivatives.yaml, and the
composites built on them (solve, inv, det, slogdet, lu_solve, cholesky_solve, pinv,
lstsq, matrix_rank, cond, ...; see linalg_more.py). Batched everywhere: (*B, m, n)."""
from __future__ import annotations

import math

from .. import _dtype as D
from .. import return_types as RT
from .._run import apply, same_place
from .._shape import broadcast_shapes
from .._tensor import Tensor
from ..dispatch.registry import prim_row
from ._composite import composite, run
from .linalg import matmul
from ._out import takes_out


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a matrix had no decomposition (not positive-definite,
    singular)."""


# -- argument checks ---------------------------------------------------------------------------

def check_matrix(A, name, arg="A", square=False):
    if not isinstance(A, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(A).__name__}")
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")
    if not (A.dtype.is_floating_point or A.dtype.is_complex) or A.dtype in (D.float16,
                                                                             D.bfloat16):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{A.dtype.pt_name}")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: {arg} must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _prim(op, A, outs, kparams=None, others=()):
    place = same_place(op.name, (A, *others))
    return apply(op, place, (A, *others), (A._h, *(o._h for o in others)), outs, kparams or {})


def _raise_info(info, name, what):
    if info.numel() and bool((info != 0).any()):
        k = int(info.reshape(-1)[(info.reshape(-1) != 0).nonzero()[0, 0]])
        batch = "" if info.dim() == 0 else " (batch element " \
            f"{int((info.reshape(-1) != 0).nonzero()[0, 0])})"
        raise LinAlgError(f"{name}{batch}: {what.format(k=k)}")


def _zero(g, like):
    return g if g is not None else creation.zeros_like(like)


# -- triangular solve ------------------------------------------------------------------------------

def _solve_triangular_grad(g, A, B, result, upper, left, unitriangular, needs):
    gB = solve_triangular(A.mH, g, upper=not upper, left=left, unitriangular=unitriangular)
    gA = None
    if needs[0]:
        gA = -matmul(gB, result.mH) if left else -matmul(result.mH, gB)
        gA = gA.triu(int(unitriangular)) if upper else gA.tril(-int(unitriangular))
    return gA, gB if needs[1] else None


SOLVE_TRIANGULAR = prim_row("linalg_solve_triangular", kind="linalg", args=("A", "B"),
                            dtypes="float", grad=_solve_triangular_grad)


@takes_out("linalg.solve_triangular", dtype="exact")
def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    check_matrix(A, "linalg.solve_triangular", square=True)
    check_matrix(B, "linalg.solve_triangular", "B")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, "
                           f"but found A of type {A.dtype.pt_name} and B of type "
                           f"{B.dtype.pt_name} instead")
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    batch = broadcast_shapes(A.shape[:-2], B.shape[:-2])
    A = A.expand(batch + (n, n))
    B = B.expand(batch + tuple(B.shape[-2:]))
    r = _prim(SOLVE_TRIANGULAR, A, ((tuple(B.shape), B.dtype),),
              {"upper": bool(upper), "left": bool(left), "unitriangular": bool(unitriangular)},
              (B,))
    return r


# -- Cholesky ----------------------------------------------------------------------------------

def _cholesky_grad(g, result):
    gL, L = g[0], result
    if gL is None:
        return None
    gA = matmul(L.mH, gL).tril()
    gA = 0.5 * (gA + gA.tril(-1).mH)
    gA = solve_triangular(L.mH, gA, upper=True, left=True)
    return solve_triangular(L, gA, upper=False, left=False)


CHOLESKY = prim_row("linalg_cholesky", kind="linalg", args=("A",), n_out=2,
                    dtypes="float", grad=_cholesky_grad)


@takes_out("linalg.cholesky_ex", dtype="exact")
def cholesky_ex(A, *, upper=False, check_errors=False):
    check_matrix(A, "linalg.cholesky", square=True)
    L, info = _prim(CHOLESKY, A, ((tuple(A.shape), A.dtype), (tuple(A.shape[:-2]), D.int32)))
    if check_errors:
        _raise_info(info, "linalg.cholesky", _NOT_PD)
    if upper:       # U = L^H, a plain tensor (PyTorch's has no conjugate bit)
        L = L.mT.conj_physical() if L.dtype.is_complex else L.mT
    return RT.cholesky_ex(L, info)


_NOT_PD = "The factorization could not be completed because the input is not " \
          "positive-definite (the leading minor of order {k} is not positive-definite)."


@takes_out("linalg.cholesky", dtype="exact")
def cholesky(A, *, upper=False):
    L, info = cholesky_ex(A, upper=upper)
    _raise_info(info, "linalg.cholesky", _NOT_PD)
    return L


# -- eigh ----------------------------------------------------------------------------------------

def check_phase_invariant(VhgV, op):
    """PyTorch's check: a loss that depends on the phases of the eigenvectors (which
    LAPACK fixes arbitrarily) has no gradient."""
    if VhgV.dtype.is_complex and not bool((VhgV.diagonal(0, -2, -1).imag.abs() <= 1e-2).all()):
        raise RuntimeError(f"{op}: The eigenvectors in the complex case are specified up to "
                           f"multiplication by e^{{i phi}}. The specified loss function depends "
                           f"on this quantity, so it is ill-defined.")


def _eigh_grad(g, result, result1):
    gL, gV = g
    L, V = result, result1
    if gV is None:
        if gL is None:
            return None
        return matmul(V * gL.unsqueeze(-2), V.mH)
    VhgV = matmul(V.mH, gV)
    check_phase_invariant(VhgV, "linalg_eigh_backward")
    VhgV = 0.5 * (VhgV - VhgV.mH)
    n = L.shape[-1]
    eye = creation.eye(n, dtype=D.bool_, device=L.device)
    E = pointwise.where(eye, 1.0, L.unsqueeze(-2) - L.unsqueeze(-1))
    ret = pointwise.where(eye, 0.0, VhgV / E)
    if gL is not None:
        ret = ret + shape_ops.diag_embed(gL)
    return matmul(V, matmul(ret, V.mH))


EIGH = prim_row("linalg_eigh", kind="linalg", args=("A",), n_out=2, dtypes="float",
                grad=_eigh_grad)


@takes_out("linalg.eigh", dtype="exact")
def eigh(A, UPLO="L"):
    check_matrix(A, "linalg.eigh", square=True)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    w, V = _prim(EIGH, A, ((tuple(A.shape[:-1]), A.dtype.to_real()), (tuple(A.shape), A.dtype)),
                 {"upper": UPLO == "U"})
    return RT.eigh(w, V)


@takes_out("linalg.eigvalsh", dtype="exact")
def eigvalsh(A, UPLO="L"):
    return eigh(A, UPLO).eigenvalues


# -- SVD ---------------------------------------------------------------------------------------

def _svd_grad(g, result, result1, result2, full_matrices):
    gU, gS, gVh = g
    U, S, Vh = result, result1, result2
    k = S.shape[-1]
    if full_matrices:
        U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
        gU = gU.narrow(-1, 0, k) if gU is not None else None
        gVh = gVh.narrow(-2, 0, k) if gVh is not None else None
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:
        if gS is None:
            return None
        return matmul(U, gS.unsqueeze(-1) * Vh) if m >= n else matmul(U * gS.unsqueeze(-2), Vh)
    UhgU = matmul(U.mH, gU) if gU is not None else None
    VhgV = matmul(Vh, gVh.mH) if gVh is not None else None
    UhgU = UhgU - UhgU.mH if UhgU is not None else None
    VhgV = VhgV - VhgV.mH if VhgV is not None else None
    if U.dtype.is_complex:
        _check_svd_phases(UhgU, VhgV)
    S2 = S * S
    eye = creation.eye(k, dtype=D.bool_, device=S.device)
    E = pointwise.where(eye, 1.0, S2.unsqueeze(-2) - S2.unsqueeze(-1))
    if UhgU is not None and VhgV is not None:
        gA = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E
    elif UhgU is not None:
        gA = UhgU * S.unsqueeze(-2) / E
    else:
        gA = S.unsqueeze(-1) * VhgV / E
    if gS is not None:
        gA = gA + shape_ops.diag_embed(gS)
    if U.dtype.is_complex and UhgU is not None and VhgV is not None:
        # the phase of each singular pair: i Im(diag(U^H gU)) / S (PyTorch's svd_backward)
        gA = gA + shape_ops.diag_embed(UhgU.diagonal(0, -2, -1) / (2 * S))
    if m > n and gU is not None:
        gA = matmul(U, gA)
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - matmul(U, matmul(U.mH, gUSinv))
        return matmul(gA, Vh)
    if m < n and gVh is not None:
        gA = matmul(gA, Vh)
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = gA + SinvgVh - matmul(matmul(SinvgVh, Vh.mH), Vh)
        return matmul(U, gA)
    return matmul(U, matmul(gA, Vh)) if m >= n else matmul(matmul(U, gA), Vh)


def _check_svd_phases(UhgU, VhgV):
    """PyTorch's svd_backward check: the loss must not depend on the phase e^{i phi} that
    (U, V) -> (U e^{i phi}, V e^{i phi}) leaves free: Im diag(U^H gU) = -Im diag(V^H gV)."""
    iu = UhgU.diagonal(0, -2, -1).imag if UhgU is not None else None
    iv = VhgV.diagonal(0, -2, -1).imag if VhgV is not None else None
    a = iu if iu is not None else creation.zeros_like(iv)
    b = -iv if iv is not None else creation.zeros_like(iu)
    if not bool(((a - b).abs() <= 1e-2 + 1e-2 * b.abs()).all()):
        raise RuntimeError("svd_backward: The singular vectors in the complex case are "
                           "specified up to multiplication by e^{i phi}. The specified loss "
                           "function depends on this phase term, making it ill-defined.")


SVD = prim_row("linalg_svd", kind="linalg", args=("A",), n_out=3, dtypes="float",
               grad=_svd_grad)


@takes_out("linalg.svd", dtype="exact")
def svd(A, full_matrices=True, *, driver=None):
    check_matrix(A, "linalg.svd")
    m, n = A.shape[-2:]
    k = min(m, n)
    batch = tuple(A.shape[:-2])
    um, vn = (m, n) if full_matrices else (k, k)
    U, S, Vh = _prim(SVD, A, ((batch + (m, um), A.dtype), (batch + (k,), A.dtype.to_real()),
                              (batch + (vn, n), A.dtype)), {"full_matrices": bool(full_matrices)})
    return RT.svd(U, S, Vh)


@takes_out("linalg.svdvals", dtype="exact")
def svdvals(A, *, driver=None):
    return svd(A, full_matrices=False).S


# -- QR ----------------------------------------------------------------------------------------

def _qr_grad_tall(gQ, gR, Q, R):
    """m >= n: gA = Q (gR + T R^-H) + (gQ - Q Q^H gQ) R^-H, T the strict lower triangle of
    S = Q^H gQ - (.)^H + R gR^H - (.)^H plus half its (imaginary) diagonal."""
    qdq = matmul(Q.mH, gQ)
    rdr = matmul(R, gR.mH)
    skew = qdq - qdq.mH + rdr - rdr.mH     # its diagonal is 2i Im(.): zero when real
    low = skew.tril(-1) + 0.5 * shape_ops.diag_embed(skew.diagonal(0, -2, -1))
    first = matmul(Q, gR + _right_inv_t(low, R))
    return first + _right_inv_t(gQ - matmul(Q, qdq), R)


def _right_inv_t(x, R):
    """x R^-H for upper-triangular R."""
    return solve_triangular(R.mH, x, upper=False, left=False)


def _qr_grad(g, A, result, result1, mode):
    gQ, gR = g
    Q, R = result, result1
    m, n = A.shape[-2:]
    if mode == "complete" and m > n:
        raise NotImplementedError("The QR decomposition is not differentiable when "
                                  "mode='complete' and nrows > ncols.")
    gQ = _zero(gQ, Q)
    gR = _zero(gR, R)
    if m >= n:
        return _qr_grad_tall(gQ, gR, Q, R)
    U, V = R.narrow(-1, 0, m), R.narrow(-1, m, n - m)
    Y = A.narrow(-1, m, n - m)
    gU, gV = gR.narrow(-1, 0, m), gR.narrow(-1, m, n - m)
    gX = _qr_grad_tall(gQ + matmul(Y, gV.mH), gU, Q, U)
    return memory.cat([gX, matmul(Q, gV)], -1)


QR = prim_row("linalg_qr", kind="linalg", args=("A",), n_out=2, dtypes="float",
              grad=_qr_grad)


@takes_out("linalg.qr", dtype="exact")
def qr(A, mode="reduced"):
    check_matrix(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    m, n = A.shape[-2:]
    k = min(m, n)
    batch = tuple(A.shape[:-2])
    qn, rm = (m, m) if mode == "complete" else (k, k)
    Q, R = _prim(QR, A, ((batch + (m, qn), A.dtype), (batch + (rm, n), A.dtype)),
                 {"mode": "complete" if mode == "complete" else "reduced"})
    if mode == "r":
        Q = creation.empty(0, dtype=A.dtype, device=A.device)
    return RT.qr(Q, R)


# -- LU ------------------------------------------------------------------------------------------

def _lu_factor_grad(g, A, result, result1):
    """PyTorch's linalg_lu_backward on the packed factors (square, wide and tall)."""
    gLU = g[0]
    if gLU is None:
        return None
    m, n = A.shape[-2:]
    k = min(m, n)
    P, L, U = lu_unpack(result, result1)
    gL = gLU.narrow(-1, 0, k).tril(-1)
    gU = gLU.narrow(-2, 0, k).triu()
    if m == n:
        phi = matmul(L.mH, gL).tril(-1) + matmul(gU, U.mH).triu()
        x = solve_triangular(L.mH, phi, upper=True, left=True, unitriangular=True)
        return matmul(P, solve_triangular(U.mH, x, upper=False, left=False))
    if m < n:                          # wide: U = [U1 | U2]
        U1, gU1, gU2 = U.narrow(-1, 0, k), gU.narrow(-1, 0, k), gU.narrow(-1, k, n - k)
        x = matmul(L.mH, gL) - matmul(gU, U.mH)
        x = solve_triangular(U1.mH, x.tril(-1), upper=False, left=False)
        x = memory.cat([x + gU1.triu(), gU2], -1)
        return matmul(P, solve_triangular(L.mH, x, upper=True, left=True, unitriangular=True))
    L1, gL1, gL2 = L.narrow(-2, 0, k), gL.narrow(-2, 0, k), gL.narrow(-2, k, m - k)
    x = matmul(gU, U.mH) - matmul(L.mH, gL)
    x = solve_triangular(L1.mH, x.triu(), upper=True, left=True, unitriangular=True)
    x = memory.cat([x + gL1.tril(-1), gL2], -2)
    return matmul(P, solve_triangular(U.mH, x, upper=False, left=False))


LU_FACTOR = prim_row("linalg_lu_factor", kind="linalg", args=("A",), n_out=3,
                     dtypes="float", grad=_lu_factor_grad)


@takes_out("linalg.lu_factor_ex", dtype="exact")
def lu_factor_ex(A, *, pivot=True, check_errors=False):
    check_matrix(A, "linalg.lu_factor")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    m, n = A.shape[-2:]
    batch = tuple(A.shape[:-2])
    LU, piv, info = _prim(LU_FACTOR, A, ((tuple(A.shape), A.dtype), (batch + (min(m, n),), D.int32),
                                         (batch, D.int32)))
    if check_errors:
        _raise_info(info, "torch.linalg.lu_factor_ex", _SINGULAR_LU)
    return RT.lu_factor_ex(LU, piv, info)


_SINGULAR_LU = "The factorization could not be completed because the input is singular " \
               "(U[{k}, {k}] is zero)."


@takes_out("linalg.lu_factor", dtype="exact")
def lu_factor(A, *, pivot=True):
    r = lu_factor_ex(A, pivot=pivot)
    return RT.lu_factor(r.LU, r.pivots)


def _permutation(pivots, m, dtype):
    """P (*B, m, m) from 1-based LAPACK row swaps (applied in order)."""
    batch = tuple(pivots.shape[:-1])
    perm = creation.arange(m, device=pivots.device).expand(batch + (m,)).clone()
    piv = pivots.to(D.int64) - 1
    for i in range(pivots.shape[-1]):
        j = piv[..., i:i + 1]
        a = perm[..., i:i + 1].clone()
        b = perm.gather(-1, j)
        perm[..., i:i + 1] = b
        perm.scatter_(-1, j, a)
    # row i of P A is row perm[i] of A: P[i, perm[i]] = 1, so A = P^T (PA); PyTorch returns P
    # with A = P L U, i.e. P[perm[i], i] = 1
    eye = creation.eye(m, dtype=dtype, device=pivots.device)
    return eye[perm].mT


@takes_out("linalg.lu_unpack", dtype="exact")
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    P = _permutation(LU_pivots, m, LU_data.dtype) if unpack_pivots else \
        creation.empty(0, dtype=LU_data.dtype, device=LU_data.device)
    if unpack_data:
        L = LU_data.narrow(-1, 0, k).tril(-1) + creation.eye(m, k, dtype=LU_data.dtype,
                                                          device=LU_data.device)
        U = LU_data.narrow(-2, 0, k).triu()
    else:
        L = U = creation.empty(0, dtype=LU_data.dtype, device=LU_data.device)
    return RT.lu_unpack(P, L, U)


@takes_out("linalg.lu", dtype="exact")
def lu(A, *, pivot=True):
    r = lu_factor_ex(A, pivot=pivot)
    return RT.lu(*lu_unpack(r.LU, r.pivots))


@takes_out("linalg.lu_solve", dtype="exact")
def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """X with A X = B (or X A = B; adjoint: A^T), A = P L U as lu_factor gives it."""
    P, L, U = lu_unpack(LU, pivots)
    if left and not adjoint:       # X = U^-1 L^-1 P^T B
        y = solve_triangular(L, matmul(P.mT, B), upper=False, unitriangular=True)
        return solve_triangular(U, y, upper=True)
    if left:                       # A^T X = B: X = P L^-T U^-T B
        y = solve_triangular(U.mH, B, upper=False)
        return matmul(P, solve_triangular(L.mH, y, upper=True, unitriangular=True))
    if not adjoint:                # X A = B: X = B U^-1 L^-1 P^T
        y = solve_triangular(U, B, upper=True, left=False)
        return matmul(solve_triangular(L, y, upper=False, left=False, unitriangular=True), P.mT)
    # X A^T = B: X = B P L^-T U^-T
    y = solve_triangular(L.mH, matmul(B, P), upper=True, left=False, unitriangular=True)
    return solve_triangular(U.mH, y, upper=False, left=False)


# -- solve, inv, det, slogdet: composites over LU with PyTorch's rules ------------------------------

def _solve(A, B, left):
    r = lu_factor_ex(A)
    _raise_info(r.info, "torch.linalg.solve", "The solver failed because the input matrix is "
                "singular.")
    return lu_solve(r.LU, r.pivots, B, left=left)


def _solve_grad(g, A, B, result, left, needs):
    gB = _solve(A.mH, g, left)
    gA = None
    if needs[0]:
        gA = -matmul(gB, result.mH) if left else -matmul(result.mH, gB)
    return gA, gB


SOLVE = composite("linalg_solve", _solve, kind="linalg", args=("A", "B"), grad=_solve_grad,
                  dtypes="float", signature="linalg_solve(A: (*B, n, n), B, *, left)",
                  doc="X with A X = B (or X A = B): LU with partial pivoting; singular A raises")


@takes_out("linalg.solve", dtype="exact")
def solve(A, B, *, left=True):
    check_matrix(A, "linalg.solve", square=True)
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg.solve(): argument 'B' must be Tensor, not {type(B).__name__}")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {A.dtype.pt_name} and B of type {B.dtype.pt_name} instead")
    n = A.shape[-1]
    # PyTorch: B is a batch of vectors when B.dim() == 1 or B.shape == A.shape[:-1]
    vector = B.dim() == 1 or (left and B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.dim() < 2 or (Bm.shape[-2] if left else Bm.shape[-1]) != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{'x'.join(map(str, B.shape))})")
    batch = broadcast_shapes(A.shape[:-2], Bm.shape[:-2])
    A = A.expand(batch + (n, n))
    Bm = Bm.expand(batch + tuple(Bm.shape[-2:]))
    X = run(SOLVE, (A, Bm), {"left": bool(left)})
    return X.squeeze(-1) if vector else X


@takes_out("linalg.solve_ex", dtype="exact")
def solve_ex(A, B, *, left=True, check_errors=False):
    X = solve(A, B, left=left)
    return RT.solve_ex(X, creation.zeros(tuple(A.shape[:-2]), dtype=D.int32, device=A.device))


@takes_out("linalg.inv", dtype="exact")
def inv(A):
    check_matrix(A, "linalg.inv", square=True)
    n = A.shape[-1]
    eye = creation.eye(n, dtype=A.dtype, device=A.device).expand(tuple(A.shape))
    return solve(A, eye)


@takes_out("linalg.inv_ex", dtype="exact")
def inv_ex(A, *, check_errors=False):
    check_matrix(A, "linalg.inv", square=True)
    r = lu_factor_ex(A)
    if check_errors:
        _raise_info(r.info, "torch.linalg.inv_ex", "The diagonal element {k} is zero, the "
                    "inversion could not be completed because the input matrix is singular.")
    n = A.shape[-1]
    if bool((r.info != 0).any()):
        X = lu_solve(r.LU, r.pivots, creation.eye(n, dtype=A.dtype, device=A.device).expand(A.shape))
    else:
        X = inv(A)
    return RT.inv_ex(X, r.info)


def _lu_det(A):
    r = lu_factor_ex(A)
    d = r.LU.diagonal(0, -2, -1)
    n = A.shape[-1]
    swaps = (r.pivots.to(D.int64) != creation.arange(1, n + 1, device=A.device)).sum(-1)
    sign = 1 - 2 * (swaps % 2).to(A.dtype)
    return d, sign


def _det(A):
    d, sign = _lu_det(A)
    return d.prod(-1) * sign


def _det_grad(g, A, result):
    """PyTorch's det backward through the SVD, so singular matrices get the true
    gradient: d det / dA = conj(det(U) det(V^H)) U diag(prod_{j != i} s_j) V^H. A matrix
    with an inf or NaN gets NaN everywhere, as PyTorch's (its SVD would not converge)."""
    finite = ((A == A) & (A.abs() != math.inf)).all(-1).all(-1).unsqueeze(-1).unsqueeze(-1)
    A = pointwise.where(finite, A, 0.0)
    U, S, Vh = svd(A, full_matrices=False)
    n = S.shape[-1]
    ones = creation.ones(tuple(S.shape[:-1]) + (1,), dtype=S.dtype, device=S.device)
    before = memory.cat([ones, S.narrow(-1, 0, n - 1)], -1).cumprod(-1) if n else S
    after = memory.cat([S.narrow(-1, 1, n - 1), ones], -1).flip(-1).cumprod(-1).flip(-1) if n else S
    others = before * after
    sgn = _det(U) * _det(Vh)
    sgn = sgn.conj() if sgn.dtype.is_complex else sgn
    return pointwise.where(finite, matmul(U * (others * (g * sgn).unsqueeze(-1)).unsqueeze(-2),
                                          Vh), math.nan)


DET = composite("linalg_det", _det, kind="linalg", args=("A",), grad=_det_grad, dtypes="float",
                signature="linalg_det(A: (*B, n, n)) -> (*B,)",
                doc="determinant from the LU factors (rule through the SVD, exact when singular)")


@takes_out("linalg.det", dtype="exact")
def det(A):
    check_matrix(A, "linalg.det", square=True)
    return run(DET, (A,), {})


def _slogdet(A):
    d, sign = _lu_det(A)
    s = (d.sgn().prod(-1) * sign)
    return s, d.abs().log().sum(-1)


def _slogdet_grad(g, A, result, result1):
    """PyTorch's slogdet_backward: (g_logabsdet - i Im(conj(g_sign) sign)) A^-H; the
    sign of a real matrix is locally constant."""
    g_sign, g_log = g
    if not A.dtype.is_complex:
        g_sign = None
    if g_sign is None and g_log is None:
        return None
    if g_sign is not None:
        phase = (g_sign.conj() * result).imag * -1j
        g_log = phase if g_log is None else g_log + phase
    return g_log.unsqueeze(-1).unsqueeze(-1) * inv(A).mH


SLOGDET = composite("linalg_slogdet", _slogdet, kind="linalg", args=("A",), n_out=2,
                    grad=_slogdet_grad, dtypes="float",
                    signature="linalg_slogdet(A) -> (sign, logabsdet)",
                    doc="sign and log |det| from the LU factors")


@takes_out("linalg.slogdet", dtype="exact")
def slogdet(A):
    check_matrix(A, "linalg.slogdet", square=True)
    s, l = run(SLOGDET, (A,), {})
    return RT.slogdet(s, l)


def logdet(A):
    check_matrix(A, "logdet", square=True)
    s, l = slogdet(A)
    if A.dtype.is_complex:                  # log det = log(sign) + log |det|
        return pointwise.log(s) + l
    return pointwise.where(s < 0, float("nan"), l)


# The op modules this one's derivative rules and decompositions call (at run time
# only). Imported last: they import this module in turn (see docs/architecture.md).
from . import creation, memory, pointwise, shape_ops  # noqa: E402
