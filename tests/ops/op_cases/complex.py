"""Sample cases of the complex rows (view_as_real, view_as_complex, complex, conj_physical,
complex_abs): float inputs in, real results out, so that the shared harness compares
values and gradients (PyTorch's, numpy's in float64, finite differences)."""
import numpy as np

from op_harness import A, Case

CASES = []
C_FLOATS = ("float32", "float64")


def _pairs(x):
    return x[..., 0] + 1j * x[..., 1]


def _real(z):
    return np.stack([z.real, z.imag], -1)


CASES += [
    Case("view_as_complex", lambda T, x: T.view_as_real(T.view_as_complex(x) * 2),
         (A((3, 2), noncontig=False),), C_FLOATS, lambda x: 2 * x),
    Case("view_as_real", lambda T, x: T.view_as_real(T.view_as_complex(x) * (1 + 2j)),
         (A((2, 3, 2), noncontig=False),), C_FLOATS, lambda x: _real(_pairs(x) * (1 + 2j))),
    Case("complex", lambda T, a, b: T.view_as_real(T.complex(a, b)), (A((3, 4)), A((4,))),
         C_FLOATS, lambda a, b: _real(a + 1j * b)),
    Case("complex", lambda T, a, b: T.view_as_real(T.polar(a, b)), (A((5,), "positive"), A((5,))),
         C_FLOATS, lambda a, b: _real(a * np.exp(1j * b)), name="polar"),
    Case("conj_physical", lambda T, a, b: T.view_as_real(T.complex(a, b).conj_physical() * a),
         (A((4,)), A((4,))), C_FLOATS, lambda a, b: _real(np.conj(a + 1j * b) * a)),
    Case("complex_abs", lambda T, a, b: T.complex(a, b).abs(), (A((6,), "nonzero"), A((6,))),
         C_FLOATS, lambda a, b: np.abs(a + 1j * b)),
    Case("complex_abs", lambda T, a, b: T.complex(a, b).angle(), (A((6,), "nonzero"), A((6,))),
         C_FLOATS, lambda a, b: np.angle(a + 1j * b), name="angle"),
]

# the FFT prims (tests/ops/test_fft.py holds every public transform against PyTorch)
CASES += [
    Case("fft_r2c", lambda T, x: T.view_as_real(T.fft.rfft(x, norm="ortho")), (A((3, 8)),),
         C_FLOATS, lambda x: _real(np.fft.rfft(x, norm="ortho"))),
    Case("fft_r2c", lambda T, x: T.view_as_real(T.fft.fft2(x)), (A((4, 6)),), C_FLOATS,
         lambda x: _real(np.fft.fft2(x)), name="fft2 of real"),
    Case("fft_c2r", lambda T, x: T.fft.irfft(T.view_as_complex(x), n=7),
         (A((3, 4, 2), noncontig=False),), C_FLOATS, lambda x: np.fft.irfft(_pairs(x), n=7)),
    Case("fft_c2c", lambda T, x: T.view_as_real(T.fft.ifft(T.view_as_complex(x), n=6)),
         (A((2, 5, 2), noncontig=False),), C_FLOATS,
         lambda x: _real(np.fft.ifft(_pairs(x), n=6))),
]
