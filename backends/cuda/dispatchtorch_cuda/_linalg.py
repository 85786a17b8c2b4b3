"""The linear-algebra prims on the array module: cupy's cuSOLVER wrappers on a GPU
(cupy.linalg, cupyx.scipy.linalg), numpy and scipy in the CPU-only tests. Semantics as
the reference backend's (dispatchtorch_cpu/linalg_kernels.py)."""
from __future__ import annotations

import math


def _flat(a):
    """a as (N, m, n)."""
    return a.reshape((math.prod(a.shape[:-2]),) + a.shape[-2:])


def build_linalg_kernels(am) -> dict:
    xp = am.xp

    def cholesky_or_none(m):
        try:
            lower = xp.linalg.cholesky(m)
        except Exception:               # numpy raises LinAlgError; cuSOLVER gives NaN
            return None
        return lower if bool(xp.isfinite(xp.diagonal(lower)).all()) else None

    def linalg_cholesky(L, info, A):
        info[...] = 0
        if A.size == 0:
            return
        a, ls, infos = _flat(A), L.reshape((-1,) + L.shape[-2:]), info.reshape(-1)
        for i in range(a.shape[0]):
            lower = cholesky_or_none(a[i])
            if lower is not None:
                ls[i] = lower
                continue
            ls[i] = 0          # info: the order of the first leading minor that fails
            n = a.shape[-1]
            infos[i] = next((k for k in range(1, n + 1) if cholesky_or_none(a[i][:k, :k])
                             is None), n)

    def linalg_eigh(w, V, A, *, upper):
        if A.size:
            vals, vecs = xp.linalg.eigh(A, UPLO="U" if upper else "L")
            w[...] = vals
            V[...] = vecs

    def linalg_eig(L, V, A):
        """On the host: cuSOLVER's geev (cupy) orders the eigenvalues unlike LAPACK's, and
        PyTorch's CUDA eig runs on the host (magma's geev) too."""
        if A.size:
            import numpy as np
            vals, vecs = np.linalg.eig(am.download(A))
            L[...] = am.upload(vals.astype(L.dtype))
            V[...] = am.upload(vecs.astype(V.dtype))

    def linalg_svd(U, S, Vh, A, *, full_matrices):
        if A.size == 0:
            S[...] = 0
            for out in (U, Vh):
                out[...] = 0
                if out.size:
                    k = min(out.shape[-2:])
                    out[..., xp.arange(k), xp.arange(k)] = 1
            return
        u, s, vh = xp.linalg.svd(A, full_matrices=full_matrices)
        U[...] = u
        S[...] = s
        Vh[...] = vh

    def linalg_qr(Q, R, A, *, mode):
        if A.size == 0:
            Q[...] = 0
            R[...] = 0
            if Q.size:
                k = min(Q.shape[-2:])
                Q[..., xp.arange(k), xp.arange(k)] = 1
            return
        a = _flat(A)
        qs, rs = Q.reshape((-1,) + Q.shape[-2:]), R.reshape((-1,) + R.shape[-2:])
        for i in range(a.shape[0]):
            q, r = xp.linalg.qr(a[i], mode=mode)
            qs[i] = q
            rs[i] = r

    def linalg_lu_factor(LU, pivots, info, A):
        a = _flat(A)
        k = min(A.shape[-2:])
        lus = LU.reshape(a.shape)
        piv = pivots.reshape(a.shape[0], k)
        infos = info.reshape(-1)
        for i in range(a.shape[0]):
            if k == 0:
                lus[i] = a[i]
                infos[i] = 0
                continue
            lu, p = am.lu_factor(a[i])
            lus[i] = lu
            piv[i] = p + 1
            zero = xp.diagonal(lu)[:k] == 0
            infos[i] = int(xp.argmax(zero)) + 1 if bool(zero.any()) else 0

    def linalg_solve_triangular(X, A, B, *, upper, left, unitriangular):
        if X.size == 0:
            return
        a, b = _flat(A), _flat(B)
        xs = X.reshape(b.shape)
        for i in range(b.shape[0]):
            xs[i] = am.trsm(a[i], b[i], lower=not upper, unit=unitriangular, left=left)

    return {"linalg_cholesky": linalg_cholesky, "linalg_eigh": linalg_eigh, "linalg_eig": linalg_eig,
            "linalg_svd": linalg_svd, "linalg_qr": linalg_qr,
            "linalg_lu_factor": linalg_lu_factor,
            "linalg_solve_triangular": linalg_solve_triangular}
