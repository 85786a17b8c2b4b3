"""Cases of the rows added for PyTorch's wider op set (issue 15): more elementwise
composites, products, scatters, and the linear-algebra prims with their composites.
Samples are few and small: on a backend they check that each decomposition (or prim)
agrees with the CPU reference."""
import numpy as np

import dispatchtorch as torch
from dispatchtorch.dispatch import OPS
from dispatchtorch.dispatch.registry import operand_domains

from ..case import Arr, Case, Tol

FL = ("float32", "float64")
ORDER = Tol("composites sum and divide in the backend's order", float32=(1e-5, 1e-5),
            float64=(1e-7, 1e-7))
LAPACK = Tol("factorisations and solvers: rounding differs between LAPACK builds",
             float32=(1e-4, 1e-4), float64=(1e-9, 1e-9))


def _one(*shapes, low=None, high=None):
    def gen(g):
        yield g.sample("basic", *(g.arr(s, low, high) for s in shapes))
        yield g.sample("T", *(g.arr(s, low, high, layout="T" if len(s) == 2 else "contig")
                              for s in shapes))
    return gen


def _scalars(*shapes, **kw):
    def gen(g):
        yield g.sample("basic", *(g.arr(s) for s in shapes), **kw)
    return gen


CASES = [
    Case("signbit", torch.signbit, _one((3, 4)), dtypes=FL + ("int32", "int64")),
    Case("copysign", torch.copysign, _one((3, 4), (4,)), dtypes=FL),
    Case("heaviside", torch.heaviside, _one((3, 4), (3, 4)), dtypes=FL + ("int32", "int64")),
    Case("sinc", torch.sinc, _one((3, 4)), dtypes=FL),
    Case("deg2rad", torch.deg2rad, _one((3, 4)), dtypes=FL),
    Case("rad2deg", torch.rad2deg, _one((3, 4)), dtypes=FL),
    Case("logaddexp2", torch.logaddexp2, _one((3, 4), (4,)), dtypes=FL),
    Case("angle", torch.angle, _one((3, 4)), dtypes=FL, grad=False),
    Case("ldexp", lambda x, e: torch.ldexp(x, e.long()), _one((3, 4), (4,), low=-3, high=3),
         dtypes=FL),
    Case("addcmul", lambda x, a, b: torch.addcmul(x, a, b, value=0.5), _one((3, 4), (4,), (3, 1)),
         dtypes=FL + ("int64",)),
    Case("addcdiv", lambda x, a, b: torch.addcdiv(x, a, b, value=2), _one((3, 4), (4,), (3, 4),
                                                                          low=0.5, high=2),
         dtypes=FL),
    Case("isclose", lambda a, b: torch.isclose(a, b, rtol=0.5, atol=0.5), _one((3, 4), (3, 4)),
         dtypes=FL + ("int64",)),
    Case("addr", lambda x, a, b: torch.addr(x, a, b, beta=0.5, alpha=2), _one((3, 4), (3,), (4,)),
         dtypes=FL, tol=ORDER),
    Case("addbmm", torch.addbmm, _one((2, 4), (3, 2, 5), (3, 5, 4)), dtypes=FL, tol=ORDER),
    Case("inner", torch.inner, _one((2, 3), (4, 3)), dtypes=FL, tol=ORDER),
    Case("kron", torch.kron, _one((2, 3), (3, 2)), dtypes=FL + ("int64",)),
    Case("trace", torch.trace, _one((3, 4)), dtypes=FL + ("int64",), tol=ORDER),
    Case("cross", lambda a, b: torch.linalg.cross(a, b), _one((4, 3), (1, 3)),
         dtypes=FL + ("int64",)),
    Case("cdist", torch.cdist, _one((4, 3), (5, 3)), dtypes=FL, tol=ORDER),
    Case("pdist", torch.pdist, _one((5, 3)), dtypes=FL, tol=ORDER),
    Case("renorm", lambda x: torch.renorm(x, 2, 0, 1.0), _one((3, 4)), dtypes=FL, tol=ORDER),
    Case("block_diag", lambda a, b: torch.block_diag(a, b), _one((2, 3), (4,)),
         dtypes=FL + ("int64",)),
    Case("diagonal_scatter", torch.diagonal_scatter, _one((3, 3), (3,)), dtypes=FL + ("int64",)),
    Case("select_scatter", lambda x, s: torch.select_scatter(x, s, 1, 2), _one((3, 4), (3,)),
         dtypes=FL + ("int64",)),
    Case("slice_scatter", lambda x, s: torch.slice_scatter(x, s, 1, 1, 4, 2),
         _one((3, 5), (3, 2)), dtypes=FL + ("int64",)),
    Case("index_copy", lambda x, s: torch.index_copy(x, 1, torch.tensor([3, 0], device=x.device),
                                                     s),
         _one((3, 4), (3, 2)), dtypes=FL + ("int64",)),
    Case("put", lambda x, s: torch.put(x, torch.tensor([0, -1, 5], device=x.device), s),
         _one((3, 4), (3,)), dtypes=FL + ("int64",)),
]


# -- linear algebra: gauge-invariant functions of the decompositions (the signs of
# singular vectors and eigenvectors are each implementation's choice) -------------------------

def _eye3(a):
    # tensor methods only: test_conformance_vs_torch reruns the cases' lambdas on PyTorch
    return 3 * a.new_ones(a.shape[-1]).diag()


def _spd(a):
    return a @ a.mT + _eye3(a)


