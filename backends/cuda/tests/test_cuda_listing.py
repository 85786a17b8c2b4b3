"""Device listing: the real driver state, a faked driver, and cupy missing."""
import sys

import pytest

import dispatchtorch as torch
from dispatchtorch.backend import DTYPE_NAMES, PRIMS
from dispatchtorch.backends import report as backends_report
from dispatchtorch.dispatch import OPS, loader
from dispatchtorch_cuda import backend as cuda_backend
from dispatchtorch_cuda import dispatchtorch_backend

cupy = pytest.importorskip("cupy", reason="cupy is not installed")
runtime = cupy.cuda.runtime


def adopt(backend, name="cuda"):
    rt = loader.BackendRuntime(name)
    loader._adopt(rt, backend)
    return rt


def test_the_hook_returns_a_backend_that_explains_itself():
    b = dispatchtorch_backend()
    assert set(PRIMS) <= set(b.kernels)
    if b.devices():
        assert b.unavailable_reason is None
    else:      # this machine: the exact CUDA error, and the versions involved
        assert b.unavailable_reason.startswith(("CUDA is not usable: ", "no CUDA device found"))
        assert f"cupy {cupy.__version__}" in b.unavailable_reason


@pytest.fixture
def installed_cuda():
    if "cuda" not in loader.available_names():
        pytest.skip("dispatchtorch-cuda is not installed (pip install -e backends/cuda)")
    return loader.get_backend("cuda")


def test_without_a_gpu_device_cuda_says_why(installed_cuda):
    rt = installed_cuda
    if rt.status == "ready":
        pytest.skip("a GPU is present")
    assert rt.status == "unavailable"
    reason = rt.backend.unavailable_reason
    assert reason and reason in rt.error
    assert not [p for p in rt.missing_prims if p in OPS]      # no registered prim falls back
    with pytest.raises(RuntimeError, match="device 'cuda' is not usable") as err:
        torch.zeros(2, device="cuda")
    assert reason in str(err.value)
    report = {b["name"]: b for b in backends_report()}
    assert report["cuda"]["status"] == "unavailable" and report["cuda"]["error"] == rt.error


# -- a faked driver ----------------------------------------------------------------------

def _props(name, major, minor, gib, sms):
    return {"name": name.encode(), "major": major, "minor": minor,
            "totalGlobalMem": gib << 30, "multiProcessorCount": sms}


@pytest.fixture
def two_fake_gpus(monkeypatch):
    gpus = [_props("Fake H200", 9, 0, 141, 132), _props("Fake Maxwell", 5, 2, 4, 16)]
    monkeypatch.setattr(runtime, "getDeviceCount", lambda: len(gpus))
    monkeypatch.setattr(runtime, "getDeviceProperties", lambda i: gpus[i])
    monkeypatch.setattr(runtime, "runtimeGetVersion", lambda: 12090)
    monkeypatch.setattr(runtime, "driverGetVersion", lambda: 13000)
    return gpus


def test_fake_driver_lists_every_device(two_fake_gpus):
    b = cuda_backend.create_backend()
    assert b.unavailable_reason is None
    h200, maxwell = b.devices()
    assert (h200.index, h200.name) == (0, "Fake H200")
    assert h200.dtypes == frozenset(DTYPE_NAMES)
    assert h200.properties["compute_capability"] == "9.0"
    assert h200.properties["memory_gib"] == 141.0 and h200.properties["multiprocessors"] == 132
    assert h200.properties["cuda_runtime"] == "12.9" and h200.properties["cuda_driver"] == "13.0"
    assert maxwell.index == 1 and "float16" not in maxwell.dtypes      # no fp16 before 5.3
    assert "bfloat16" in maxwell.dtypes                                 # float32 math
    rt = adopt(b)
    assert rt.status == "ready" and rt.error == ""
    assert rt.device_info(1) is maxwell
    with pytest.raises(RuntimeError, match=r"'cuda:2' does not exist.*cuda:0, cuda:1"):
        rt.device_info(2)


def test_fake_driver_with_several_gpus_guards_the_device(two_fake_gpus):
    b = cuda_backend.create_backend()
    assert b._guards is not None and set(b._guards) == {0, 1}
    single = cuda_backend.CUDABackend(cuda_backend.CupyModule(), b.devices()[:1])
    assert single._guards is None                    # one GPU: no per-call device switch


def test_no_device_found(monkeypatch):
    monkeypatch.setattr(runtime, "getDeviceCount", lambda: 0)
    monkeypatch.setattr(runtime, "driverGetVersion", lambda: 12080)
    b = cuda_backend.create_backend()
    assert b.devices() == []
    assert b.unavailable_reason.startswith("no CUDA device found") and "driver 12.8" in \
        b.unavailable_reason
    rt = adopt(b)
    assert rt.status == "unavailable" and b.unavailable_reason in rt.error


def test_a_cuda_error_is_reported_verbatim(monkeypatch):
    def fail():
        raise runtime.CUDARuntimeError(100)          # cudaErrorNoDevice
    monkeypatch.setattr(runtime, "getDeviceCount", fail)
    b = cuda_backend.create_backend()
    assert b.devices() == []
    assert "cudaErrorNoDevice" in b.unavailable_reason


def test_cupy_missing_is_reported_with_the_fix(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)   # import cupy -> ImportError
    b = cuda_backend.create_backend()
    assert b.devices() == [] and b.kernels == {}
    assert "cupy is not importable" in b.unavailable_reason
    assert "./backends/cuda[cuda12]" in b.unavailable_reason
    rt = adopt(b)
    assert rt.status == "unavailable"
