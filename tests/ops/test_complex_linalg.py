"""Complex linear algebra: values against numpy / scipy in complex128, gradients against
central finite differences under PyTorch's convention (the gradient of a real loss L of
z = x + iy is dL/dx + i dL/dy), and against PyTorch where it is installed."""
import numpy as np
import pytest

import dispatchtorch as dt

RNG = np.random.default_rng(15)


def cmat(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def hpd(n, batch=()):
    a = cmat(*batch, n, n)
    return a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)


def weights_like(x):
    return cmat(*x.shape) if np.iscomplexobj(x) else RNG.standard_normal(x.shape)


def np_of(t):
    return t.detach().numpy()


# -- values ---------------------------------------------------------------------------------

def test_decompositions_reconstruct_and_match_numpy():
    a = cmat(2, 5, 3)
    h = hpd(4, (2,))
    L = dt.linalg.cholesky(dt.tensor(h))
    np.testing.assert_allclose(np_of(L), np.linalg.cholesky(h), atol=1e-12)
    U = dt.linalg.cholesky(dt.tensor(h), upper=True)
    np.testing.assert_allclose(np_of(U), np.conj(np.swapaxes(np_of(L), -1, -2)), atol=1e-12)
    w, V = dt.linalg.eigh(dt.tensor(h))
    assert w.dtype is dt.float64 and V.dtype is dt.complex128
    np.testing.assert_allclose(np_of(w), np.linalg.eigvalsh(h), atol=1e-12)
    np.testing.assert_allclose(np_of(V) * np_of(w)[..., None, :], h @ np_of(V), atol=1e-10)
    Uu, S, Vh = dt.linalg.svd(dt.tensor(a), full_matrices=False)
    assert S.dtype is dt.float64
    np.testing.assert_allclose(np_of(S), np.linalg.svd(a, compute_uv=False), atol=1e-12)
    np.testing.assert_allclose((np_of(Uu) * np_of(S)[..., None, :]) @ np_of(Vh), a, atol=1e-12)
    Q, R = dt.linalg.qr(dt.tensor(a))
    q, r = np.linalg.qr(a)
    np.testing.assert_allclose(np_of(Q), q, atol=1e-12)
    np.testing.assert_allclose(np_of(R), r, atol=1e-12)
    P, Lu, Uu = dt.linalg.lu(dt.tensor(a))
    np.testing.assert_allclose(np_of(P) @ np_of(Lu) @ np_of(Uu), a, atol=1e-12)


def test_solvers_inverse_and_determinants_match_numpy():
    a, b = cmat(2, 4, 4), cmat(2, 4, 3)
    A = dt.tensor(a)
    np.testing.assert_allclose(np_of(dt.linalg.solve(A, dt.tensor(b))), np.linalg.solve(a, b),
                               atol=1e-11)
    np.testing.assert_allclose(np_of(dt.linalg.inv(A)), np.linalg.inv(a), atol=1e-11)
    np.testing.assert_allclose(np_of(dt.linalg.det(A)), np.linalg.det(a), atol=1e-11)
    sign, logabs = dt.linalg.slogdet(A)
    s, l = np.linalg.slogdet(a)
    np.testing.assert_allclose(np_of(sign), s, atol=1e-12)
    np.testing.assert_allclose(np_of(logabs), l, atol=1e-12)
    np.testing.assert_allclose(np_of(dt.logdet(A)), np.log(np.linalg.det(a)), atol=1e-11)
    t = np.triu(a) + 4 * np.eye(4)
    x = dt.linalg.solve_triangular(dt.tensor(t), dt.tensor(b), upper=True)
    np.testing.assert_allclose(t @ np_of(x), b, atol=1e-11)
    tall = cmat(6, 3)
    rhs = cmat(6, 2)
    np.testing.assert_allclose(np_of(dt.linalg.lstsq(dt.tensor(tall), dt.tensor(rhs)).solution),
                               np.linalg.lstsq(tall, rhs, rcond=None)[0], atol=1e-11)
    np.testing.assert_allclose(np_of(dt.linalg.pinv(dt.tensor(tall))), np.linalg.pinv(tall),
                               atol=1e-11)
    np.testing.assert_allclose(np_of(dt.linalg.matrix_norm(A, "nuc")),
                               np.linalg.norm(a, "nuc", axis=(-2, -1)), atol=1e-11)
    np.testing.assert_allclose(np_of(dt.linalg.matrix_norm(A, 2)),
                               np.linalg.norm(a, 2, axis=(-2, -1)), atol=1e-11)


