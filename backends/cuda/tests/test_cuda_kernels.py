"""Every prim and dtype of the cuda kernels against the numpy reference backend.

The kernels run under numpy here (the same code cupy runs on a GPU): results must
match the reference exactly, except where the GPU algorithm reassociates floating
point (scatter's product). With a GPU, test_cuda_gpu.py runs these cases on cupy.
"""
import pytest

import prim_cases as pc
from dispatchtorch.backend import PRIMS
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


def test_every_prim_has_a_kernel():
    assert sorted(EMULATED.kernels) == sorted(PRIMS)


@pytest.mark.parametrize("prim,dtype", PARAMS)
def test_prim_matches_reference(prim, dtype):
    check_prim(EMULATED, prim, dtype, exact=prim != "scatter_")
