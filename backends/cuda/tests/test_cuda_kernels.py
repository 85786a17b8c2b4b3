"""Every prim and dtype of the cuda kernels against the numpy reference backend.

The kernels run under numpy here (the same code cupy runs on a GPU): results must
match the reference exactly. With a GPU, test_cuda_gpu.py runs these cases on cupy
(within per-dtype tolerances: GPU math functions and reduction orders differ).
"""
import numpy as np
import pytest

import prim_cases as pc
from dispatchtorch.backend import PRIMS
from dispatchtorch.dispatch import OPS
from dispatchtorch_cpu.backend import CPUBackend
from dispatchtorch_cuda._array_module import NumpyModule
from dispatchtorch_cuda.backend import CUDABackend

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")   # log(0), 0/0, ...

CPU = CPUBackend()
EMULATED = CUDABackend(NumpyModule(), [])
PARAMS = [(p, d) for p in sorted(PRIMS) for d in pc.dtypes_of(p)]


def check_prim(backend, prim, dtype, exact):
    cases = pc.cases(prim, dtype)
    assert cases, f"no cases for {prim} {dtype}"
    for case in cases:
        want = pc.run(CPU, CPU.kernels[prim], case)
        got = pc.run(backend, backend.kernels[prim], case)
        for i, (g, w) in enumerate(zip(got, want)):
            pc.assert_close(g, w, exact, f"{prim} {dtype} [{case.label}] output {i}")


def test_every_prim_has_a_kernel_and_extra_kernels_are_known_ops():
    assert set(PRIMS) <= set(EMULATED.kernels)
    assert set(EMULATED.kernels) - set(PRIMS) <= set(OPS)


def check_relu(backend):
    """relu's own kernel gives PyTorch's values: x <= 0 ? 0 : x (NaN passes through)."""
    rng = np.random.default_rng(7)
    for dtype in pc.KIND_DTYPES["numeric"]:
        x = pc.rand_values(rng, dtype, (6, 7))
        if dtype in pc.FLOATS:
            x[0, :5] = [np.nan, -0.0, np.inf, -np.inf, -np.nan]
        want = np.where(x.astype(np.float64) <= 0, np.zeros((), x.dtype), x).astype(x.dtype)
        for op in (pc.dense(x), pc.transposed(x), pc.strided(x, pc.poison(dtype))):
            case = pc.Case("relu", dtype, [pc.fresh(x.shape, dtype)], [op])
            got, = pc.run(backend, backend.kernels["relu"], case)
            pc.assert_close(got, want, True, f"relu {dtype}")


def test_relu_kernel():
    check_relu(EMULATED)


@pytest.mark.parametrize("prim,dtype", PARAMS)
def test_prim_matches_reference(prim, dtype):
    check_prim(EMULATED, prim, dtype, exact=True)
