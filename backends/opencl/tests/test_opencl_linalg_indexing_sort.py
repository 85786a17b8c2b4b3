"""matmul, gather, scatter_, nonzero, sort and searchsorted against the CPU reference."""
from __future__ import annotations

import numpy as np
import pytest

from _helpers import FLOATS, INTS, NP, assert_close, place, sample

ALL = ("bool", *INTS, *FLOATS)
NUMERIC = (*INTS, *FLOATS)


def _have(ocl, dtype):
    if dtype not in ocl.devices()[0].dtypes:
        pytest.skip("dtype not on this device")


def _run(ocl, cpu, op, outs, ins, layouts=None, out_init=None, **params):
    want = [np.zeros(s, NP[d]) if out_init is None else out_init.copy() for s, d in outs]
    cpu.kernels[op](*want, *ins, **params)
    if out_init is None:
        got = [ocl.empty(s, d, 0) for s, d in outs]
    else:
        got = [place(ocl, out_init)]
    layouts = layouts or ["contig"] * len(ins)
    ocl.kernels[op](*got, *[place(ocl, x, lay) for x, lay in zip(ins, layouts)], **params)
    return [ocl.to_host(g) for g in got], want


# -- matmul ---------------------------------------------------------------------------------

MM_SHAPES = [((), 1, 1, 1), ((), 3, 5, 7), ((), 17, 9, 13), ((2,), 33, 17, 65), ((2, 3), 8, 8, 8),
             ((), 64, 0, 5), ((), 100, 37, 1), ((), 1, 300, 33), ((), 130, 257, 67)]


@pytest.mark.parametrize("dtype", NUMERIC)
def test_matmul(ocl, cpu, rng, schedule, dtype):
    _have(ocl, dtype)
    for batch, m, k, n in MM_SHAPES:
        a = sample(rng, batch + (m, k), dtype)
        b = sample(rng, batch + (k, n), dtype)
        for layouts in (["contig", "contig"], ["strided", "transposed"]):
            (got,), (want,) = _run(ocl, cpu, "matmul", [(batch + (m, n), dtype)], [a, b], layouts)
            rtol = {"float16": 1e-2, "bfloat16": 3e-2, "float32": 1e-4}.get(dtype)
            assert_close(got, want, dtype, rtol=rtol, atol=rtol,
                         what=f"matmul {dtype} {batch} {m}x{k}x{n} {layouts} {schedule}")


# the CPU in-place kernels' (kernels/matmul_direct.py) edges: rows past a 4-row block,
# columns past a 16/8-lane block (the edge kernel) and past a 2-column nt block, k's tail
# after the 8/4-wide vectors, K=1, one row/column, batches
DIRECT_SHAPES = [((), 6, 20, 37), ((3,), 5, 9, 16), ((), 1, 33, 17), ((), 19, 1, 40), ((), 7, 12, 1)]
DIRECT_LAYOUTS = [("contig", "contig"), ("contig", "transposed"), ("transposed", "contig"),
                  ("transposed", "transposed")]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matmul_direct_layouts(ocl, device, rng, dtype):
    """Every layout class of the CPU path (nn: b's rows contiguous, a any strides; nt: both
    k-contiguous; else the packed kernels) against numpy in float64."""
    _have(ocl, dtype)
    old = device.matmul_path
    device.matmul_path = "direct" if device.loop else old
    try:
        for batch, m, k, n in DIRECT_SHAPES:
            a = sample(rng, batch + (m, k), dtype)
            b = sample(rng, batch + (k, n), dtype)
            want = np.matmul(a.astype(np.float64), b.astype(np.float64))
            for la, lb in DIRECT_LAYOUTS:
                out = ocl.empty(batch + (m, n), dtype, 0)
                ocl.kernels["matmul"](out, place(ocl, a, la), place(ocl, b, lb))
                assert_close(ocl.to_host(out), want, dtype, rtol=1e-4 if dtype == "float32" else None,
                             atol=1e-4 if dtype == "float32" else None,
                             what=f"matmul {dtype} {batch} {m}x{k}x{n} {la}/{lb}")
    finally:
        device.matmul_path = old


