"""Sample cases of the rows added for PyTorch's wider op set (issue 15): the extra
elementwise ops, products, scatters, and the linear-algebra decompositions. The OpInfo
test (tests/opinfo) runs PyTorch's own samples of the same ops on top of these."""
import numpy as np

from dispatchtorch.dispatch import OPS
from dispatchtorch.dispatch.registry import operand_domains
from op_harness import FLOATS, A, Case

CASES = []
F = ("float32", "float64")


def add(*cases):
    CASES.extend(cases)


# -- elementwise -----------------------------------------------------------------------------
add(Case("signbit", lambda T, x: T.signbit(x), (A((3, 4), "special"),), F + ("int64",),
         np.signbit, grad=False),
    Case("copysign", lambda T, a, b: T.copysign(a, b), (A((3, 4)), A((4,), "special")), F,
         np.copysign, fd=False),
    Case("copysign", lambda T, a, b: a.copysign(b), (A((3, 4), "nonzero"), A((3, 4))), F,
         np.copysign, name="method"),
    Case("heaviside", lambda T, x, v: T.heaviside(x, v), (A((3, 4), "int"), A((4,))), F,
         np.heaviside, grad=False),
    Case("sinc", lambda T, x: T.sinc(x), (A((3, 4), "int"),), F, np.sinc, fd=False),
    Case("sinc", lambda T, x: x.sinc(), (A((5,)),), F, np.sinc, name="method"),
    Case("deg2rad", lambda T, x: T.deg2rad(x), (A((3, 4)),), F, np.deg2rad),
    Case("rad2deg", lambda T, x: T.rad2deg(x), (A((3, 4)),), F, np.rad2deg),
    Case("logaddexp2", lambda T, a, b: T.logaddexp2(a, b), (A((3, 4)), A((4,))), F,
         np.logaddexp2),
    Case("angle", lambda T, x: T.angle(x), (A((3, 4), "special"),), F,  # -0.0: 0 as PyTorch
         lambda x: np.where(x < 0, np.pi, np.where(np.isnan(x), x, 0.0)), grad=False),
    Case("angle", lambda T, x: T.angle(x), (A((3, 4), "nonzero"),), F, np.angle, name="grad"),
    # PyTorch's gradient is 0 for negative integer exponents (its rule computes pow(2, other)
    # in integers); ours is 2**other, which finite differences confirm
    Case("ldexp", lambda T, x, e: T.ldexp(x, e), (A((3, 4)), A((4,), "int", "int64")), F,
         lambda x, e: np.ldexp(x, e.astype(np.int64)), torch_grad=False),
    Case("addcmul", lambda T, x, a, b: T.addcmul(x, a, b, value=0.5),
         (A((3, 4)), A((4,)), A((3, 1))), F, lambda x, a, b: x + 0.5 * a * b),
    Case("addcmul", lambda T, x, a, b: x.addcmul(a, b), (A((2, 3)), A((2, 3)), A((2, 3))),
         ("int64",), lambda x, a, b: x + a * b, name="int", grad=False),
    Case("addcdiv", lambda T, x, a, b: T.addcdiv(x, a, b, value=2),
         (A((3, 4)), A((4,)), A((3, 4), "nonzero")), F, lambda x, a, b: x + 2 * a / b),
    Case("isclose", lambda T, a, b: T.isclose(a, b, rtol=0.1, atol=0.5),
         (A((3, 4)), A((3, 4))), F, lambda a, b: np.isclose(a, b, rtol=0.1, atol=0.5),
         grad=False),
    Case("isclose", lambda T, a, b: T.isclose(a, b, equal_nan=True),
         (A((3, 4), "special"), A((3, 4), "special")), F,
         lambda a, b: np.isclose(a, b, equal_nan=True), grad=False, name="special"))

