"""The LOBPCG iteration itself, ported from PyTorch's torch/_lobpcg.py (BSD licence):
the basic method (Knyazev's, with Rayleigh-Ritz on [X, P, W]) and the robust "ortho"
one (Stathopoulos & Wu's B-orthogonalisation of the search directions by SVQB). Step for
step PyTorch's, so from the same start X it finds what PyTorch finds."""
from __future__ import annotations

from .. import linalg
from .. import ops as _ops


def matmul(A, B):
    """A @ B, where A may be None (the identity) or a sparse COO matrix."""
    if A is None:
        return B
    if A.is_sparse:
        from ..sparse import mm
        return mm(A, B)
    return _ops.matmul(A, B)


def qform(A, S):
    """S^T A S."""
    return matmul(S.mT, matmul(A, S))


def symeig(A, largest=False):
    """eigh's pairs, largest first when largest."""
    E, Z = linalg.eigh(A, UPLO="U")
    if largest:
        E, Z = _ops.flip(E, dims=(-1,)), _ops.flip(Z, dims=(-1,))
    return E, Z


def basis(A):
    return linalg.qr(A).Q


class LOBPCG:
    """The state of one solve: X the current eigenvectors, E their eigenvalues, R the
    residuals, S the search basis [X, P, W]."""

    def __init__(self, A, B, X, iK, iparams, fparams, bparams, method, tracker):
        self.A, self.B, self.iK = A, B, iK
        self.iparams, self.fparams, self.bparams = iparams, fparams, bparams
        self.method, self.tracker = method, tracker
        m, n = iparams["m"], iparams["n"]
        self.X = X
        self.E = _ops.zeros((n,), dtype=X.dtype, device=X.device)
        self.R = _ops.zeros((m, n), dtype=X.dtype, device=X.device)
        self.S = _ops.zeros((m, 3 * n), dtype=X.dtype, device=X.device)
        self.tvars, self.ivars = {}, {"istep": 0}
        self.fvars, self.bvars = {"_": 0.0}, {"_": False}

    def __str__(self):
        lines = ["LOBPCG:"] + [f"  {k}={getattr(self, k)}" for k in (
            "iparams", "fparams", "bparams", "ivars", "fvars", "bvars", "tvars", "A", "B",
            "iK", "X", "E")]
        return "".join(line + "\n" for line in lines)

    def update(self):
        if self.ivars["istep"] == 0:
            X_norm = float(_ops.norm(self.X))
            iX_norm = X_norm ** (-1)
            self.fvars["X_norm"] = X_norm
            self.fvars["A_norm"] = float(_ops.norm(matmul(self.A, self.X))) * iX_norm
            self.fvars["B_norm"] = float(_ops.norm(matmul(self.B, self.X))) * iX_norm
            self.ivars["iterations_left"] = self.iparams["niter"]
            self.ivars["converged_count"] = 0
            self.ivars["converged_end"] = 0
        if self.method == "ortho":
            self._update_ortho()
        else:
            self._update_basic()
        self.ivars["iterations_left"] -= 1
        self.ivars["istep"] += 1

    def update_residual(self):
        self.R = matmul(self.A, self.X) - matmul(self.B, self.X) * self.E

    def update_converged_count(self):
        """How many leading eigenpairs meet the relative residual tolerance."""
        prev = self.ivars["converged_count"]
        E, X, R = self.E, self.X, self.R
        rerr = _ops.norm(R, 2, (0,)) / (_ops.norm(X, 2, (0,)) * (
            self.fvars["A_norm"] + _ops.abs(E[:X.shape[-1]]) * self.fvars["B_norm"]))
        count = 0
        for b in (rerr < self.fparams["tol"]).tolist():
            if not b:
                break
            count += 1
        if count < prev:
            raise AssertionError(f"the number of converged eigenpairs (was {prev}, got "
                                 f"{count}) cannot decrease")
        self.ivars["converged_count"] = count
        self.tvars["rerr"] = rerr
        return count

    def stop_iteration(self):
        return (self.bvars.get("force_stop", False) or self.ivars["iterations_left"] == 0
                or self.ivars["converged_count"] >= self.iparams["k"])

    def run(self):
        self.update()
        if self.tracker is not None:
            self.tracker(self)
        while not self.stop_iteration():
            self.update()
            if self.tracker is not None:
                self.tracker(self)

    def _update_basic(self):
        mm = _ops.matmul
        ns, nc = self.ivars["converged_end"], self.ivars["converged_count"]
        n, largest = self.iparams["n"], self.bparams["largest"]
        if self.ivars["istep"] == 0:
            Ri = self._get_rayleigh_ritz_transform(self.X)
            E, Z = symeig(qform(qform(self.A, self.X), Ri), largest)
            self.X[:] = mm(self.X, mm(Ri, Z))
            self.E[:] = E
            np = 0
            self.update_residual()
            nc = self.update_converged_count()
            self.S[..., :n] = self.X
        else:
            S_ = self.S[:, nc:ns]
            Ri = self._get_rayleigh_ritz_transform(S_)
            E_, Z = symeig(qform(qform(self.A, S_), Ri), largest)
            self.X[:, nc:] = mm(S_, mm(Ri, Z[:, :n - nc]))
            self.E[nc:] = E_[:n - nc]
            P = mm(S_, mm(Ri, Z[:, n:2 * n - nc]))
            np = P.shape[-1]
            self.update_residual()
            nc = self.update_converged_count()
            self.S[..., :n] = self.X
            self.S[:, n:n + np] = P
        W = matmul(self.iK, self.R[:, nc:] if self.ivars["istep"] else self.R)
        self.ivars["converged_end"] = ns = n + np + W.shape[-1]
        self.S[:, n + np:ns] = W

    def _update_ortho(self):
        mm = _ops.matmul
        ns, nc = self.ivars["converged_end"], self.ivars["converged_count"]
        n, largest = self.iparams["n"], self.bparams["largest"]
        if self.ivars["istep"] == 0:
            Ri = self._get_rayleigh_ritz_transform(self.X)
            _E, Z = symeig(qform(qform(self.A, self.X), Ri), largest)
            self.X = mm(self.X, mm(Ri, Z))
            self.update_residual()
            np = 0
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            W = self._get_ortho(self.R, self.X)
        else:
            S_ = self.S[:, nc:ns]
            E_, Z = symeig(qform(self.A, S_), largest)
            self.X[:, nc:] = mm(S_, Z[:, :n - nc])
            self.E[nc:] = E_[:n - nc]
            P = mm(S_, mm(Z[:, n - nc:], basis(Z[:n - nc, n - nc:].mT)))
            np = P.shape[-1]
            self.update_residual()
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            self.S[:, n:n + np] = P
            W = self._get_ortho(self.R[:, nc:], self.S[:, :n + np])
        ns = self.ivars["converged_end"] = n + np + W.shape[-1]
        self.S[:, n + np:ns] = W

    def _get_rayleigh_ritz_transform(self, S):
        """Ri with Ri^T S^T B S Ri = I (Cholesky of the diagonally scaled S^T B S)."""
        SBS = qform(self.B, S)
        d_row = SBS.diagonal(0, -2, -1) ** (-0.5)
        d_col = d_row.reshape(d_row.shape[0], 1)
        R = linalg.cholesky(SBS * d_row * d_col, upper=True)
        return linalg.solve_triangular(R, d_row.diag_embed(), upper=True, left=False)

    def _get_svqb(self, U, drop, tau):
        """U made B-orthonormal by SVQB; directions with eigenvalues below tau dropped
        (drop) or raised to tau."""
        if U.numel() == 0:
            return U
        UBU = qform(self.B, U)
        d = UBU.diagonal(0, -2, -1)
        nz = _ops.where(d.abs() != 0.0)
        if len(nz[0]) < len(d):
            U = U[:, nz[0]]
            if U.numel() == 0:
                return U
            UBU = qform(self.B, U)
            d = UBU.diagonal(0, -2, -1)
        d_col = (d ** (-0.5)).reshape(d.shape[0], 1)
        E, Z = symeig(UBU * d_col * d_col.mT)
        t = tau * E.abs().max()
        if drop:
            keep = _ops.where(E > t)
            E, Z, d_col = E[keep[0]], Z[:, keep[0]], d_col[keep[0]]
        else:
            E[_ops.where(E < t)[0]] = t
        return _ops.matmul(U * d_col.mT, Z * E ** (-0.5))

    def _get_ortho(self, U, V):
        """U B-orthonormalised and B-orthogonal to V (V^T B V = I assumed)."""
        mm = _ops.matmul
        m = self.iparams["m"]
        tau_ortho, tau_drop = self.fparams["ortho_tol"], self.fparams["ortho_tol_drop"]
        tau_replace = self.fparams["ortho_tol_replace"]
        i_max, j_max = self.iparams["ortho_i_max"], self.iparams["ortho_j_max"]
        use_drop = self.bparams["ortho_use_drop"]
        for vkey in list(self.fvars):
            if vkey.startswith("ortho_") and vkey.endswith("_rerr"):
                self.fvars.pop(vkey)
        self.ivars.pop("ortho_i", 0)
        self.ivars.pop("ortho_j", 0)
        BV_norm = _ops.norm(matmul(self.B, V))
        BU = matmul(self.B, U)
        VBU = mm(V.mT, BU)
        i = j = 0
        for i in range(i_max):
            U = U - mm(V, VBU)
            drop, tau_svqb = False, tau_drop
            for j in range(j_max):
                if use_drop:
                    U = self._get_svqb(U, drop, tau_svqb)
                    drop, tau_svqb = True, tau_replace
                else:
                    U = self._get_svqb(U, False, tau_replace)
                if U.numel() == 0:
                    self.ivars["ortho_i"], self.ivars["ortho_j"] = i, j
                    return U
                BU = matmul(self.B, U)
                UBU = mm(U.mT, BU)
                R = UBU - _ops.eye(UBU.shape[-1], device=UBU.device, dtype=UBU.dtype)
                rerr = float(_ops.norm(R)) * float(_ops.norm(BU) * _ops.norm(U)) ** (-1)
                self.fvars[f"ortho_UBUmI_rerr[{i}, {j}]"] = rerr
                if rerr < tau_ortho:
                    break
            VBU = mm(V.mT, BU)
            rerr = float(_ops.norm(VBU)) * float(BV_norm * _ops.norm(U)) ** (-1)
            self.fvars[f"ortho_VBU_rerr[{i}]"] = rerr
            if rerr < tau_ortho:
                break
            if m < U.shape[-1] + V.shape[-1]:
                if self.B is None:
                    raise AssertionError("B must not be None")
                raise ValueError(f"Overdetermined shape of U: #B-cols(={self.B.shape[-1]}) >= "
                                 f"#U-cols(={U.shape[-1]}) + #V-cols(={V.shape[-1]}) must hold")
        self.ivars["ortho_i"], self.ivars["ortho_j"] = i, j
        return U
