"""Composites whose complex branch once reached a name its module never imported (they
raised NameError): each equals PyTorch's on complex input."""
import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")

VALUES = np.array([[1 + 2j, -0.5 + 1j, 3 - 1j], [0.25 - 2j, 2 + 0.5j, -1 - 1j]],
                  dtype=np.complex64)

CASES = {
    "logsumexp": lambda lib, x: lib.logsumexp(x, dim=1),
    "vecdot": lambda lib, x: lib.linalg.vecdot(x, x.flip(0)),
    "cov": lambda lib, x: lib.cov(x),
    "corrcoef": lambda lib, x: lib.corrcoef(x),
    "logaddexp": lambda lib, x: lib.logaddexp(x, x.flip(1) * 2),
    "logcumsumexp": lambda lib, x: lib.logcumsumexp(x * 3, 1),
    "masked.var": lambda lib, x: lib.masked.var(x, 1, mask=x.real > 0),
    "masked.std": lambda lib, x: lib.masked.std(x, 0, mask=x.imag < 1, keepdim=True),
    "masked.logsumexp": lambda lib, x: lib.masked.logsumexp(x, 1, mask=x.real > 0),
    "masked.normalize": lambda lib, x: lib.masked.normalize(x, 2.0, 1, mask=x.real > 0),
    "normalize": lambda lib, x: lib.nn.functional.normalize(x, dim=1),
    "l1_loss": lambda lib, x: lib.nn.functional.l1_loss(x.real, x),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_complex_composite_matches_pytorch(name):
    ours = CASES[name](dt, dt.tensor(VALUES)).numpy()
    theirs = CASES[name](torch, torch.tensor(VALUES)).numpy()
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_complex_logaddexp_edges_match_pytorch():
    """torch._refs' branches: equal infinite real parts, -inf against a number, NaNs."""
    inf, nan = float("inf"), float("nan")
    a = np.array([complex(-inf, 1), complex(inf, 0.5), complex(-inf, 0), complex(nan, 0),
                  complex(1, nan), 2 + 1j, complex(inf, 0)], dtype=np.complex64)
    b = np.array([complex(-inf, 2), complex(inf, -0.5), 1 + 1j, 1 + 1j, 0j,
                  complex(-inf, 3), 1 + 0j], dtype=np.complex64)
    ours = dt.logaddexp(dt.tensor(a), dt.tensor(b)).numpy()
    theirs = torch.logaddexp(torch.tensor(a), torch.tensor(b)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, equal_nan=True)


def test_complex_logaddexp_gradient_matches_pytorch():
    w = np.array([[0.5 - 1j, 2 + 0.25j, -1 + 1j], [1j, -0.5, 0.75 + 0.5j]], dtype=np.complex64)
    grads = []
    for lib in (dt, torch):
        a = lib.tensor(VALUES, requires_grad=True)
        b = lib.tensor(VALUES[:, ::-1].copy(), requires_grad=True)
        (lib.logcumsumexp(lib.logaddexp(a, b), 1) * lib.tensor(w)).real.sum().backward()
        grads.append((a.grad.numpy(), b.grad.numpy()))
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_each_tensor_method_has_one_definition():
    """Two op modules defining one Tensor method would let import order pick the winner
    (real-only `real`/`conj` once shadowed the complex ones): binding refuses that."""
    from dispatchtorch.ops import methods

    class Probe:
        __name__ = "dispatchtorch.ops._probe"
        METHODS = {"sum": lambda self: None}
    import sys
    sys.modules[Probe.__name__] = Probe()
    try:    # the refusal comes before any method is set, so Tensor stays as it was
        with pytest.raises(ImportError, match="Tensor.sum is defined by both"):
            methods.bind()
    finally:
        del sys.modules[Probe.__name__]