# -- products -----------------------------------------------------------------------------------
add(Case("addr", lambda T, x, a, b: T.addr(x, a, b, beta=0.5, alpha=2), (A((3, 4)), A((3,)),
                                                                           A((4,))),
         F, lambda x, a, b: 0.5 * x + 2 * np.outer(a, b)),
    Case("addbmm", lambda T, x, a, b: T.addbmm(x, a, b), (A((2, 4)), A((3, 2, 5)), A((3, 5, 4))),
         F, lambda x, a, b: x + (a @ b).sum(0)),
    Case("inner", lambda T, a, b: T.inner(a, b), (A((2, 3)), A((4, 3))), F, np.inner),
    Case("kron", lambda T, a, b: T.kron(a, b), (A((2, 3)), A((3, 2, 2))), F, np.kron),
    Case("trace", lambda T, x: T.trace(x), (A((3, 4)),), F, np.trace),
    Case("cross", lambda T, a, b: T.linalg.cross(a, b), (A((4, 3)), A((1, 3))), F,
         lambda a, b: np.cross(a, b)),
    Case("cross", lambda T, a, b: T.cross(a, b, dim=0), (A((3, 2)), A((3, 2))), F,
         lambda a, b: np.cross(a, b, axis=0), name="dim0"),
    Case("cross", lambda T, a, b: T.linalg.cross(a, b), (A((4, 3)), A((4, 1))), F, grad=False,
         raises=RuntimeError, name="a length-1 dim does not broadcast to 3"),
    Case("cdist", lambda T, a, b: T.cdist(a, b), (A((4, 3)), A((5, 3))), F,
         lambda a, b: np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1))),
    Case("cdist", lambda T, a, b: T.cdist(a, b, p=1), (A((2, 4, 3)), A((2, 5, 3))), F,
         lambda a, b: np.abs(a[:, :, None] - b[:, None]).sum(-1), name="p1", fd=False),
    Case("renorm", lambda T, x: T.renorm(x, 2, 0, 1.0), (A((3, 4)),), F,
         lambda x: x * np.where(np.linalg.norm(x, axis=1, keepdims=True) > 1.0,
                                1.0 / (np.linalg.norm(x, axis=1, keepdims=True) + 1e-7), 1.0)),
    Case("renorm", lambda T, x: T.renorm(x, 1, 1, 0.5), (A((2, 3, 2)),), F,
         lambda x: x * np.where(np.abs(x).sum((0, 2), keepdims=True) > 0.5,
                                0.5 / (np.abs(x).sum((0, 2), keepdims=True) + 1e-7), 1.0),
         name="p1 dim1"),
    Case("pdist", lambda T, x: T.pdist(x), (A((5, 3)),), F,
         lambda x: np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))[np.triu_indices(5, 1)]),
    Case("pdist", lambda T, x: T.nn.functional.pdist(x, p=3), (A((4, 2)),), F,
         lambda x: (np.abs(x[:, None] - x[None]) ** 3).sum(-1)[np.triu_indices(4, 1)] ** (1 / 3),
         name="p3"),
    Case("block_diag", lambda T, a, b, c: T.block_diag(a, b, c), (A((2, 3)), A((4,)), A(())), F,
         lambda a, b, c: np.block([[a, np.zeros((2, 5))], [np.zeros((1, 3)), b[None],
                                                          np.zeros((1, 1))],
                                   [np.zeros((1, 7)), c.reshape(1, 1)]])))

# -- scatters -----------------------------------------------------------------------------------


def _diag_set(x, s):
    r = x.copy()
    np.fill_diagonal(r, s)
    return r


def _row_set(x, s, i):
    r = x.copy()
    r[:, i] = s
    return r