def test_matrix_exp_and_householder_product_match_scipy():
    from scipy.linalg import expm, lapack
    a = cmat(3, 3)
    np.testing.assert_allclose(np_of(dt.linalg.matrix_exp(dt.tensor(a))), expm(a), atol=1e-11)
    m = cmat(5, 3)
    qr, tau, _, _ = lapack.zgeqrf(m)
    g = dt.geqrf(dt.tensor(m))
    np.testing.assert_allclose(np_of(g.a), qr, atol=1e-12)
    np.testing.assert_allclose(np_of(g.tau), tau, atol=1e-12)
    Q = dt.linalg.householder_product(g.a, g.tau)
    np.testing.assert_allclose(np_of(Q), np.linalg.qr(m)[0], atol=1e-12)


def test_eig_of_real_and_complex_matrices_matches_numpy():
    for a in (RNG.standard_normal((2, 4, 4)), cmat(2, 4, 4)):
        L, V = dt.linalg.eig(dt.tensor(a))
        assert L.dtype is dt.complex128 and V.dtype is dt.complex128
        w, v = np.linalg.eig(a)
        np.testing.assert_allclose(np_of(L), w, atol=1e-12)
        np.testing.assert_allclose(np_of(V), v, atol=1e-12)
        np.testing.assert_allclose(np_of(dt.linalg.eigvals(dt.tensor(a))), w, atol=1e-12)
    L = dt.linalg.eigvals(dt.tensor(np.array([[0.0, -1.0], [1.0, 0.0]], dtype=np.float32)))
    assert L.dtype is dt.complex64
    np.testing.assert_allclose(np.sort_complex(np_of(L)), [-1j, 1j], atol=1e-6)


def test_eig_writes_out_and_refuses_integer_input():
    a = RNG.standard_normal((3, 3))
    L, V = dt.empty(3, dtype=dt.complex128), dt.empty(3, 3, dtype=dt.complex128)
    r = dt.linalg.eig(dt.tensor(a), out=(L, V))
    assert r.eigenvalues is L and r.eigenvectors is V
    np.testing.assert_allclose(L.numpy(), np.linalg.eigvals(a), atol=1e-12)
    with pytest.raises(RuntimeError, match="linalg.eig: Expected a floating point or complex "
                                           "tensor as input. Got Long"):
        dt.linalg.eig(dt.ones(2, 2, dtype=dt.int64))
    with pytest.raises(RuntimeError, match="linalg.eig: A must be batches of square matrices"):
        dt.linalg.eigvals(dt.ones(2, 3))


def test_ldl_of_complex_symmetric_and_hermitian_matrices_solves():
    n = 5
    a = cmat(n, n)
    b = cmat(n, 2)
    for m, herm in ((a + a.T, False), (a + np.conj(a.T), True)):
        m = m.copy()
        m[np.diag_indices(n)] = 0           # a zero diagonal forces 2 x 2 pivot blocks
        LD, piv = dt.linalg.ldl_factor(dt.tensor(m), hermitian=herm)
        assert (np_of(piv) < 0).any()
        x = dt.linalg.ldl_solve(LD, piv, dt.tensor(b), hermitian=herm)
        np.testing.assert_allclose(m @ np_of(x), b, atol=1e-11)


# -- gradients ------------------------------------------------------------------------------

def fd_grad(loss, z, eps=1e-6):
    """dL/dx + i dL/dy by central differences (dL/dx for a real z)."""
    g = np.zeros(z.shape, dtype=z.dtype)
    steps = (1, 1j) if np.iscomplexobj(z) else (1,)
    for idx in np.ndindex(z.shape):
        for step in steps:
            zp, zm = z.copy(), z.copy()
            zp[idx] += eps * step
            zm[idx] -= eps * step
            d = (loss(zp) - loss(zm)) / (2 * eps)
            g[idx] += d * step
    return g


def real_loss(outs, ws):
    """sum of Re(w * out): a real loss of complex outputs."""
    total = 0
    for o, w in zip(outs, ws):
        p = (o * dt.tensor(w)).sum()
        total = total + (p.real if p.dtype.is_complex else p)
    return total


def check_grad(fn, z, seed_outs=None):
    outs0 = fn(dt.tensor(z))
    outs0 = outs0 if isinstance(outs0, tuple) else (outs0,)
    ws = [weights_like(np_of(o)) for o in outs0]

    def loss(v):
        outs = fn(dt.tensor(v))
        return float(real_loss(outs if isinstance(outs, tuple) else (outs,), ws))

    x = dt.tensor(z, requires_grad=True)
    outs = fn(x)
    real_loss(outs if isinstance(outs, tuple) else (outs,), ws).backward()
    np.testing.assert_allclose(x.grad.numpy(), fd_grad(loss, z), rtol=1e-5, atol=1e-6)
    return x.grad.numpy()


def gauge_free(U):
    """|U|^2 elementwise: independent of the phases LAPACK picks for singular and eigen
    vectors (a loss through U itself would not be differentiable)."""
    return (U * U.conj()).real


