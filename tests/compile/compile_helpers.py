"""What the compile tests share: the devices, tolerances and comparisons."""
import numpy as np
import pytest

from dispatchtorch.dispatch import get_backend


def _opencl_ready():
    try:
        return get_backend("opencl").status == "ready"
    except RuntimeError:
        return False


DEVICES = ["cpu", pytest.param("opencl", marks=pytest.mark.skipif(
    not _opencl_ready(), reason="no OpenCL device"))]
# the CPU fused kernel runs the prims' own kernels tile by tile: bit-identical (its
# generated C for regions of 32K elements and more: bit-identical but for libmvec's
# transcendentals, tests/compile/test_cpu_native.py). OpenCL's
# vector and scalar math builtins may differ in the last bit where chunking differs.
TOL = {"cpu": 0.0, "opencl": 1e-5}


def _np(t):
    return t.detach().cpu().numpy()


def _close(a, b, dev, scale=1.0):
    np.testing.assert_allclose(_np(a), _np(b), rtol=TOL[dev] * scale, atol=TOL[dev] * scale)


def _entries(cf):
    return list(cf.cache.values())