add(Case("diagonal_scatter", lambda T, x, s: T.diagonal_scatter(x, s), (A((3, 3)), A((3,))), F,
         _diag_set),
    Case("select_scatter", lambda T, x, s: T.select_scatter(x, s, 1, 2), (A((3, 4)), A((3,))), F,
         lambda x, s: _row_set(x, s, 2)),
    Case("slice_scatter", lambda T, x, s: T.slice_scatter(x, s, 1, 1, 4, 2),
         (A((3, 5)), A((3, 2))), F, lambda x, s: _row_set(x, s, slice(1, 4, 2))),
    Case("index_copy", lambda T, x, s: T.index_copy(x, 1, T.tensor([3, 0]), s),
         (A((3, 4)), A((3, 2))), F, lambda x, s: _row_set(x, s, [3, 0])),
    Case("put", lambda T, x, s: T.put(x, T.tensor([0, -1, 5]), s), (A((3, 4)), A((3,))), F,
         lambda x, s: _put(x, s)),
    Case("put", lambda T, x, s: x.put(T.tensor([0, 0, 5]), s, accumulate=True),
         (A((3, 4)), A((3,))), F, lambda x, s: _put(x, s, True), name="accumulate"))


def _put(x, s, acc=False):
    r = x.copy().reshape(-1)
    if acc:
        np.add.at(r, [0, 0, 5], s)
    else:
        r[[0, -1, 5]] = s
    return r.reshape(x.shape)



# -- linear algebra: decompositions as gauge-invariant functions (signs of singular vectors
# and eigenvectors are the implementation's choice), inputs made well-conditioned in fn --


def _spd(T, a):
    return a @ a.mT + 3 * T.eye(a.shape[-1], dtype=a.dtype)


def _np_spd(a):
    return a @ np.swapaxes(a, -1, -2) + 3 * np.eye(a.shape[-1])


