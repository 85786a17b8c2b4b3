"""benchmarks.profile_opencl counts launches and copies per call, times kernels by
their profiling events, and puts the device's queue and launch method back."""
import numpy as np
import pytest

import dispatchtorch as dt


def test_counts_launches_and_restores_the_queue():
    try:
        x = dt.ones(64, 8, device="opencl")
    except Exception as exc:                     # no OpenCL device here
        pytest.skip(f"no opencl device: {exc}")
    from benchmarks.profile_opencl import profile
    from dispatchtorch_opencl.device import Device
    dev = x._h.dev
    queue, launch = dev.queue, Device.launch
    w = dt.ones(8, 16, device="opencl")
    gaps = {}
    wall, cpu, stats, copies = profile(lambda: (lambda: float((x @ w).sum(0).sum())), calls=3,
                                       gaps=gaps)
    assert set(gaps) <= set(stats) and all(t > 0 for t in gaps.values())
    assert dev.queue is queue and Device.launch is launch
    matmul = [v for (what, _), v in stats.items() if what.startswith("matmul")]
    assert len(matmul) == 1 and matmul[0][0] == 3 and matmul[0][1] > 0
    assert sum(c for c, _ in stats.values()) == 3 * 3           # matmul, sum(0), sum
    assert copies == {"copy (blocking)": 1.0}                   # float() reads once a call
    assert wall > 0 and np.isfinite(wall)
    assert float((x @ w).sum()) == 64 * 16 * 8                  # the device still works
