"""The FFT prims of the catalogue (PyTorch's _fft_c2c / _fft_r2c / _fft_c2r).

`norm` is the scale applied to the transform, whichever its direction: "none", "by_n"
(1/n) or "by_root_n" (1/sqrt(n)), n the product of the signal sizes over `dims` (for
c2r, the output's sizes). The frontend maps torch.fft's norm names onto these and does
the padding / trimming to `n` / `s`, so the kernels only transform.
"""


def fft_prims(add):
    add("fft_c2c", "fft", "fft_c2c(out, x: complex, *, dims: tuple[int], forward: bool, norm: str)",
        "complex DFT over dims (exponent sign - when forward, + otherwise), scaled by norm; "
        "out has x's shape and dtype", "complex")
    add("fft_r2c", "fft", "fft_r2c(out: complex, x: float, *, dims: tuple[int], norm: str, "
        "onesided: bool)",
        "forward DFT of a real x over dims, scaled by norm; onesided: the last of dims keeps "
        "n // 2 + 1 entries (the rest follow by Hermitian symmetry)", "float")
    add("fft_c2r", "fft", "fft_c2r(out: float, x: complex, *, dims: tuple[int], norm: str)",
        "inverse (exponent +) DFT over dims of a Hermitian signal given by its onesided half "
        "on the last of dims; out's size there is the signal length (x has out's // 2 + 1); "
        "the imaginary parts of the entries that must be real are ignored", "complex")