add(Case("linalg_cholesky", lambda T, a: T.linalg.cholesky(_spd(T, a)), (A((2, 3, 3)),), F,
         lambda a: np.linalg.cholesky(_np_spd(a))),
    Case("linalg_cholesky", lambda T, a: T.linalg.cholesky(_spd(T, a), upper=True), (A((3, 3)),),
         F, lambda a: np.linalg.cholesky(_np_spd(a)).T, name="upper"),
    Case("linalg_cholesky", lambda T, a: T.linalg.cholesky_ex(-_spd(T, a)).info, (A((3, 3)),),
         F, grad=False, name="info"),
    Case("linalg_eigh", lambda T, a: (lambda r: (r.eigenvalues, r.eigenvectors ** 2))(
        T.linalg.eigh(a + a.mT)), (A((2, 4, 4)),), F,
         lambda a: (np.linalg.eigh(a + np.swapaxes(a, -1, -2))[0],
                    np.linalg.eigh(a + np.swapaxes(a, -1, -2))[1] ** 2)),
    Case("linalg_svd", lambda T, a: (lambda r: (r.S, r.U ** 2, r.Vh ** 2))(
        T.linalg.svd(a, full_matrices=False)), (A((2, 5, 3)),), F,
         lambda a: (lambda u, s, vh: (s, u ** 2, vh ** 2))(*np.linalg.svd(a, full_matrices=False))),
    Case("linalg_svd", lambda T, a: T.linalg.svdvals(a), (A((3, 4)),), F,
         lambda a: np.linalg.svd(a, compute_uv=False), name="svdvals"),
    Case("linalg_qr", lambda T, a: (lambda r: (r.Q.abs(), r.R.abs()))(T.linalg.qr(a)),
         (A((5, 3)),), F, lambda a: tuple(np.abs(x) for x in np.linalg.qr(a)), grad=False),
    Case("linalg_qr", lambda T, a: (lambda r: r.Q @ r.R)(T.linalg.qr(a)), (A((3, 5)),), F,
         lambda a: a, name="wide product"),
    Case("linalg_qr", lambda T, a: (lambda r: r.Q * r.R.diagonal().sign())(T.linalg.qr(a)),
         (A((5, 3)),), F, lambda a: (lambda q, r: q * np.sign(np.diag(r)))(*np.linalg.qr(a)),
         name="normalised Q"),
    Case("linalg_lu_factor", lambda T, a: T.linalg.lu_factor(a), (A((2, 4, 4)),), F,
         lambda a: _np_lu(a)),
    Case("linalg_lu_factor", lambda T, a: (lambda r: r.P @ r.L @ r.U)(T.linalg.lu(a)),
         (A((3, 5)),), F, lambda a: a, name="wide lu"),
    Case("linalg_solve_triangular", lambda T, a, b: T.linalg.solve_triangular(
        a.triu() + 3 * T.eye(3, dtype=a.dtype), b, upper=True), (A((3, 3)), A((3, 2))), F,
         lambda a, b: np.linalg.solve(np.triu(a) + 3 * np.eye(3), b)),
    Case("linalg_solve_triangular", lambda T, a, b: T.linalg.solve_triangular(
        a.tril() + 3 * T.eye(3, dtype=a.dtype), b, upper=False, left=False),
         (A((2, 3, 3)), A((4, 3))), F,
         lambda a, b: np.swapaxes(np.linalg.solve(np.swapaxes(np.tril(a) + 3 * np.eye(3), -1, -2),
                                                  np.swapaxes(np.broadcast_to(b, (2, 4, 3)),
                                                              -1, -2)), -1, -2), name="right"),
    Case("linalg_solve", lambda T, a, b: T.linalg.solve(a + 3 * T.eye(3, dtype=a.dtype), b),
         (A((2, 3, 3)), A((3,))), F, lambda a, b: np.linalg.solve(a + 3 * np.eye(3), b[:, None])[
             ..., 0]),
    Case("linalg_solve", lambda T, a: T.linalg.inv(a + 3 * T.eye(3, dtype=a.dtype)),
         (A((3, 3)),), F, lambda a: np.linalg.inv(a + 3 * np.eye(3)), name="inv"),
    Case("linalg_det", lambda T, a: T.linalg.det(a), (A((2, 3, 3)),), F, np.linalg.det,
         gradgrad=False),
    Case("linalg_det", lambda T, a: T.linalg.det(a[..., :1].expand(3, 3)), (A((3, 3)),), F,
         lambda a: np.zeros(()), name="singular", fd=False),
    Case("linalg_slogdet", lambda T, a: T.linalg.slogdet(a), (A((2, 3, 3)),), F,
         lambda a: tuple(np.linalg.slogdet(a))),
    Case("linalg_pinv", lambda T, a: T.linalg.pinv(a), (A((4, 3)),), F, np.linalg.pinv),
    Case("cholesky_solve", lambda T, b, a: T.cholesky_solve(b, T.linalg.cholesky(_spd(T, a))),
         (A((3, 2)), A((3, 3))), F, lambda b, a: np.linalg.solve(_np_spd(a), b)),
    Case("cholesky_inverse", lambda T, a: T.cholesky_inverse(T.linalg.cholesky(_spd(T, a))),
         (A((3, 3)),), F, lambda a: np.linalg.inv(_np_spd(a))))


# linalg.eig: complex results of real input, as float pairs and gauge-free |V|^2
def _np_eig(a):
    w, v = np.linalg.eig(a)
    return np.stack([w.real, w.imag], -1), np.abs(v) ** 2


add(Case("linalg_eig", lambda T, a: (lambda r: (T.view_as_real(r.eigenvalues),
                                                (r.eigenvectors * r.eigenvectors.conj()).real))(
        T.linalg.eig(a)), (A((2, 3, 3)),), F, _np_eig),
    Case("linalg_eig", lambda T, a: T.view_as_real(T.linalg.eigvals(a)), (A((4, 4)),), F,
         lambda a: _np_eig(a)[0], name="eigvals"))


def _np_lu(a):
    import scipy.linalg
    lus, pivs = zip(*(scipy.linalg.lu_factor(m) for m in a))
    return np.stack(lus), np.stack(pivs).astype(np.int32) + 1


# -- special functions (scipy.special's float64 values are the reference) ------------------
import scipy.special as sp  # noqa: E402

