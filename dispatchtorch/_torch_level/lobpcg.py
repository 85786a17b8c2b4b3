"""torch.lobpcg: the k largest (or smallest) eigenpairs of a symmetric positive definite
(generalised, with B) eigenproblem by LOBPCG, a port of PyTorch's torch/_lobpcg.py (BSD
licence): the same argument handling, defaults, batching and errors; the iteration in
lobpcg_solver, the derivative (A's, with B None) in lobpcg_backward."""
from __future__ import annotations

from .. import _dtype as D
from .. import ops as _ops
from ..autograd.function import Function
from .lobpcg_backward import symeig_backward
from .lobpcg_solver import LOBPCG


class _LOBPCGFunction(Function):
    """lobpcg with PyTorch's backward: A's gradient only (B, sparse and complex refused)."""

    @staticmethod
    def forward(ctx, A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams,
                ortho_fparams, ortho_bparams):
        A = A if A.is_sparse else A.contiguous()
        if B is not None:
            B = B if B.is_sparse else B.contiguous()
        E, U = _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker,
                       ortho_iparams, ortho_fparams, ortho_bparams)
        ctx.save_for_backward(A, B, E, U)
        ctx.largest = largest
        return E, U

    @staticmethod
    def backward(ctx, E_grad, U_grad):
        A, B, E, U = ctx.saved_tensors
        if A.is_sparse or (B is not None and B.is_sparse and ctx.needs_input_grad[2]):
            raise ValueError("lobpcg.backward does not support sparse input yet. Note that "
                             "lobpcg.forward does though.")
        if A.dtype.is_complex or (B is not None and B.dtype.is_complex):
            raise ValueError("lobpcg.backward does not support complex input yet. Note that "
                             "lobpcg.forward does though.")
        if B is not None:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")
        largest = True if ctx.largest is None else ctx.largest
        return (symeig_backward(E_grad, U_grad, A, E, U, largest),) + (None,) * 13


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None,
           method=None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None):
    """(E, X): k eigenvalues of A (largest first unless largest=False) and their
    eigenvectors, X (m, n) the start (random when None), iK a preconditioner, method
    "ortho" (the default) or "basic", tracker called with the solver after each step."""
    if A.requires_grad or (B is not None and B.requires_grad):
        A_sym = (A + A.mT) / 2
        B_sym = (B + B.mT) / 2 if B is not None else None
        return _LOBPCGFunction.apply(A_sym, k, B_sym, X, n, iK, niter, tol, largest, method,
                                     tracker, ortho_iparams, ortho_fparams, ortho_bparams)
    return _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams,
                   ortho_fparams, ortho_bparams)


def _params(m, n, k, niter, tol, largest, method, ortho_iparams, ortho_fparams,
            ortho_bparams):
    iparams = {"m": m, "n": n, "k": k, "niter": 1000 if niter is None else niter}
    fparams = {"tol": tol}
    bparams = {"largest": True if largest is None else largest}
    if method == "ortho":
        iparams.update(ortho_iparams or {})
        fparams.update(ortho_fparams or {})
        bparams.update(ortho_bparams or {})
        iparams.setdefault("ortho_i_max", 3)
        iparams.setdefault("ortho_j_max", 3)
        for key in ("ortho_tol", "ortho_tol_drop", "ortho_tol_replace"):
            fparams.setdefault(key, tol)
        bparams.setdefault("ortho_use_drop", False)
    return iparams, fparams, bparams


def _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams,
            ortho_fparams, ortho_bparams):
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    dtype = A.dtype if A.dtype in (D.float16, D.float32, D.float64) else D.float32
    device = A.device
    if tol is None:
        tol = {D.float32: 1.2e-07, D.float64: 2.23e-16}[dtype] ** 0.5
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows "
                         f"(={m}) is smaller than 3 x the number of requested eigenpairs "
                         f"(={n})")
    method = "ortho" if method is None else method
    iparams, fparams, bparams = _params(m, n, k, niter, tol, largest, method, ortho_iparams,
                                        ortho_fparams, ortho_bparams)
    if A.dim() > 2:
        N = 1
        for s in A.shape[:-2]:
            N *= s
        bA = A.reshape((N,) + tuple(A.shape[-2:]))
        bB = B.reshape((N,) + tuple(A.shape[-2:])) if B is not None else None
        bX = X.reshape((N,) + tuple(X.shape[-2:])) if X is not None else None
        bE = _ops.empty((N, k), dtype=dtype, device=device)
        bXret = _ops.empty((N, m, k), dtype=dtype, device=device)
        for i in range(N):
            X_ = _ops.randn((m, n), dtype=dtype, device=device) if bX is None else bX[i]
            if not (X_.dim() == 2 and tuple(X_.shape) == (m, n)):
                raise AssertionError(f"X_ shape mismatch: got {X_.shape}, expected {(m, n)}")
            iparams["batch_index"] = i
            worker = LOBPCG(bA[i], bB[i] if bB is not None else None, X_, iK, iparams,
                            fparams, bparams, method, tracker)
            worker.run()
            bE[i] = worker.E[:k]
            bXret[i] = worker.X[:, :k]
        return (bE.reshape(tuple(A.shape[:-2]) + (k,)),
                bXret.reshape(tuple(A.shape[:-2]) + (m, k)))
    X = _ops.randn((m, n), dtype=dtype, device=device) if X is None else X
    if not (X.dim() == 2 and tuple(X.shape) == (m, n)):
        raise AssertionError(f"X shape mismatch: got {X.shape}, expected {(m, n)}")
    worker = LOBPCG(A, B, X, iK, iparams, fparams, bparams, method, tracker)
    worker.run()
    return worker.E[:k], worker.X[:, :k]


PUBLIC = {"lobpcg": lobpcg}