def _mats(*shapes):
    def gen(g):
        yield g.sample("batched", *(g.arr(s, -1, 1) for s in shapes))
    return gen


CASES += [
    Case("linalg_cholesky", lambda a: torch.linalg.cholesky(_spd(a)), _mats((2, 3, 3)), dtypes=FL,
         tol=LAPACK),
    Case("linalg_eigh", lambda a: (lambda r: (r.eigenvalues, r.eigenvectors ** 2))(
        torch.linalg.eigh(a + a.mT)), _mats((2, 4, 4)), dtypes=FL, tol=LAPACK),
    Case("linalg_svd", lambda a: (lambda r: (r.S, r.U ** 2, r.Vh ** 2))(
        torch.linalg.svd(a, full_matrices=False)), _mats((2, 5, 3)), dtypes=FL, tol=LAPACK),
    Case("linalg_qr", lambda a: (lambda r: (r.Q * r.R.diagonal(0, -2, -1).sign().unsqueeze(-2),
                                            r.R * r.R.diagonal(0, -2, -1).sign().unsqueeze(-1)))(
        torch.linalg.qr(a)), _mats((2, 5, 3)), dtypes=FL, tol=LAPACK),
    Case("linalg_lu_factor", lambda a: (lambda r: r.P @ r.L @ r.U)(torch.linalg.lu(a)),
         _mats((2, 3, 3)), dtypes=FL, tol=LAPACK),
    Case("linalg_solve_triangular", lambda a, b: torch.linalg.solve_triangular(
        a.triu() + _eye3(a), b, upper=True), _mats((2, 3, 3), (2, 3, 2)), dtypes=FL, tol=LAPACK),
    Case("linalg_solve", lambda a, b: torch.linalg.solve(a + _eye3(a), b),
         _mats((2, 3, 3), (2, 3, 2)), dtypes=FL, tol=LAPACK),
    Case("linalg_det", torch.linalg.det, _mats((2, 3, 3)), dtypes=FL, tol=LAPACK),
    Case("linalg_slogdet", lambda a: tuple(torch.linalg.slogdet(a + _eye3(a))), _mats((2, 3, 3)),
         dtypes=FL, tol=LAPACK),
    Case("linalg_pinv", lambda a: torch.linalg.pinv(a), _mats((4, 3)), dtypes=FL, tol=LAPACK),
    Case("cholesky_solve", lambda b, a: torch.cholesky_solve(b, torch.linalg.cholesky(_spd(a))),
         _mats((3, 2), (3, 3)), dtypes=FL, tol=LAPACK),
    Case("cholesky_inverse", lambda a: torch.cholesky_inverse(torch.linalg.cholesky(_spd(a))),
         _mats((3, 3)), dtypes=FL, tol=LAPACK),
]


# -- special functions: prims on scipy.special (CPU), cupyx.scipy.special (CUDA) ------------
SPECIAL = Tol("special functions: each library's series and rational approximations",
              float32=(1e-5, 1e-6), float64=(1e-10, 1e-12))
_SPECIAL_NAMES = {   # case (the op row): torch.special's name; the values from the row's domain
    "lgamma": "gammaln", "digamma": "digamma", "i0": "i0", "special_i0e": "i0e",
    "special_i1": "i1", "special_i1e": "i1e", "special_erfcx": "erfcx",
    "special_ndtri": "ndtri", "special_log_ndtr": "log_ndtr", "special_bessel_j0": "bessel_j0",
    "special_bessel_j1": "bessel_j1", "special_bessel_y0": "bessel_y0",
    "special_bessel_y1": "bessel_y1", "special_modified_bessel_k0": "modified_bessel_k0",
    "special_modified_bessel_k1": "modified_bessel_k1",
    "special_scaled_modified_bessel_k0": "scaled_modified_bessel_k0",
    "special_scaled_modified_bessel_k1": "scaled_modified_bessel_k1", "special_entr": "entr",
    "special_airy_ai": "airy_ai",
}
CASES += [Case(op, lambda x, n=name: getattr(torch.special, n)(x),
               _one((3, 4), low=OPS[op].domain[0], high=OPS[op].domain[1]), dtypes=FL,
               tol=SPECIAL)
          for op, name in _SPECIAL_NAMES.items()]


def _special_binary(op, grad_a=True):
    """A 'basic' sample over a binary special function's row domains."""
    (lo, hi), (rlo, rhi) = operand_domains(OPS[op])
    return lambda g: iter([g.sample("basic", g.arr((3, 4), lo, hi, **({} if grad_a else
                                                                        {"grad": False})),
                                    g.arr((4,) if op == "special_zeta" else (3, 4), rlo, rhi))])


CASES += [
    Case("special_zeta", lambda a, b: torch.special.zeta(a, b), _special_binary("special_zeta"),
         dtypes=FL, tol=SPECIAL),
    Case("special_xlog1py", lambda a, b: torch.special.xlog1py(a, b),
         _special_binary("special_xlog1py"), dtypes=FL),
    Case("igamma", torch.igamma, _special_binary("igamma", grad_a=False), dtypes=FL,
         tol=SPECIAL),
    Case("igammac", torch.igammac, _special_binary("igammac", grad_a=False), dtypes=FL,
         tol=SPECIAL),
    Case("nextafter", torch.nextafter, _one((3, 4), (3, 4)), dtypes=FL, grad=False),
    Case("polygamma", lambda x: torch.polygamma(2, x),
         _one((3, 4), low=OPS["polygamma"].domain[0], high=OPS["polygamma"].domain[1]), dtypes=FL,
         tol=SPECIAL),
]
