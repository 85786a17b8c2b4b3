"""torch.fft against PyTorch: values, dtypes, the conjugate bit, gradients (including
second derivatives) and errors, over n / s, dim and norm."""
import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(0)
REAL = _rng.standard_normal((3, 4, 6))
CPLX = REAL + 1j * _rng.standard_normal((3, 4, 6))

ONE_D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
N_D = ("fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2", "fftn", "ifftn", "rfftn",
       "irfftn", "hfftn", "ihfftn")
REAL_ONLY = ("rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn")
KWARGS_1D = [{}, {"n": 4}, {"n": 9}, {"dim": 1}, {"norm": "ortho"}, {"norm": "forward"},
             {"n": 5, "dim": 0, "norm": "backward"}]
KWARGS_ND = [{}, {"s": (3, 8)}, {"dim": (0, 2)}, {"s": (2, -1), "dim": (2, 0)},
             {"norm": "ortho"}, {"norm": "forward", "dim": (-1,)}]


def _check(ours, theirs, tol):
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.is_conj() == theirs.is_conj()
    np.testing.assert_allclose(np.asarray(ours.detach().resolve_conj()),
                               theirs.detach().resolve_conj().numpy(), rtol=tol, atol=tol)


def _dtypes(name, kw):
    """Every dtype family on the plain call; float32 and complex64 on the others."""
    full = ("float32", "float64", "complex64", "complex128", "int64") if not kw else \
        ("float32", "complex64")
    return [d for d in full if not (name in REAL_ONLY and d.startswith("complex"))]


@pytest.mark.parametrize("name", ONE_D + N_D)
def test_forward_matches_pytorch(name):
    for kw in KWARGS_1D if name in ONE_D else KWARGS_ND:
        for dtype in _dtypes(name, kw):
            values = CPLX if dtype.startswith("complex") else np.round(REAL * 3) \
                if dtype == "int64" else REAL
            ours = getattr(dt.fft, name)(dt.tensor(values, dtype=getattr(dt, dtype)), **kw)
            theirs = getattr(torch.fft, name)(torch.tensor(values, dtype=getattr(torch, dtype)),
                                              **kw)
            _check(ours, theirs, 1e-10 if dtype in ("float64", "complex128") else 2e-5)


GRAD_KWARGS_1D = [{}, {"n": 4}, {"n": 9, "norm": "ortho"}]
GRAD_KWARGS_ND = [{}, {"s": (3, 7), "norm": "forward"}]


@pytest.mark.parametrize("name", ONE_D + N_D)
def test_gradient_matches_pytorch(name):
    grads = []
    for m in (dt, torch):
        for values, kw in ((v, kw) for v in ((REAL,) if name in REAL_ONLY else (REAL, CPLX))
                           for kw in (GRAD_KWARGS_1D if name in ONE_D else GRAD_KWARGS_ND)):
            x = m.tensor(values).requires_grad_(True)
            y = getattr(m.fft, name)(x, **kw)
            w = m.tensor(np.linspace(-1, 2, y.numel()).reshape(tuple(y.shape)))
            loss = (y.abs() * w).sum() if y.is_complex() else (y * y * w).sum()
            loss.backward()
            grads.append(np.asarray(x.grad.resolve_conj()))
    half = len(grads) // 2
    for ours, theirs in zip(grads[:half], grads[half:]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", ["rfft", "irfft", "fft2", "hfft"])
def test_second_derivatives_match_pytorch(name):
    out = []
    for m in (dt, torch):
        x = m.tensor(REAL[0] if name != "hfft" else CPLX[0]).requires_grad_(True)
        y = getattr(m.fft, name)(x)
        loss = (y.abs() ** 2).sum() if y.is_complex() else (y ** 3).sum()
        (g,) = m.autograd.grad(loss, x, create_graph=True)
        (gg,) = m.autograd.grad((g.abs() ** 2).sum() if g.is_complex() else (g ** 2).sum(), x)
        out.append((np.asarray(g.detach().resolve_conj()), np.asarray(gg.resolve_conj())))
    for ours, theirs in zip(*out):
        np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-8)


def test_frequencies_and_shifts():
    for n, d in ((5, 1.0), (6, 0.3), (1, 2.0)):
        for f in ("fftfreq", "rfftfreq"):
            ours, theirs = getattr(dt.fft, f)(n, d), getattr(torch.fft, f)(n, d)
            assert ours.dtype is dt.float32 and ours.tolist() == theirs.tolist()
    assert dt.fft.fftfreq(4, dtype=dt.float64).tolist() == \
        torch.fft.fftfreq(4, dtype=torch.float64).tolist()
    x = np.arange(30).reshape(5, 6)
    for f in ("fftshift", "ifftshift"):
        for kw in ({}, {"dim": 1}, {"dim": (0,)}, {"dim": (-1, 0)}):
            assert getattr(dt.fft, f)(dt.tensor(x), **kw).tolist() == \
                getattr(torch.fft, f)(torch.tensor(x), **kw).tolist()


@pytest.mark.parametrize("call", [
    lambda m: m.fft.rfft(m.ones(4, dtype=m.cfloat)),
    lambda m: m.fft.fft(m.ones(4), n=0),
    lambda m: m.fft.irfft(m.ones(1, dtype=m.cfloat)),
    lambda m: m.fft.fftn(m.ones(2, 3), s=(1, 2, 3)),
    lambda m: m.fft.fftn(m.ones(2, 3), s=(2,), dim=(0, 1)),
    lambda m: m.fft.fft2(m.ones(2, 3), dim=(1, 1)),
    lambda m: m.fft.fft(m.ones(4, dtype=m.float16)),
])
def test_errors_match_pytorch(call):
    with pytest.raises(RuntimeError) as theirs:
        call(torch)
    with pytest.raises(RuntimeError) as ours:
        call(dt)
    assert str(ours.value).split()[:3] == str(theirs.value).split()[:3]


def test_bad_norm_and_dim():
    with pytest.raises(ValueError, match="Invalid normalization mode"):
        dt.fft.fft(dt.ones(4), norm="bogus")
    with pytest.raises(IndexError):
        dt.fft.fft(dt.ones(4), dim=2)
