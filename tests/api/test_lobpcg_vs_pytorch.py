"""torch.lobpcg: eigenpairs of random SPD matrices against numpy's eigh (and the
generalised problem against scipy's), PyTorch's results from the same start X,
gradients against PyTorch's, batching, the tracker, the errors."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import dispatchtorch as dt  # noqa: E402

M = 24


def _spd(seed, m=M, spread=10.0):
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.standard_normal((m, m)))[0]
    return (Q * np.linspace(1, spread, m)) @ Q.T, rng.standard_normal((m, 3))


@pytest.mark.parametrize("method", ["ortho", "basic"])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("seed", [0, 1])
def test_lobpcg_eigenpairs(method, largest, seed):
    A, X0 = _spd(seed)
    E, U = dt.lobpcg(dt.tensor(A), k=3, X=dt.tensor(X0), method=method, largest=largest)
    want = np.linalg.eigh(A)[0]
    want = want[::-1][:3] if largest else want[:3]
    np.testing.assert_allclose(E.numpy(), want, rtol=1e-6)
    U = U.numpy()
    np.testing.assert_allclose(A @ U, U * E.numpy(), atol=1e-5)
    Et, Ut = torch.lobpcg(torch.tensor(A), k=3, X=torch.tensor(X0), method=method,
                          largest=largest)
    np.testing.assert_allclose(E.numpy(), Et.numpy(), rtol=1e-9)
    np.testing.assert_allclose(np.abs(U), np.abs(Ut.numpy()), atol=1e-6)


def test_lobpcg_generalised_and_preconditioned():
    scipy = pytest.importorskip("scipy.linalg")
    A, X0 = _spd(2)
    B, _ = _spd(3, spread=3.0)
    E, U = dt.lobpcg(dt.tensor(A), k=2, B=dt.tensor(B), X=dt.tensor(X0[:, :2]))
    np.testing.assert_allclose(E.numpy(), scipy.eigh(A, B)[0][::-1][:2], rtol=1e-6)
    iK = np.linalg.inv(A)
    E, _ = dt.lobpcg(dt.tensor(A), k=2, iK=dt.tensor(iK), largest=False, method="basic")
    np.testing.assert_allclose(E.numpy(), np.linalg.eigh(A)[0][:2], rtol=1e-6)


def test_lobpcg_float32_batched_and_random_start():
    A, _ = _spd(4)
    batch = np.stack([A, 2 * A])
    dt.manual_seed(0)
    E, U = dt.lobpcg(dt.tensor(batch, dtype=dt.float32), k=2)
    assert E.dtype == dt.float32 and tuple(U.shape) == (2, M, 2)
    want = np.linalg.eigh(A)[0][::-1][:2]
    np.testing.assert_allclose(E.numpy(), np.stack([want, 2 * want]), rtol=1e-4)


def test_lobpcg_tracker_sees_each_step():
    A, X0 = _spd(5)
    steps = []
    dt.lobpcg(dt.tensor(A), k=2, X=dt.tensor(X0[:, :2]),
              tracker=lambda w: steps.append(w.ivars["istep"]))
    assert steps == list(range(1, len(steps) + 1)) and len(steps) > 1


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("k", [1, 3])
def test_lobpcg_gradient_matches_pytorch(largest, k):
    A, _ = _spd(6, m=M if k == 1 else 10)
    X0 = np.random.default_rng(7).standard_normal((A.shape[0], k))
    grads = []
    for lib in (torch, dt):
        a = lib.tensor(A, requires_grad=True)
        E, U = lib.lobpcg(a, k=k, X=lib.tensor(X0), largest=largest)
        (E * lib.arange(1.0, k + 1, dtype=lib.float64)).sum().backward()
        grads.append(a.grad.numpy())
    # both stop at the residual tolerance sqrt(eps): the pairs agree to about 1e-7
    np.testing.assert_allclose(grads[1], grads[0], atol=1e-6)


def _errors(lib, case):
    A, X0 = _spd(8, m=6)
    return {
        "too_many": lambda: lib.lobpcg(lib.tensor(A), k=3),
        "not_square": lambda: lib.lobpcg(lib.tensor(A[:5])),
        "b_shape": lambda: lib.lobpcg(lib.tensor(A), B=lib.tensor(A[:5, :5])),
        "x_shape": lambda: lib.lobpcg(lib.tensor(A), k=1, X=lib.tensor(X0[:5, :1])),
        "b_backward": lambda: lib.lobpcg(lib.tensor(A, requires_grad=True), k=1,
                                         B=lib.tensor(A))[0].sum().backward(),
    }[case]()


@pytest.mark.parametrize("case", ["too_many", "not_square", "b_shape", "x_shape",
                                  "b_backward"])
def test_lobpcg_errors(case):
    caught = []
    for lib in (torch, dt):
        with pytest.raises(Exception) as info:
            _errors(lib, case)
        caught.append(info.value)
    assert type(caught[1]) is type(caught[0])
    if case not in ("not_square", "b_shape", "x_shape"):      # these print torch.Size
        assert str(caught[1]) == str(caught[0])


def test_lobpcg_sparse_coo_matrix():
    A, X0 = _spd(9)
    A[np.abs(A) < 0.2] = 0.0
    A = (A + A.T) / 2 + 5 * np.eye(M)
    E, _ = dt.lobpcg(dt.tensor(A).to_sparse(), k=2, X=dt.tensor(X0[:, :2]))
    np.testing.assert_allclose(E.numpy(), np.linalg.eigh(A)[0][::-1][:2], rtol=1e-6)