def test_matmul_direct_views(ocl, device, rng):
    """Offsets and row strides that are no multiple of the vector width (unaligned
    vector loads), a broadcast batch, and a K=0 product (zeros)."""
    old = device.matmul_path
    device.matmul_path = "direct" if device.loop else old
    try:
        big_a = sample(rng, (9, 23), "float32")
        big_b = sample(rng, (21, 41), "float32")
        a = ocl.as_strided(place(ocl, big_a), (8, 20), (23, 1), 24)      # rows 1.., cols 1..
        b = ocl.as_strided(place(ocl, big_b), (20, 35), (41, 1), 44)
        out = ocl.empty((8, 35), "float32", 0)
        ocl.kernels["matmul"](out, a, b)
        want = big_a[1:, 1:21].astype(np.float64) @ big_b[1:, 3:38]
        assert_close(ocl.to_host(out), want, "float32", rtol=1e-5, atol=1e-5, what="offset views")
        bt = ocl.as_strided(place(ocl, big_b), (20, 20), (1, 41), 42)     # big_b[1:21, 1:21].T
        out = ocl.empty((8, 20), "float32", 0)
        ocl.kernels["matmul"](out, a, bt)
        want = big_a[1:, 1:21].astype(np.float64) @ big_b[1:21, 1:21].T
        assert_close(ocl.to_host(out), want, "float32", rtol=1e-5, atol=1e-5, what="offset nt")
        one = sample(rng, (1, 5, 17), "float32")
        many = sample(rng, (3, 17, 16), "float32")
        out = ocl.empty((3, 5, 16), "float32", 0)
        ocl.kernels["matmul"](out, ocl.as_strided(place(ocl, one), (3, 5, 17), (0, 17, 1), 0),
                              place(ocl, many))
        assert_close(ocl.to_host(out), np.matmul(one.astype(np.float64), many), "float32",
                     rtol=1e-5, atol=1e-5, what="broadcast batch")
        out = ocl.empty((4, 16), "float32", 0)
        ocl.kernels["matmul"](out, ocl.empty((4, 0), "float32", 0), ocl.empty((0, 16), "float32", 0))
        assert (ocl.to_host(out) == 0).all()
    finally:
        device.matmul_path = old


def test_matmul_broadcast_batch(ocl, cpu, rng, schedule):
    """A batch dim of stride 0 (the frontend's expand) reads one matrix for every batch."""
    a = sample(rng, (1, 6, 5), "float32")
    b = sample(rng, (4, 5, 3), "float32")
    want = np.matmul(np.broadcast_to(a, (4, 6, 5)), b)
    ha = ocl.as_strided(place(ocl, a), (4, 6, 5), (0, 5, 1), 0)
    out = ocl.empty((4, 6, 3), "float32", 0)
    ocl.kernels["matmul"](out, ha, place(ocl, b))
    assert_close(ocl.to_host(out), want, "float32")


def test_matmul_1024(ocl, rng):
    a = rng.standard_normal((1024, 1024)).astype(np.float32)
    b = rng.standard_normal((1024, 1024)).astype(np.float32)
    out = ocl.empty((1024, 1024), "float32", 0)
    ocl.kernels["matmul"](out, place(ocl, a), place(ocl, b))
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(ocl.to_host(out), want, rtol=1e-3, atol=1e-3)


# -- gather / scatter_ -----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL)
def test_gather(ocl, cpu, rng, dtype):
    _have(ocl, dtype)
    for shape, ishape, dim in [((5,), (8,), 0), ((4, 6), (7, 6), 0), ((4, 6), (4, 9), 1),
                               ((3, 4, 5), (3, 2, 5), 1), ((4, 6), (0, 6), 0)]:
        x = sample(rng, shape, dtype)
        idx = rng.integers(0, shape[dim], ishape).astype(np.int64)
        for layouts in (["contig", "contig"], ["transposed", "strided"]):
            (got,), (want,) = _run(ocl, cpu, "gather", [(ishape, dtype)], [x, idx], layouts, dim=dim)
            assert_close(got, want, dtype, what=f"gather {dtype} {shape} {ishape} {dim}")


def test_gather_index_smaller_than_input(ocl, rng):
    """index may be smaller than x in the other dims (PyTorch allows it); checked
    against a plain loop, since numpy's take_along_axis refuses that shape."""
    x = rng.standard_normal((4, 6, 5)).astype(np.float32)
    idx = rng.integers(0, 6, (3, 9, 2)).astype(np.int64)
    want = np.empty(idx.shape, np.float32)
    for i, j, k in np.ndindex(*idx.shape):
        want[i, j, k] = x[i, idx[i, j, k], k]
    out = ocl.empty(idx.shape, "float32", 0)
    ocl.kernels["gather"](out, place(ocl, x, "strided"), place(ocl, idx), dim=1)
    np.testing.assert_array_equal(ocl.to_host(out), want)


@pytest.mark.parametrize("reduce", ["none", "sum", "prod", "amax", "amin"])
@pytest.mark.parametrize("dtype", ALL)
def test_scatter(ocl, cpu, rng, dtype, reduce):
    """Duplicate indices on purpose: 'none' keeps the last write, the others fold in
    index order, exactly as on the CPU."""
    _have(ocl, dtype)
    for shape, ishape, dim in [((5,), (8,), 0), ((4, 6), (7, 6), 0), ((4, 6), (4, 9), 1),
                               ((3, 4, 5), (3, 2, 5), 1), ((50,), (5000,), 0)]:
        base = sample(rng, shape, dtype)
        idx = rng.integers(0, shape[dim], ishape).astype(np.int64)
        src = sample(rng, ishape, dtype)
        for layouts in (["contig", "contig"], ["transposed", "strided"]):
            (got,), (want,) = _run(ocl, cpu, "scatter_", [(shape, dtype)], [idx, src], layouts,
                                   out_init=base, dim=dim, reduce=reduce)
            assert_close(got, want, dtype, what=f"scatter_ {reduce} {dtype} {shape} {ishape}")


