"""The memory contract: transfers of every dtype, views aliasing one buffer, copies
between layouts and dtypes with C casts, fills, the pool, out-of-memory errors."""
from __future__ import annotations

import gc

import numpy as np
import pytest

from dispatchtorch_opencl.errors import OutOfMemoryError

from _helpers import FLOATS, INTS, NP, place, sample

ALL = ("bool", *INTS, *FLOATS)


@pytest.mark.parametrize("dtype", ALL)
def test_round_trip(ocl, rng, dtype):
    for shape in [(), (0,), (1,), (3, 0, 2), (7, 13), (100_000,)]:
        a = sample(rng, shape, dtype)
        h = ocl.from_host(a, 0)
        back = ocl.to_host(h)
        assert back.dtype == np.dtype(NP[dtype]) and back.shape == a.shape
        np.testing.assert_array_equal(back.reshape(-1).view(np.uint8), a.reshape(-1).view(np.uint8))


def test_empty_has_the_shape_and_dtype(ocl):
    h = ocl.empty((2, 3), "int16", 0)
    assert ocl.to_host(h).shape == (2, 3) and ocl.to_host(h).dtype == np.int16
    assert ocl.device_index(h) == 0


def test_views_alias_the_storage(ocl):
    st = ocl.from_host(np.arange(12, dtype=np.float32), 0)
    view = ocl.as_strided(st, (3, 2), (4, 2), 1)           # elements 1, 3, 5, 9, ...
    np.testing.assert_array_equal(ocl.to_host(view), [[1, 3], [5, 7], [9, 11]])
    ocl.fill_(view, -1.0)
    want = np.arange(12, dtype=np.float32)
    want[[1, 3, 5, 7, 9, 11]] = -1
    np.testing.assert_array_equal(ocl.to_host(st), want)
    ocl.copy_(view, place(ocl, np.full((3, 2), 5, np.float32)))
    want[[1, 3, 5, 7, 9, 11]] = 5
    np.testing.assert_array_equal(ocl.to_host(st), want)


def test_as_strided_past_the_storage_is_refused(ocl):
    st = ocl.empty((4,), "float32", 0)
    with pytest.raises(ValueError, match="past the storage"):
        ocl.as_strided(st, (3,), (2,), 0)


CASTS = [("float32", "int32"), ("float32", "uint8"), ("float64", "int8"), ("float32", "bool"),
         ("int64", "float32"), ("int32", "float16"), ("float32", "bfloat16"), ("bool", "float32"),
         ("float16", "bfloat16"), ("float64", "float16"), ("int64", "int8"), ("uint8", "int64"),
         ("int16", "bool"), ("bfloat16", "float64")]


@pytest.mark.parametrize("src,dst", CASTS)
def test_copy_casts_like_c(ocl, cpu, src, dst):
    """Float to int truncates toward zero (narrow ints wrap), to bool is != 0, float
    narrowing rounds to nearest even; the same answers as the CPU reference."""
    vals = np.array([0.0, -0.0, 1.5, -1.5, 2.5, -2.7, 3.99, 100.0, 255.0, -128.0, 0.1, 1e-3,
                     65504.0, 70000.0 if dst != "float16" else 3.0], np.float64)
    if src in INTS or src == "bool":
        vals = np.trunc(vals) % (2 if src == "bool" else 127)
    a = vals.astype(NP[src])
    want = np.zeros(a.shape, NP[dst])
    cpu.copy_(want, a)
    h = ocl.empty(a.shape, dst, 0)
    ocl.copy_(h, place(ocl, a))
    np.testing.assert_array_equal(ocl.to_host(h).astype(np.float64), want.astype(np.float64))


def test_copy_between_layouts(ocl, rng):
    a = rng.standard_normal((6, 10)).astype(np.float32)
    dst_st = ocl.from_host(np.zeros((10, 6), np.float32), 0)
    dst = ocl.as_strided(dst_st, (6, 10), (1, 6), 0)        # a transposed destination
    ocl.copy_(dst, place(ocl, a, "strided"))
    np.testing.assert_array_equal(ocl.to_host(dst_st), a.T)
    # a broadcast source (stride 0) into a strided view, with a cast
    row = ocl.as_strided(place(ocl, np.arange(10, dtype=np.int64)), (6, 10), (0, 1), 0)
    ocl.copy_(dst, row)
    np.testing.assert_array_equal(ocl.to_host(dst_st), np.broadcast_to(np.arange(10.0), (6, 10)).T)


