"""The linear-algebra prims on numpy / scipy's LAPACK: Cholesky, symmetric and general
eigensolvers, SVD, QR, LU with partial pivoting and triangular solves, each over a batch (*B, m, n).

Failures LAPACK reports per matrix (not positive-definite, singular U) are written to
an `info` output (PyTorch's convention: 0 ok, k > 0 the order of the failing minor or
pivot); the frontend decides whether that is an error."""
from __future__ import annotations

import numpy as np

def _batches(a):
    """a as (N, m, n) and its batch shape."""
    return a.reshape((int(np.prod(a.shape[:-2])),) + a.shape[-2:]), a.shape[:-2]


def linalg_cholesky(L, info, A):
    a, _ = _batches(np.asarray(A))
    info[...] = 0
    if a.size == 0:
        return
    ls = L.reshape(a.shape)
    infos = info.reshape(-1)
    for i, m in enumerate(a):
        try:
            ls[i] = np.linalg.cholesky(m)
            infos[i] = 0
        except np.linalg.LinAlgError:
            ls[i] = 0
            infos[i] = _failing_minor(m)


def _failing_minor(m):
    for k in range(1, m.shape[0] + 1):
        try:
            np.linalg.cholesky(m[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return m.shape[0]


def linalg_eigh(w, V, A, *, upper):
    if A.size == 0:
        return
    vals, vecs = np.linalg.eigh(np.asarray(A), UPLO="U" if upper else "L")
    w[...] = vals
    V[...] = vecs


def linalg_eig(L, V, A):
    """numpy's geev; a real A's eigenpairs come back real where they are (cast here)."""
    if A.size == 0:
        return
    vals, vecs = np.linalg.eig(np.asarray(A))
    L[...] = vals
    V[...] = vecs


def linalg_svd(U, S, Vh, A, *, full_matrices):
    a = np.asarray(A)
    if a.size == 0:
        _empty_svd(U, S, Vh, a, full_matrices)
        return
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    U[...] = u
    S[...] = s
    Vh[...] = vh


def _empty_svd(U, S, Vh, a, full_matrices):
    """numpy refuses empty matrices; an empty SVD is identities where a side is not empty."""
    S[...] = 0
    for out in (U, Vh):
        out[...] = 0
        if out.size:
            n = min(out.shape[-2:])
            idx = np.arange(n)
            out[..., idx, idx] = 1


def linalg_qr(Q, R, A, *, mode):
    a = np.asarray(A)
    m, n = a.shape[-2:]
    if a.size == 0:
        Q[...] = 0
        R[...] = 0
        if Q.size:
            k = min(Q.shape[-2:])
            Q[..., np.arange(k), np.arange(k)] = 1
        return
    q, r = np.linalg.qr(a, mode=mode)
    Q[...] = q
    R[...] = r


def linalg_lu_factor(LU, pivots, info, A):
    from scipy.linalg import lapack
    a, _ = _batches(np.asarray(A))
    if a.shape[0] == 0:
        return
    lus = LU.reshape(a.shape)
    piv = pivots.reshape(a.shape[0], min(a.shape[-2:]))
    infos = info.reshape(-1)
    if a.shape[-1] == 0 or a.shape[-2] == 0:
        lus[...] = a
        piv[...] = np.arange(1, piv.shape[-1] + 1)
        infos[...] = 0
        return
    getrf, = lapack.get_lapack_funcs(("getrf",), (a,))
    for i, m in enumerate(a):
        lu, p, inf = getrf(np.array(m, copy=True))
        lus[i] = lu
        piv[i] = p + 1
        infos[i] = inf


def linalg_solve_triangular(X, A, B, *, upper, left, unitriangular):
    """BLAS trsm, which (as PyTorch) divides by a zero pivot instead of refusing."""
    from scipy.linalg import blas
    a, b = np.asarray(A), np.asarray(B)
    if X.size == 0:
        return
    aa, _ = _batches(a)
    bb, _ = _batches(b)
    xs = X.reshape(bb.shape)
    trsm, = blas.get_blas_funcs(("trsm",), (aa, bb))
    with np.errstate(all="ignore"):
        for i in range(bb.shape[0]):
            xs[i] = trsm(1.0, aa[i], bb[i], side=0 if left else 1, lower=not upper,
                         diag=int(bool(unitriangular)))


KERNELS = {"linalg_cholesky": linalg_cholesky, "linalg_eigh": linalg_eigh, "linalg_eig": linalg_eig,
           "linalg_svd": linalg_svd, "linalg_qr": linalg_qr,
           "linalg_lu_factor": linalg_lu_factor,
           "linalg_solve_triangular": linalg_solve_triangular}
