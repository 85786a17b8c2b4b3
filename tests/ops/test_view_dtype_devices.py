"""Tensor.view(dtype) on the OpenCL and meta backends: the geometry of the CPU
reference (itself checked against PyTorch in test_view_dtype.py), the same bits on
OpenCL, and one memory: writes through either dtype are seen through the other, host
copies of small uploads are dropped by a write through the other dtype, and a copy
between overlapping views of the two dtypes reads before it writes."""
import numpy as np
import pytest

import dispatchtorch as dt

OPENCL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64"]
rng = np.random.default_rng(11)
needs_opencl = pytest.mark.skipif(not dt.opencl.is_available(), reason="no OpenCL device")


def _bits(shape, name):
    raw = rng.integers(0, 256, (*shape[:-1], shape[-1] * getattr(dt, name).itemsize),
                       dtype=np.uint8)
    x = dt.tensor(raw).view(getattr(dt, name))
    return (x.to(dt.uint8).bitwise_and(1).to(dt.bool) if name == "bool" else x)


def _geometry(t):
    return tuple(t.shape), t.stride(), t.storage_offset()


def _views(ref, dev, to):
    """(the CPU's view, the device's view) as `to`, the device's geometry checked; None
    where the CPU refuses, after checking that the device refuses with its message."""
    try:
        want = ref.view(getattr(dt, to))
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as got:
            dev.view(getattr(dt, to))
        assert str(got.value) == str(e)
        return None
    got = dev.view(getattr(dt, to))
    assert _geometry(got) == _geometry(want)
    return want, got


@needs_opencl
@pytest.mark.parametrize("src", OPENCL)
@pytest.mark.parametrize("to", OPENCL)
def test_opencl_every_pair_matches_the_cpu_reference(src, to):
    ref = _bits((4, 16), src)
    dev = ref.to("opencl")
    for cut in (lambda x: x, lambda x: x[1:, 8:]):
        views = _views(cut(ref), cut(dev), to)
        if views is None:
            continue
        want, got = views
        if to == "bool":
            assert got.cpu().tolist() == want.tolist()
        else:
            assert got.cpu().contiguous().view(dt.uint8).numpy().tobytes() == \
                want.contiguous().view(dt.uint8).numpy().tobytes()


@needs_opencl
def test_opencl_writes_are_seen_through_either_dtype():
    x = dt.zeros(4, device="opencl")
    bits = x.view(dt.int32)
    bits[1] = 0x3F800000                       # 1.0f
    assert x.tolist() == [0.0, 1.0, 0.0, 0.0]
    x[2] = -2.0
    assert bits[2].item() == np.float32(-2.0).view(np.int32)
    assert x._version == bits._version == 2
    small = dt.tensor([1.0, 2.0], device="opencl")     # a small upload keeps a host copy
    small.view(dt.int32).add_(1)                       # ... that this write makes stale
    assert small.cpu().numpy().tobytes() == (np.array([1.0, 2.0], np.float32).view(np.int32)
                                             + 1).tobytes()
    wide = dt.arange(6, dtype=dt.float32, device="opencl").view(dt.float64)
    wide.neg_()                                        # flips every other float32's sign
    np.testing.assert_array_equal(
        dt.arange(6, dtype=dt.float32).view(dt.float64).neg_().view(dt.float32).numpy(),
        wide.view(dt.float32).cpu().numpy())


@needs_opencl
def test_opencl_copy_between_overlapping_views_of_two_dtypes():
    def shifted(device):
        a = dt.arange(8, dtype=dt.float32, device=device)
        halves = a.view(dt.int16)                      # 16 halves over the same bytes
        halves[2:].copy_(a[:7].view(dt.int16))         # overlapping, shifted by one float
        return a.cpu().numpy()
    np.testing.assert_array_equal(shifted("opencl"), shifted("cpu"))
    np.testing.assert_array_equal(shifted("cpu")[1:], np.arange(7, dtype=np.float32))


@needs_opencl
def test_opencl_view_outlives_its_source():
    v = dt.arange(4, dtype=dt.float32, device="opencl").view(dt.int32)
    for _ in range(3):                                 # pool blocks get reused meanwhile
        dt.ones(4, device="opencl").add_(7)
    assert v.cpu().numpy().tobytes() == np.arange(4, dtype=np.float32).tobytes()


@pytest.mark.parametrize("to", ["uint8", "float16", "float64", "complex64"])
def test_meta_geometry_matches_the_cpu_reference(to):
    for make in (lambda d: dt.ones(4, 6, device=d)[:, 2:], lambda d: dt.ones(3, 4, device=d)):
        views = _views(make("cpu"), make("meta"), to)
        assert views is None or views[1].device.type == "meta"
    assert tuple(dt.view_as_real(dt.ones(3, dtype=dt.complex64, device="meta")).shape) == (3, 2)
