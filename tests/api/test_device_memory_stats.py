"""torch.cuda-style memory statistics on every device module: PyTorch's answers where
the device is absent (its CPU build's torch.cuda), the OpenCL pool's counters where it
is present, and a clear refusal where a backend does not count."""
import warnings

import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")
needs_opencl = pytest.mark.skipif(not dt.opencl.is_available(), reason="no OpenCL device")
COUNTERS = ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved")


def test_an_absent_device_answers_as_pytorchs_cpu_build():
    if dt.cuda.is_available():
        pytest.skip("a CUDA device is present")
    for name in COUNTERS:
        assert getattr(dt.cuda, name)() == getattr(torch.cuda, name)() == 0
    assert dt.cuda.memory_stats() == torch.cuda.memory_stats() == {}
    assert dt.cuda.is_bf16_supported() is torch.cuda.is_bf16_supported() is False
    assert dt.cuda.reset_peak_memory_stats() is None


def test_reset_max_memory_allocated_warns_as_pytorch():
    with pytest.warns(FutureWarning) as theirs:
        try:
            torch.cuda.reset_max_memory_allocated()
        except AttributeError:            # PyTorch's CPU build then fails inside
            pass
    with pytest.warns(FutureWarning) as ours:
        dt.cuda.reset_max_memory_allocated()
    assert str(ours[0].message) == str(theirs[0].message)


@needs_opencl
def test_opencl_counts_what_tensors_hold_and_its_peak():
    o = dt.opencl
    o.empty_cache()
    o.reset_peak_memory_stats()
    base = o.memory_allocated()
    x = dt.empty(1 << 20, device="opencl")                 # 4 MiB, a power of two: one bin
    assert o.memory_allocated() == base + 4 * 2**20
    assert o.max_memory_allocated() >= o.memory_allocated()
    assert o.memory_reserved() >= o.memory_allocated()
    peak = o.max_memory_allocated()
    del x
    assert o.memory_allocated() == base
    assert o.max_memory_allocated() == peak               # the peak stays until reset
    held = o.memory_reserved()
    o.empty_cache()
    assert o.memory_reserved() <= held - 4 * 2**20        # the freed block went back
    o.reset_peak_memory_stats()
    assert o.max_memory_allocated() == o.memory_allocated()
    stats = o.memory_stats()
    assert list(stats) == sorted(stats) and set(stats) >= {
        "allocated_bytes.all.current", "allocated_bytes.all.peak",
        "reserved_bytes.all.current", "reserved_bytes.all.peak"}
    assert o.is_bf16_supported() is ("bfloat16" in o.get_device_properties().dtypes)
    y = dt.ones(3, device="opencl") * 2                   # still computes after all this
    np.testing.assert_array_equal(y.cpu().numpy(), [2.0, 2.0, 2.0])


@needs_opencl
def test_a_backend_that_does_not_count_is_refused_not_zero(monkeypatch):
    bk = type(dt.ones(1, device="opencl")._place.bk)
    monkeypatch.setattr(bk, "memory_stats", lambda self, device: None)
    for name in (*COUNTERS, "memory_stats", "reset_peak_memory_stats"):
        with pytest.raises(NotImplementedError, match="the opencl backend does not count"):
            getattr(dt.opencl, name)()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(NotImplementedError):
            dt.opencl.reset_max_memory_allocated()
