"""Cases of the complex rows and the FFT prims (issue 15). Inputs and results are real
(complex values go in and out through view_as_complex / view_as_real), so the harness
compares them as for every other op; each sample needs the complex dtype of its float
dtype, so a device that does not declare complex dtypes (OpenCL) skips them."""
import dispatchtorch as torch

from ..case import Case, Tol

FL = ("float32", "float64")
FFT = Tol("FFT libraries order their butterflies differently", float32=(1e-5, 1e-5),
          float64=(1e-10, 1e-10))
_COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}


def _pairs(*shapes, **kw):
    """Float inputs whose last dim is 2 (re, im): view_as_complex takes them as they are."""
    def gen(g):
        yield g.sample("basic", *(g.arr(s) for s in shapes), **kw).needs_dtypes(
            _COMPLEX_OF[g.dtype])
    return gen


def _plain(*shapes, **kw):
    def gen(g):
        yield g.sample("basic", *(g.arr(s) for s in shapes), **kw).needs_dtypes(
            _COMPLEX_OF[g.dtype])
        yield g.sample("T", *(g.arr(s, layout="T" if len(s) == 2 else "contig") for s in shapes),
                       **kw).needs_dtypes(_COMPLEX_OF[g.dtype])
    return gen


CASES = [
    Case("view_as_complex",
         lambda x: torch.view_as_real(torch.view_as_complex(x.contiguous()) * (2 - 1j)),
         _pairs((3, 2)), dtypes=FL),
    Case("view_as_real",
         lambda x: torch.view_as_real(torch.view_as_complex(x.contiguous())).sum(-1),
         _pairs((2, 3, 2)), dtypes=FL),
    Case("complex", lambda a, b: torch.view_as_real(torch.complex(a, b)), _plain((3, 4), (3, 4)),
         dtypes=FL),
    Case("conj_physical",
         lambda x: torch.view_as_real(torch.view_as_complex(x.contiguous()).conj_physical()),
         _pairs((4, 2)), dtypes=FL),
    Case("complex_abs", lambda x: torch.view_as_complex(x.contiguous()).abs(), _pairs((5, 2)),
         dtypes=FL),
    Case("fft_c2c",
         lambda x: torch.view_as_real(torch.fft.fft(torch.view_as_complex(x.contiguous()),
                                                    norm="ortho")),
         _pairs((3, 6, 2)), dtypes=FL, tol=FFT),
    Case("fft_r2c", lambda x: torch.view_as_real(torch.fft.rfft2(x)), _plain((4, 6)),
         dtypes=FL, tol=FFT),
    Case("fft_c2r", lambda x: torch.fft.irfft(torch.view_as_complex(x.contiguous()), n=7),
         _pairs((2, 4, 2)), dtypes=FL, tol=FFT),
]