def test_overlapping_copy_reads_before_writing(ocl):
    """x[1:] = x[:-1] within one storage (the source is read as it was)."""
    st = ocl.from_host(np.arange(10, dtype=np.int32), 0)
    ocl.copy_(ocl.as_strided(st, (9,), (1,), 1), ocl.as_strided(st, (9,), (1,), 0))
    np.testing.assert_array_equal(ocl.to_host(st), [0, 0, 1, 2, 3, 4, 5, 6, 7, 8])
    st = ocl.from_host(np.arange(10, dtype=np.int32), 0)
    ocl.copy_(ocl.as_strided(st, (5,), (2,), 0), ocl.as_strided(st, (5,), (1,), 3))
    np.testing.assert_array_equal(ocl.to_host(st), [3, 1, 4, 3, 5, 5, 6, 7, 7, 9])


@pytest.mark.parametrize("dtype", ALL)
def test_fill(ocl, dtype):
    value = True if dtype == "bool" else (-3 if dtype != "uint8" else 200) if dtype in INTS else -2.5
    st = ocl.from_host(np.zeros((4, 6), NP[dtype]), 0)
    ocl.fill_(ocl.as_strided(st, (4, 3), (6, 2), 0), value)       # strided
    want = np.zeros((4, 6), NP[dtype])
    want[:, ::2] = value
    np.testing.assert_array_equal(ocl.to_host(st), want)
    ocl.fill_(st, value)                                            # contiguous
    np.testing.assert_array_equal(ocl.to_host(st), np.full((4, 6), value, NP[dtype]))


def test_to_host_of_a_view(ocl, rng):
    a = rng.standard_normal((5, 8)).astype(np.float32)
    st = place(ocl, a)
    np.testing.assert_array_equal(ocl.to_host(ocl.as_strided(st, (8, 5), (1, 8), 0)), a.T)
    np.testing.assert_array_equal(ocl.to_host(ocl.as_strided(st, (3, 8), (8, 1), 16)), a[2:])


def test_pool_reuses_memory(ocl, device):
    """Training-style churn: buffers of recurring sizes come back from the pool."""
    for _ in range(3):
        hs = [ocl.empty((1000, 100), "float32", 0) for _ in range(8)]
        del hs
        gc.collect()
    held = device.pool.held_blocks
    for _ in range(20):
        hs = [ocl.empty((1000, 100), "float32", 0) for _ in range(8)]
        del hs
    assert device.pool.held_blocks <= held + 8


def test_out_of_memory_is_clear_and_harmless(ocl, device):
    keep = ocl.from_host(np.arange(1000, dtype=np.float32), 0)
    too_many = device.max_alloc // 4 + 1
    with pytest.raises(OutOfMemoryError, match="out of device memory") as info:
        ocl.empty((too_many,), "float32", 0)
    assert isinstance(info.value, MemoryError)
    np.testing.assert_array_equal(ocl.to_host(keep), np.arange(1000, dtype=np.float32))


def test_failed_pool_allocation_is_reported(ocl, device, monkeypatch):
    """A driver refusing an allocation becomes OutOfMemoryError (the pool's own error
    path, simulated)."""
    import pyopencl as cl

    keep = ocl.from_host(np.ones(10, np.float32), 0)

    class Refusing:
        active_blocks = 3

        def allocate(self, n):
            raise cl.MemoryError("clCreateBuffer", cl.status_code.MEM_OBJECT_ALLOCATION_FAILURE,
                                 "simulated")
    monkeypatch.setattr(device, "_pool", Refusing())
    with pytest.raises(OutOfMemoryError, match="allocating"):
        ocl.empty((100, 100), "float32", 0)
    monkeypatch.undo()
    np.testing.assert_array_equal(ocl.to_host(keep), np.ones(10, np.float32))


def test_synchronize(ocl):
    ocl.synchronize(0)


def test_large_buffers_keep_their_data(ocl, rng):
    """Buffers past the huge-page threshold (advised before first use) hold what is
    written to them, also when the pool hands the block out again."""
    a = rng.standard_normal(3 * 2**20).astype(np.float32)          # 12 MiB
    for _ in range(2):
        h = ocl.from_host(a, 0)
        out = ocl.empty(a.shape, "float32", 0)
        ocl.kernels["neg"](out, h)
        np.testing.assert_array_equal(ocl.to_host(out), -a)
        del h, out
