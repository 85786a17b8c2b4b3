"""The FFT prims on the array module: cupyx.scipy.fft (cuFFT) on a GPU, scipy.fft (the
reference's own library) in the CPU-only tests. Semantics: dispatchtorch/backend/fft_prims.py.

The devices of this backend do not declare complex dtypes yet (the elementwise kernels
are not checked on complex values on a GPU), so the frontend refuses complex cuda
tensors and these kernels are reached only by the prim tests; see docs/complex-and-fft.md.
"""
from __future__ import annotations

_FORWARD = {"none": "backward", "by_n": "forward", "by_root_n": "ortho"}
_INVERSE = {"none": "forward", "by_n": "backward", "by_root_n": "ortho"}


def build_fft_kernels(am) -> dict:
    lib = []

    def fft_module():
        """Imported on first use (loading the backend stays cheap)."""
        if not lib:
            if am.name == "cupy":
                import cupyx.scipy.fft as sp
            else:
                import scipy.fft as sp      # the numpy stand-in: CPU-only tests
            lib.append(sp)
        return lib[0]

    def fft_c2c(out, x, *, dims, forward, norm):
        sp = fft_module()
        if forward:
            out[...] = sp.fftn(x, axes=dims, norm=_FORWARD[norm])
        else:
            out[...] = sp.ifftn(x, axes=dims, norm=_INVERSE[norm])

    def fft_r2c(out, x, *, dims, norm, onesided):
        sp = fft_module()
        f = sp.rfftn if onesided else sp.fftn
        out[...] = f(x, axes=dims, norm=_FORWARD[norm])

    def fft_c2r(out, x, *, dims, norm):
        sp = fft_module()
        out[...] = sp.irfftn(x, s=[out.shape[d] for d in dims], axes=dims,
                             norm=_INVERSE[norm])

    return {"fft_c2c": fft_c2c, "fft_r2c": fft_r2c, "fft_c2r": fft_c2r}