_UNARY_SPECIAL = {   # row: (public call, reference, differentiable); values: the row's domain
    "lgamma": (lambda T, x: T.lgamma(x), sp.gammaln, True),
    "digamma": (lambda T, x: T.digamma(x), sp.psi, True),
    "i0": (lambda T, x: T.i0(x), sp.i0, True),
    "special_i0e": (lambda T, x: T.special.i0e(x), sp.i0e, True),
    "special_i1": (lambda T, x: T.special.i1(x), sp.i1, True),
    "special_i1e": (lambda T, x: T.special.i1e(x), sp.i1e, True),
    "special_erfcx": (lambda T, x: T.special.erfcx(x), sp.erfcx, True),
    "special_ndtri": (lambda T, x: T.special.ndtri(x), sp.ndtri, True),
    "special_log_ndtr": (lambda T, x: T.special.log_ndtr(x), sp.log_ndtr, True),
    "special_bessel_j0": (lambda T, x: T.special.bessel_j0(x), sp.j0, False),
    "special_bessel_j1": (lambda T, x: T.special.bessel_j1(x), sp.j1, False),
    "special_bessel_y0": (lambda T, x: T.special.bessel_y0(x), sp.y0, False),
    "special_bessel_y1": (lambda T, x: T.special.bessel_y1(x), sp.y1, False),
    "special_modified_bessel_k0": (lambda T, x: T.special.modified_bessel_k0(x), sp.k0, False),
    "special_modified_bessel_k1": (lambda T, x: T.special.modified_bessel_k1(x), sp.k1, False),
    "special_scaled_modified_bessel_k0": (lambda T, x: T.special.scaled_modified_bessel_k0(x),
                                          sp.k0e, False),
    "special_scaled_modified_bessel_k1": (lambda T, x: T.special.scaled_modified_bessel_k1(x),
                                          sp.k1e, False),
    "special_entr": (lambda T, x: T.special.entr(x), sp.entr, True),
    "special_airy_ai": (lambda T, x: T.special.airy_ai(x), lambda x: sp.airy(x)[0], False),
}
for _op, (_fn, _ref, _grad) in _UNARY_SPECIAL.items():
    # (PyTorch's float64 Bessel functions are ~1e-7 off scipy's; the numpy reference checks
    # values, PyTorch the dtype and shape at that tolerance)
    add(Case(_op, _fn, (A((3, 4), OPS[_op].domain),), F, _ref, grad=_grad, rtol=1e-6, atol=1e-6))
_ZETA, _IGAMMA, _IGAMMAC = (operand_domains(OPS[n]) for n in ("special_zeta", "igamma", "igammac"))
add(Case("special_zeta", lambda T, a, b: T.special.zeta(a, b),
         (A((3, 4), _ZETA[0], grad=False), A((4,), _ZETA[1])), F, sp.zeta),
    Case("igamma", lambda T, a, b: T.igamma(a, b),
         (A((3, 4), _IGAMMA[0], grad=False), A((3, 4), _IGAMMA[1])), F, sp.gammainc),
    Case("igammac", lambda T, a, b: T.igammac(a, b),
         (A((3, 4), _IGAMMAC[0], grad=False), A((3, 4), _IGAMMAC[1])), F, sp.gammaincc),
    Case("nextafter", lambda T, a, b: T.nextafter(a, b), (A((3, 4)), A((3, 4), grad=False)), F,
         np.nextafter, fd=False),
    Case("polygamma", lambda T, x: T.polygamma(2, x), (A((3, 4), OPS["polygamma"].domain),), F,
         lambda x: sp.polygamma(2, x)),
    Case("polygamma", lambda T, x: x.polygamma(0), (A((3, 4), OPS["polygamma"].domain),), F,
         sp.psi, name="n=0"))


assert all(set(c.dtypes) <= set(FLOATS) | {"int64"} for c in CASES)
