"""Reductions and scans against the CPU reference: any dims, keepdim, the tie and NaN
rules of argmax/argmin/cummax/cummin, wide accumulators, strided inputs, long rows
(split into parts or chunks), both launch schedules."""
from __future__ import annotations

import numpy as np
import pytest

from _helpers import FLOATS, INTS, NP, assert_close, place, sample

ALL = ("bool", *INTS, *FLOATS)
CASES = [((7, 13), (1,)), ((7, 13), (0,)), ((7, 13), (0, 1)), ((3, 4, 5), (0, 2)),
         ((3, 4, 5), (1,)), ((1,), (0,)), ((0, 5), (0,)), ((5, 0), (1,)), ((2, 3, 4, 5), (1, 3))]


def sum_dtype(dt):
    return dt if dt in FLOATS else "int64"


def reduced(shape, dims, keepdim):
    return tuple(1 if d in dims else n for d, n in enumerate(shape) if keepdim or d not in dims)


def run(ocl, cpu, op, outs, x, layout="contig", **params):
    want = [np.zeros(s, NP[d]) for s, d in outs]
    cpu.kernels[op](*want, x, **params)
    got = [ocl.empty(s, d, 0) for s, d in outs]
    ocl.kernels[op](*got, place(ocl, x, layout), **params)
    return [ocl.to_host(g) for g in got], want


def _dtypes(ocl):
    have = ocl.devices()[0].dtypes
    return [d for d in ALL if d in have]


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("op", ["sum", "prod", "amax", "amin"])
def test_reductions(ocl, cpu, rng, op, dtype):
    if dtype not in _dtypes(ocl):
        pytest.skip("dtype not on this device")
    for shape, dims in CASES:
        if op in ("amax", "amin") and 0 in shape:
            continue                  # the frontend refuses empty max/min
        for keepdim in (False, True):
            x = sample(rng, shape, dtype, "int" if op == "prod" else "normal")
            od = sum_dtype(dtype) if op in ("sum", "prod") else dtype
            (got,), (want,) = run(ocl, cpu, op, [(reduced(shape, dims, keepdim), od)], x,
                                  dims=dims, keepdim=keepdim)
            assert_close(got, want, od, rtol=2e-2 if dtype == "bfloat16" else None,
                         what=f"{op} {dtype} {shape} {dims} keepdim={keepdim}")


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_arg_reductions(ocl, cpu, rng, op, dtype):
    if dtype not in _dtypes(ocl):
        pytest.skip("dtype not on this device")
    for shape, dim in [((7, 13), 1), ((7, 13), 0), ((3, 4, 5), 1), ((1,), 0), ((3, 9000), 1)]:
        for keepdim in (False, True):
            x = sample(rng, shape, dtype, "int")           # many ties: the first one wins
            (got,), (want,) = run(ocl, cpu, op, [(reduced(shape, (dim,), keepdim), "int64")], x,
                                  dim=dim, keepdim=keepdim)
            np.testing.assert_array_equal(got, want, err_msg=f"{op} {dtype} {shape} {dim}")


@pytest.mark.parametrize("op", ["argmax", "argmin", "amax", "amin"])
def test_nan_rule(ocl, cpu, op):
    """A NaN is the extreme; the first NaN's index wins."""
    x = np.array([[1, np.nan, 3, np.nan], [2, 2, 1, 1], [np.nan, 0, 0, np.nan]], np.float32)
    params = {"dim": 1, "keepdim": False} if op.startswith("arg") else {"dims": (1,), "keepdim": False}
    od = "int64" if op.startswith("arg") else "float32"
    (got,), (want,) = run(ocl, cpu, op, [((3,), od)], x, **params)
    assert_close(got, want, od)


@pytest.mark.parametrize("layout", ["strided", "transposed"])
@pytest.mark.parametrize("op", ["sum", "amax", "argmin"])
def test_strided_input(ocl, cpu, rng, op, layout):
    x = sample(rng, (9, 14), "float32")
    for dims in [(0,), (1,), (0, 1)]:
        if op == "argmin":
            if len(dims) > 1:
                continue
            params, out = {"dim": dims[0], "keepdim": False}, (reduced(x.shape, dims, False), "int64")
        else:
            params, out = {"dims": dims, "keepdim": True}, (reduced(x.shape, dims, True), "float32")
        (got,), (want,) = run(ocl, cpu, op, [out], x, layout, **params)
        assert_close(got, want, out[1], what=f"{op} {layout} {dims}")


