"""Device discovery (including a machine without OpenCL), what `python -m
dispatchtorch.backends` shows, kernel caching, and build/launch error messages."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from dispatchtorch.backend import PRIMS
from dispatchtorch_opencl import device as device_mod
from dispatchtorch_opencl.codegen import KernelSpec
from dispatchtorch_opencl.errors import KernelBuildError, KernelLaunchError


def test_every_prim_has_a_kernel_but_the_documented_host_fallbacks(ocl):
    from dispatchtorch_opencl.host_fallbacks import HOST_FALLBACK_PRIMS
    missing = set(PRIMS) - set(ocl.kernels)
    assert not missing - HOST_FALLBACK_PRIMS, \
        f"prims without an OpenCL kernel: {sorted(missing - HOST_FALLBACK_PRIMS)}"
    assert not HOST_FALLBACK_PRIMS - missing, \
        f"listed as host fallbacks but have kernels: {sorted(HOST_FALLBACK_PRIMS - missing)}"


def test_device_info(ocl, device):
    (info,) = ocl.devices()[:1]
    assert info.index == 0 and info.name == device.name
    props = info.properties
    for key in ("platform", "driver", "fp64", "fp16", "global_mem_mib", "compute_units"):
        assert key in props
    assert {"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
            "float32"} <= info.dtypes
    assert ("float64" in info.dtypes) == props["fp64"]


def test_no_platform_means_no_devices_and_a_reason(monkeypatch):
    import pyopencl as cl

    def none():
        raise cl.LogicError("clGetPlatformIDs", cl.status_code.PLATFORM_NOT_FOUND_KHR, "no ICD")
    monkeypatch.setattr(cl, "get_platforms", none)
    devices, reason = device_mod.discover()
    assert devices == [] and "no OpenCL platform" in reason and "pocl" in reason


def test_no_pyopencl_means_no_devices_and_a_reason(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyopencl", None)
    devices, reason = device_mod.discover()
    assert devices == [] and "pyopencl cannot be imported" in reason


def test_backends_listing_shows_opencl(ocl):
    out = subprocess.run([sys.executable, "-m", "dispatchtorch.backends"], capture_output=True,
                         text=True, check=True).stdout
    assert "opencl" in out and "fp64=" in out and "fp16=" in out and "platform=" in out


def test_kernels_are_built_once(ocl, device):
    a = ocl.from_host(np.ones(5, np.float32), 0)
    out = ocl.empty((5,), "float32", 0)
    ocl.kernels["exp"](out, a)
    n = len(device.kernels)
    ocl.kernels["exp"](out, a)
    ocl.kernels["exp"](ocl.empty((7,), "float32", 0), ocl.from_host(np.ones(7, np.float32), 0))
    assert len(device.kernels) == n


def test_build_error_names_op_dtypes_and_log(device):
    bad = KernelSpec("broken", "__kernel void broken(__global float* x) { x[0] = undefined_name; }",
                     (None,), "myop (float32 -> float32)")
    with pytest.raises(KernelBuildError) as info:
        device.kernel(("test-broken",), lambda: bad)
    msg = str(info.value)
    assert "myop (float32 -> float32)" in msg and "undefined_name" in msg and "log" in msg


def test_launch_error_names_the_op(device):
    spec = KernelSpec("ok", "__kernel void ok(__global float* x) { x[get_global_id(0)] = 1.0f; }",
                      (None,), "myop (float32)")
    kernel, what = device.kernel(("test-ok",), lambda: spec)
    with pytest.raises(KernelLaunchError, match="myop"):
        device.launch(kernel, (6,), (4,), [device.dummy], what)      # 6 is not a multiple of 4


def test_integer_modulo_by_zero_through_the_frontend(ocl):
    """Refused with an error naming the op (by the frontend's check or the kernel's),
    and the operands are unchanged."""
    import dispatchtorch as torch
    a = torch.tensor([1, 2, 3], device="opencl")
    b = torch.tensor([1, 0, 3], device="opencl")
    with pytest.raises(Exception, match="(fmod.*ZeroDivision)|(ZeroDivision.*fmod)"):
        torch.fmod(a, b)
    assert a.cpu().tolist() == [1, 2, 3] and b.cpu().tolist() == [1, 0, 3]
