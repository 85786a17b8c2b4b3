"""Shared fixtures: the OpenCL and CPU backends, skipping when no OpenCL device exists,
and strict mode so a prim the backend lacks fails instead of running on the CPU."""
from __future__ import annotations

import numpy as np
import pytest

from dispatchtorch.backends import get_fallback_mode, set_fallback_mode
from dispatchtorch.dispatch import get_backend


def _runtime():
    try:
        rt = get_backend("opencl")
    except RuntimeError as exc:
        return None, str(exc)
    return (rt, "") if rt.status == "ready" else (None, f"opencl backend {rt.status}: {rt.error}")


@pytest.fixture(scope="session")
def ocl():
    rt, why = _runtime()
    if rt is None:
        pytest.skip(why)
    return rt.backend


@pytest.fixture(scope="session")
def cpu():
    return get_backend("cpu").backend


@pytest.fixture(scope="session")
def device(ocl):
    return ocl.device(0)


@pytest.fixture(autouse=True)
def strict_fallback():
    old = get_fallback_mode()
    set_fallback_mode("error")
    yield
    set_fallback_mode(old)


@pytest.fixture(params=["loop", "grid"])
def schedule(request, device):
    """Run under both launch schedules: CPU-style chunks and GPU-style grids (the
    matmul follows: packed on 'loop', local-memory tiles on 'grid')."""
    old = device.loop, device.matmul_path
    device.loop = request.param == "loop"
    device.matmul_path = "packed" if device.loop else "tiled"
    device.plans.clear()
    yield request.param
    device.loop, device.matmul_path = old
    device.plans.clear()


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