def test_scatter_into_a_view(ocl, cpu, rng):
    """index_add_ on a strided view scatters through it."""
    base = rng.standard_normal((6, 8)).astype(np.float32)
    st = place(ocl, base)
    view = ocl.as_strided(st, (6, 4), (8, 2), 1)
    idx = np.array([[0, 1, 0, 3], [5, 5, 2, 0]], np.int64)
    src = rng.standard_normal((2, 4)).astype(np.float32)
    ocl.kernels["scatter_"](view, place(ocl, idx), place(ocl, src), dim=0, reduce="sum")
    want = base.copy()
    np.add.at(want[:, 1::2], (idx, np.arange(4)[None, :].repeat(2, 0)), src)
    assert_close(ocl.to_host(st), want, "float32")


# -- nonzero ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL)
def test_nonzero(ocl, cpu, rng, dtype):
    _have(ocl, dtype)
    for shape in [(), (0,), (1,), (7, 13), (3, 4, 5), (2**20 + 3,)]:
        x = sample(rng, shape, dtype, "int")
        if dtype in FLOATS and x.size > 2:
            x.reshape(-1)[:2] = [np.nan, -0.0]
        n = int(np.count_nonzero(x))
        for layout in ("contig", "transposed"):
            (got,), (want,) = _run(ocl, cpu, "nonzero", [((n, x.ndim), "int64")], [x], [layout])
            np.testing.assert_array_equal(got, want, err_msg=f"nonzero {dtype} {shape}")


def test_nonzero_grid(ocl, cpu, rng, schedule):
    x = (rng.random((3, 70001)) < 0.3).astype(np.float32)
    n = int(np.count_nonzero(x))
    (got,), (want,) = _run(ocl, cpu, "nonzero", [((n, 2), "int64")], [x])
    np.testing.assert_array_equal(got, want)


# -- sort / searchsorted ---------------------------------------------------------------------

SORT_CASES = [((7,), 0), ((3, 5), 1), ((3, 5), 0), ((2, 9, 4), 1), ((1000,), 0), ((5000,), 0),
              ((3, 10000), 1), ((0, 3), 1), ((1,), 0)]


@pytest.mark.parametrize("dtype", ALL)
def test_sort(ocl, cpu, rng, dtype):
    """Stable in both directions (indices included), NaN largest, -0.0 == 0.0."""
    _have(ocl, dtype)
    for shape, dim in SORT_CASES:
        x = sample(rng, shape, dtype, "int")
        if dtype in FLOATS and x.size > 3:
            x.reshape(-1)[rng.integers(0, x.size, 3)] = np.nan
            x.reshape(-1)[rng.integers(0, x.size, 3)] = -0.0
        for descending in (False, True):
            for layout in ("contig", "strided"):
                got, want = _run(ocl, cpu, "sort", [(shape, dtype), (shape, "int64")], [x],
                                 [layout], dim=dim, descending=descending)
                what = f"sort {dtype} {shape} {dim} descending={descending} {layout}"
                np.testing.assert_array_equal(got[1], want[1], err_msg=what)
                np.testing.assert_array_equal(got[0].view(np.uint8), want[0].view(np.uint8),
                                              err_msg=what)


def test_sort_large_and_grid(ocl, cpu, rng, schedule):
    for shape, dim in [((2**20 + 3,), 0), ((5, 3000), 1)]:
        x = rng.integers(-1000, 1000, shape).astype(np.float32)
        for descending in (False, True):
            got, want = _run(ocl, cpu, "sort", [(shape, "float32"), (shape, "int64")], [x],
                             dim=dim, descending=descending)
            np.testing.assert_array_equal(got[1], want[1])
            np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize("dtype", ALL)
def test_searchsorted(ocl, cpu, rng, dtype):
    _have(ocl, dtype)
    for B, M, N in [(1, 1, 1), (3, 10, 7), (2, 1000, 300), (1, 0, 4), (2, 5, 0)]:
        seq = np.sort(sample(rng, (B, M), dtype, "int"), axis=1)
        vals = sample(rng, (B, N), dtype, "int")
        if dtype in FLOATS and M > 2:
            seq[:, -1] = np.nan
            vals.reshape(-1)[:1] = np.nan
        for right in (False, True):
            for layouts in (["contig", "contig"], ["strided", "transposed"]):
                (got,), (want,) = _run(ocl, cpu, "searchsorted", [((B, N), "int64")], [seq, vals],
                                       layouts, right=right)
                np.testing.assert_array_equal(got, want, err_msg=f"searchsorted {dtype} {B} {M} {N}")
