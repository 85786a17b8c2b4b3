"""The FFT prims on scipy.fft (pocketfft, as PyTorch's CPU build; single precision stays
single precision)."""
from __future__ import annotations

# the prims' norm modes as scipy's norm names, per direction of the transform
_FORWARD = {"none": "backward", "by_n": "forward", "by_root_n": "ortho"}
_INVERSE = {"none": "forward", "by_n": "backward", "by_root_n": "ortho"}
_sp = []


def _fft():
    if not _sp:
        import scipy.fft
        _sp.append(scipy.fft)
    return _sp[0]


def fft_c2c(out, x, *, dims, forward, norm):
    sp = _fft()
    if forward:
        out[...] = sp.fftn(x, axes=dims, norm=_FORWARD[norm])
    else:
        out[...] = sp.ifftn(x, axes=dims, norm=_INVERSE[norm])


def fft_r2c(out, x, *, dims, norm, onesided):
    sp = _fft()
    f = sp.rfftn if onesided else sp.fftn
    out[...] = f(x, axes=dims, norm=_FORWARD[norm])


def fft_c2r(out, x, *, dims, norm):
    sp = _fft()
    out[...] = sp.irfftn(x, s=[out.shape[d] for d in dims], axes=dims, norm=_INVERSE[norm])


KERNELS = {"fft_c2c": fft_c2c, "fft_r2c": fft_r2c, "fft_c2r": fft_c2r}
