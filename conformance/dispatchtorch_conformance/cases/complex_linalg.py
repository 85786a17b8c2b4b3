"""Cases of the linear-algebra prims on complex matrices, and of linalg_eig (whose results
are complex for any input). As in complex_fft.py, values go in as float pairs
(view_as_complex) and come out real: gauge-invariant functions of the factors (|U|^2,
eigenvalue power sums, residuals), since each LAPACK build picks its own phases. A
device without complex dtypes (OpenCL) skips every sample."""
import dispatchtorch as torch

from ..case import Case, Tol

FL = ("float32", "float64")
LAPACK = Tol("factorisations and solvers: rounding differs between LAPACK builds",
             float32=(1e-4, 1e-4), float64=(1e-9, 1e-9))
_COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}


def _pairs(*shapes):
    """Float inputs (..., 2): the complex matrices of `shapes`."""
    def gen(g):
        yield g.sample("batched", *(g.arr(s + (2,), -1, 1) for s in shapes)).needs_dtypes(
            _COMPLEX_OF[g.dtype])
    return gen


def _reals(*shapes):
    def gen(g):
        yield g.sample("batched", *(g.arr(s, -1, 1) for s in shapes)).needs_dtypes(
            _COMPLEX_OF[g.dtype])
    return gen


def _c(x):
    return torch.view_as_complex(x.contiguous())


def _r(z):
    return torch.view_as_real(z.resolve_conj())


def _hpd(z):
    return z @ z.mH + 3 * z.new_ones(z.shape[-1]).diag()


def _abs2(z):
    return (z * z.conj()).real


def _power_sums(L):
    """sum_i L_i^k for k = 1..3 (as float pairs): they fix the eigenvalues whatever
    their order."""
    return _r(torch.stack([L.sum(-1), (L * L).sum(-1), (L * L * L).sum(-1)], -1))


def _eig_parts(A):
    L, V = torch.linalg.eig(A)
    Ac = A.to(V.dtype)
    residual = (Ac @ V - V * L.unsqueeze(-2)).abs().sum((-2, -1))
    return _power_sums(L), residual, _abs2(V).sum(-2)


CASES = [
    Case("linalg_eig", _eig_parts, _reals((2, 4, 4)), dtypes=FL, tol=LAPACK),
    Case("linalg_eig", lambda x: _eig_parts(_c(x)), _pairs((2, 3, 3)), dtypes=FL, tol=LAPACK,
         name="linalg_eig_complex"),
    Case("linalg_cholesky", lambda x: _r(torch.linalg.cholesky(_hpd(_c(x)))), _pairs((2, 3, 3)),
         dtypes=FL, tol=LAPACK, name="linalg_cholesky_complex"),
    Case("linalg_eigh", lambda x: (lambda r: (r.eigenvalues, _abs2(r.eigenvectors)))(
        torch.linalg.eigh(_c(x) + _c(x).mH)), _pairs((2, 4, 4)), dtypes=FL, tol=LAPACK,
         name="linalg_eigh_complex"),
    Case("linalg_svd", lambda x: (lambda r: (r.S, _abs2(r.U), _abs2(r.Vh)))(
        torch.linalg.svd(_c(x), full_matrices=False)), _pairs((2, 5, 3)), dtypes=FL,
         tol=LAPACK, name="linalg_svd_complex"),
    Case("linalg_qr", lambda x: (lambda r: (_abs2(r.Q), r.R.diagonal(0, -2, -1).abs(),
                                            _r(r.Q @ r.R)))(torch.linalg.qr(_c(x))),
         _pairs((2, 5, 3)), dtypes=FL, tol=LAPACK, name="linalg_qr_complex"),
    Case("linalg_lu_factor", lambda x: (lambda r: _r(r.P.to(r.L.dtype) @ r.L @ r.U))(
        torch.linalg.lu(_c(x))), _pairs((2, 3, 3)), dtypes=FL, tol=LAPACK,
         name="linalg_lu_factor_complex"),
    Case("linalg_solve_triangular", lambda a, b: _r(torch.linalg.solve_triangular(
        _hpd(_c(a)).triu(), _c(b), upper=True)), _pairs((2, 3, 3), (2, 3, 2)), dtypes=FL,
         tol=LAPACK, name="linalg_solve_triangular_complex"),
    Case("linalg_solve", lambda a, b: _r(torch.linalg.solve(_hpd(_c(a)), _c(b))),
         _pairs((2, 3, 3), (2, 3, 2)), dtypes=FL, tol=LAPACK, name="linalg_solve_complex"),
    Case("linalg_slogdet", lambda x: (lambda r: (_r(r.sign), r.logabsdet))(
        torch.linalg.slogdet(_hpd(_c(x)) + _c(x))), _pairs((2, 3, 3)), dtypes=FL, tol=LAPACK,
         name="linalg_slogdet_complex"),
]