@pytest.mark.parametrize("op", ["sum", "amax", "argmax", "prod"])
def test_long_rows_are_split(ocl, cpu, rng, schedule, op):
    """Few outputs over many elements: partial results, then a second pass."""
    for shape, dims in [((2**20 + 3,), (0,)), ((3, 200_003), (1,)), ((200_003, 3), (0,))]:
        x = sample(rng, shape, "float32", "int") if op != "prod" else \
            np.where(rng.random(shape) < 1e-4, 2.0, 1.0).astype(np.float32)
        if op == "argmax":
            params, out = {"dim": dims[0], "keepdim": False}, (reduced(shape, dims, False), "int64")
        else:
            params, out = {"dims": dims, "keepdim": False}, (reduced(shape, dims, False), "float32")
        (got,), (want,) = run(ocl, cpu, op, [out], x, **params)
        assert_close(got, want, out[1], what=f"{op} {shape} {schedule}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_column_sums(ocl, rng, dtype):
    """Sums over the outer dims of row-major blocks (kernels/colsum.py on CPUs: a bias
    gradient): a tail past the last 4-vector strip, more rows than one block, rows
    with a gap (a column slice), two reduced dims coalesced; against numpy float64."""
    if dtype not in _dtypes(ocl):
        pytest.skip("dtype not on this device")
    for shape, dims, cols in [((128, 512), (0,), slice(None)), ((1100, 70), (0,), slice(None)),
                              ((5, 41), (0,), slice(1, None)), ((4, 6, 40), (0, 1), slice(None))]:
        x = sample(rng, shape, dtype)
        view = place(ocl, x)
        if cols.start:
            view = ocl.as_strided(view, shape[:-1] + (shape[-1] - 1,), (shape[-1], 1), 1)
            x = x[..., cols]
        out = ocl.empty(x.shape[len(dims):], dtype, 0)
        ocl.kernels["sum"](out, view, dims=dims, keepdim=False)
        want = x.astype(np.float64).sum(axis=dims)
        tol = 2e-5 * np.abs(x).sum(axis=dims).max() if dtype == "float32" else 1e-12
        np.testing.assert_allclose(ocl.to_host(out), want, rtol=0, atol=tol,
                                   err_msg=f"{dtype} {shape} {dims} {cols}")


def test_sum_of_lowp_accumulates_in_float32(ocl, cpu):
    """4096 float16 ones sum to 4096 (a float16 accumulator would stop at 2048)."""
    x = np.ones(4096, np.float16)
    (got,), (want,) = run(ocl, cpu, "sum", [((), "float16")], x, dims=(0,), keepdim=False)
    assert float(got) == float(want) == 4096.0


def test_float32_sum_accuracy(ocl, rng):
    x = rng.standard_normal(3_000_001).astype(np.float32)
    out = ocl.empty((), "float32", 0)
    ocl.kernels["sum"](out, place(ocl, x), dims=(0,), keepdim=False)
    exact = x.astype(np.float64).sum()
    assert abs(float(ocl.to_host(out)) - exact) < 1e-5 * np.abs(x).sum()


# -- scans -----------------------------------------------------------------------------------

SCAN_CASES = [((7,), 0), ((7, 13), 1), ((7, 13), 0), ((2, 3, 4), 1), ((1,), 0), ((0, 3), 1),
              ((4, 0), 1)]


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("op", ["cumsum", "cumprod", "cummax", "cummin"])
def test_scans(ocl, cpu, rng, op, dtype):
    if dtype not in _dtypes(ocl):
        pytest.skip("dtype not on this device")
    for shape, dim in SCAN_CASES:
        for layout in ("contig", "strided"):
            x = sample(rng, shape, dtype, "int")
            if op == "cumprod":
                x = np.where(rng.random(shape) < 0.7, np.ones_like(x), x)
            if op in ("cummax", "cummin"):
                outs = [(shape, dtype), (shape, "int64")]
            else:
                outs = [(shape, sum_dtype(dtype))]
            got, want = run(ocl, cpu, op, outs, x, layout, dim=dim)
            for g, w, (_, d) in zip(got, want, outs):
                assert_close(g, w, d, what=f"{op} {dtype} {shape} {dim} {layout}")


def test_cummax_ties_and_nans(ocl, cpu):
    """Ties take the later index; a NaN sticks and its index is taken."""
    x = np.array([1, 3, 3, 2, np.nan, 5, np.nan, 1], np.float32)
    for op in ("cummax", "cummin"):
        got, want = run(ocl, cpu, op, [((8,), "float32"), ((8,), "int64")], x, dim=0)
        assert_close(got[0], want[0], "float32")
        np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("op", ["cumsum", "cummax", "cumprod"])
def test_long_scans(ocl, cpu, rng, schedule, op):
    """Rows long enough to be cut into chunks (aggregate, prefix, then scan)."""
    for shape, dim in [((2**20 + 3,), 0), ((3, 100_003), 1)]:
        x = sample(rng, shape, "float32", "int")
        if op == "cumprod":
            x = np.where(rng.random(shape) < 1e-4, -1.0, 1.0).astype(np.float32)
        outs = [(shape, "float32"), (shape, "int64")] if op == "cummax" else [(shape, "float32")]
        got, want = run(ocl, cpu, op, outs, x, dim=dim)
        for g, w, (_, d) in zip(got, want, outs):
            assert_close(g, w, d, what=f"{op} {shape} {schedule}")
