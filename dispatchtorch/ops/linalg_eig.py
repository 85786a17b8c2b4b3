"""torch.linalg.eig / eigvals: the eigendecomposition of a general (non-Hermitian) matrix,
real or complex, as the linalg_eig prim (LAPACK geev), with PyTorch's
linalg_eig_backward. The results are complex whatever the input's dtype."""
from __future__ import annotations

from .. import _dtype as D
from .. import return_types as RT
from ..dispatch.registry import prim_row
from . import decompositions as DC
from .linalg import matmul


def _eig_grad(g, result, result1):
    """gA = V^-H (diag(gL) + (V^H gV - V^H V diag(Re(V^H gV))) / conj(E)) V^H, E_ij =
    L_j - L_i off the diagonal (arXiv:1701.00392 eq. 4.77, with unit-norm columns)."""
    gL, gV = g
    L, V = result, result1
    Vh = V.mH
    if gV is None:
        if gL is None:
            return None
        return DC.solve(Vh, gL.unsqueeze(-1) * Vh)
    VhgV = matmul(Vh, gV)
    DC.check_phase_invariant(VhgV, "linalg_eig_backward")
    diag = VhgV.diagonal(0, -2, -1)
    VhgV = VhgV - matmul(Vh, V * diag.real.unsqueeze(-2))
    Lc = L.conj()
    n = L.shape[-1]
    eye = creation.eye(n, dtype=D.bool_, device=L.device)
    E = pointwise.where(eye, 1.0, Lc.unsqueeze(-2) - Lc.unsqueeze(-1))
    inner = pointwise.where(eye, shape_ops.diag_embed(gL) if gL is not None else 0.0, VhgV / E)
    return DC.solve(Vh, matmul(inner, Vh))


EIG = prim_row("linalg_eig", kind="linalg", args=("A",), n_out=2, grad=_eig_grad)


def eig(A, *, out=None):
    DC.check_matrix(A, "linalg.eig", square=True)
    c = A.dtype.to_complex()
    batch = tuple(A.shape[:-2])
    n = A.shape[-1]
    L, V = DC._prim(EIG, A, ((batch + (n,), c), (batch + (n, n), c)))
    if out is not None:
        out[0].copy_(L)
        out[1].copy_(V)
        return RT.eig(*out)
    return RT.eig(L, V)


def eigvals(A, *, out=None):
    L = eig(A).eigenvalues
    return L if out is None else out.copy_(L)


LINALG = {"eig": eig, "eigvals": eigvals}

# The op modules this one's derivative rule calls (at run time only); imported last as in
# decompositions.py.
from . import creation, pointwise, shape_ops  # noqa: E402
