"""torch.stft / torch.istft against PyTorch: values, shapes, gradients and errors."""
import warnings

import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(1)
X = _rng.standard_normal((2, 50))
HANN16 = np.hanning(16)
HANN12 = np.hanning(12)

STFT_KWARGS = [
    {"n_fft": 16, "return_complex": True},
    {"n_fft": 16, "hop_length": 5, "win_length": 12, "window": HANN12, "return_complex": True},
    {"n_fft": 16, "center": False, "normalized": True, "return_complex": False},
    {"n_fft": 16, "onesided": False, "pad_mode": "constant", "return_complex": True},
    {"n_fft": 16, "window": HANN16, "pad_mode": "replicate", "return_complex": True},
]


def _lib_kwargs(m, kw):
    return {k: m.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}


@pytest.mark.parametrize("kw", STFT_KWARGS, ids=range(len(STFT_KWARGS)))
def test_stft_matches_pytorch_with_gradients(kw):
    out = []
    for m in (dt, torch):
        x = m.tensor(X).requires_grad_(True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = m.stft(x, **_lib_kwargs(m, kw))
        loss = s.abs().sum() if s.is_complex() else (s ** 2).sum()
        loss.backward()
        out.append((np.asarray(s.detach()), np.asarray(x.grad)))
    for ours, theirs in zip(*out):
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("kw", [{"n_fft": 16}, {"n_fft": 16, "hop_length": 4, "length": 50},
                                {"n_fft": 16, "normalized": True, "center": True}])
def test_istft_inverts_stft_as_pytorch(kw):
    out = []
    for m in (dt, torch):
        w = m.tensor(HANN16)
        s = m.stft(m.tensor(X), 16, hop_length=kw.get("hop_length"), window=w,
                   normalized=kw.get("normalized", False), return_complex=True)
        s = s.detach().requires_grad_(True)
        y = m.istft(s, window=w, **kw)
        (y * m.arange(y.shape[-1], dtype=y.dtype)).sum().backward()
        out.append((np.asarray(y.detach()), np.asarray(s.grad.resolve_conj())))
    for ours, theirs in zip(*out):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-9)
    assert np.allclose(out[0][0][:, 8:-8], X[:, 8:out[0][0].shape[1] - 8])


def test_errors_match_pytorch():
    for call in (lambda m: m.stft(m.ones(40), 16),
                 lambda m: m.stft(m.ones(40), 16, window=m.ones(5), return_complex=True),
                 lambda m: m.istft(m.ones(9, 5), 16)):
        with pytest.raises(RuntimeError) as theirs:
            call(torch)
        with pytest.raises(RuntimeError) as ours:
            call(dt)
        # PyTorch prefixes some messages with the call's signature; the rest agrees
        assert str(ours.value).split(": ")[-1].split()[:3] == \
            str(theirs.value).split(": ")[-1].split()[:3]
