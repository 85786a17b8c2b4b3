"""Shared fixtures: the OpenCL and CPU backends, skipping when no OpenCL device exists,
and strict mode so a prim the backend lacks fails instead of running on the CPU.

DISPATCHTORCH_TEST_DTYPES=float32,int64 keeps only the dtype-parametrized tests of those
dtypes (each new dtype x op x layout costs PoCL a kernel compile, ~0.5 s on a cold
cache); unset, every dtype runs."""
from __future__ import annotations

import os

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
    matmul follows: in-place or packed register blocks on 'loop', local-memory tiles on
    'grid')."""
    old = device.loop, device.matmul_path
    device.loop = request.param == "loop"
    device.matmul_path = "direct" if device.loop else "tiled"
    device.plans.clear()
    yield request.param
    device.loop, device.matmul_path = old
    device.plans.clear()


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


_DTYPE_PARAMS = ("dtype", "src", "dst")


def pytest_collection_modifyitems(config, items):
    """Keep the dtypes asked for, and put each file's tests in one xdist group: two
    workers meeting the same kernels would each compile them (make test runs
    `--dist loadgroup`)."""
    wanted = os.environ.get("DISPATCHTORCH_TEST_DTYPES", "").strip()
    keep = set(wanted.split(",")) if wanted and wanted != "all" else None
    here = os.path.dirname(__file__)
    selected, deselected = [], []
    for item in items:
        if not str(item.path).startswith(here):     # a session hook: other suites' items too
            selected.append(item)
            continue
        params = getattr(getattr(item, "callspec", None), "params", {})
        names = {str(params[k]).rsplit(".", 1)[-1] for k in _DTYPE_PARAMS if k in params}
        if keep is not None and names - keep:
            deselected.append(item)
            continue
        item.add_marker(pytest.mark.xdist_group(f"opencl-{item.path.stem}"))
        selected.append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = selected