GRADS = {
    "cholesky": (lambda A: dt.linalg.cholesky(A @ A.mH + 3 * dt.eye(3)), (3, 3)),
    "qr": (lambda A: tuple(dt.linalg.qr(A)), (4, 3)),
    "qr_wide": (lambda A: tuple(dt.linalg.qr(A)), (2, 4)),
    "svd": (lambda A: (lambda r: (r.S, gauge_free(r.U), gauge_free(r.Vh)))(
        dt.linalg.svd(A, full_matrices=False)), (4, 3)),
    "svdvals": (lambda A: dt.linalg.svdvals(A), (3, 4)),
    "eigh": (lambda A: (lambda r: (r.eigenvalues, gauge_free(r.eigenvectors)))(
        dt.linalg.eigh(A + A.mH)), (3, 3)),
    "eig": (lambda A: (lambda r: (r.eigenvalues, gauge_free(r.eigenvectors)))(
        dt.linalg.eig(A)), (3, 3)),
    "eigvals": (lambda A: dt.linalg.eigvals(A), (3, 3)),
    "solve": (lambda A: dt.linalg.solve(A, A.sum(-1, keepdim=True) * 1j + dt.ones(3, 1)), (3, 3)),
    "inv": (lambda A: dt.linalg.inv(A), (2, 3, 3)),
    "det": (lambda A: dt.linalg.det(A), (3, 3)),
    "slogdet": (lambda A: tuple(dt.linalg.slogdet(A)), (3, 3)),
    "lu_factor": (lambda A: dt.linalg.lu_factor(A).LU, (3, 4)),
    "solve_triangular": (lambda A: dt.linalg.solve_triangular(
        A.triu() + 3 * dt.eye(3), A.mH, upper=True), (3, 3)),
    "pinv": (lambda A: dt.linalg.pinv(A), (4, 2)),
    "matrix_exp": (lambda A: dt.linalg.matrix_exp(A), (2, 2)),
    "cholesky_solve": (lambda A: dt.cholesky_solve(A.mT, dt.linalg.cholesky(
        A @ A.mH + 3 * dt.eye(3))), (3, 3)),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_complex_gradient_matches_finite_differences(name):
    fn, shape = GRADS[name]
    check_grad(fn, cmat(*shape))


def test_eig_of_a_real_matrix_has_a_real_gradient():
    a = np.array([[1.0, 2.0, 0.5], [-2.0, 0.3, 1.0], [0.1, 0.4, -1.0]])   # a complex pair
    assert np.iscomplexobj(np.linalg.eigvals(a)) and abs(np.linalg.eigvals(a).imag).max() > 0.1
    g = check_grad(GRADS["eig"][0], a)
    assert g.dtype == np.float64


def test_eig_refuses_a_loss_that_depends_on_the_eigenvector_phases():
    x = dt.tensor(cmat(3, 3), requires_grad=True)
    V = dt.linalg.eig(x).eigenvectors
    with pytest.raises(RuntimeError, match="linalg_eig_backward: The eigenvectors in the "
                                           "complex case are specified up to multiplication"):
        V.sum().real.backward()


def test_eigh_refuses_a_loss_that_depends_on_the_eigenvector_phases():
    h = hpd(3)
    x = dt.tensor(h, requires_grad=True)
    V = dt.linalg.eigh(x).eigenvectors
    with pytest.raises(RuntimeError, match="linalg_eigh_backward: The eigenvectors"):
        (V * dt.tensor(cmat(3, 3))).sum().real.backward()


def test_svd_refuses_a_loss_that_depends_on_the_singular_vector_phases():
    x = dt.tensor(cmat(3, 3), requires_grad=True)
    U = dt.linalg.svd(x).U
    with pytest.raises(RuntimeError, match="svd_backward: The singular vectors in the complex"):
        (U * dt.tensor(cmat(3, 3))).sum().real.backward()


def test_complex_gradients_match_pytorch():
    torch = pytest.importorskip("torch")
    a = cmat(3, 3)
    w = cmat(3)
    wv = RNG.standard_normal((3, 3))
    results = []
    for lib in (dt, torch):
        x = lib.tensor(a, requires_grad=True)
        L, V = lib.linalg.eig(x)
        S = lib.linalg.svdvals(x)
        s, la = lib.linalg.slogdet(x)
        loss = (L * lib.tensor(w)).sum().real + ((V * V.conj()).real * lib.tensor(wv)).sum() + \
            S.sum() + (s * lib.tensor(w[0])).real + la
        loss.backward()
        results.append(x.grad.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-8, atol=1e-10)


def test_complex_cholesky_of_a_non_hermitian_positive_definite_failure_raises():
    bad = dt.tensor(-hpd(3))
    with pytest.raises(dt.linalg.LinAlgError, match="not positive-definite"):
        dt.linalg.cholesky(bad)
