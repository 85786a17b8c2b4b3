"""Putting numpy values on the device in a chosen layout, and comparing kernels with
the CPU reference."""
from __future__ import annotations

import ml_dtypes
import numpy as np

NP = {"bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32,
      "int64": np.int64, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16,
      "float32": np.float32, "float64": np.float64}
FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("uint8", "int8", "int16", "int32", "int64")
SENTINEL = 77


def place(ocl, a, layout="contig"):
    """A device handle holding a's values. layouts: contig; strided (every other
    element of a larger storage, at an offset); transposed (the storage holds a.T);
    broadcast (the storage holds a[:1], viewed with stride 0 along dim 0 - a's rows
    must be equal)."""
    a = np.asarray(a)
    if layout == "contig" or a.ndim == 0 or a.size == 0:
        return ocl.from_host(np.ascontiguousarray(a), 0)
    if layout == "strided":
        big = np.full(a.shape[:-1] + (2 * a.shape[-1] + 1,), SENTINEL, a.dtype)
        big[..., 1::2] = a
        st = ocl.from_host(big, 0)
        strides = tuple(s // a.itemsize for s in big.strides[:-1]) + (2,)
        return ocl.as_strided(st, a.shape, strides, 1)
    if layout == "transposed":
        t = np.ascontiguousarray(a.T)
        strides = tuple(s // a.itemsize for s in t.strides)[::-1]
        return ocl.as_strided(ocl.from_host(t, 0), a.shape, strides, 0)
    if layout == "broadcast":
        assert (a == a[:1]).all() or a.dtype.kind == "f"
        st = ocl.from_host(np.ascontiguousarray(a[:1]), 0)
        strides = (0,) + tuple(s // a.itemsize for s in a[:1].strides[1:])
        return ocl.as_strided(st, a.shape, strides, 0)
    raise ValueError(layout)


def out_handle(ocl, shape, dtype, layout="contig"):
    """(handle, storage) for an output: contig, or a strided view (every other element,
    the gaps holding SENTINEL so stray writes show)."""
    if layout == "contig" or not shape or 0 in shape:
        h = ocl.empty(shape, dtype, 0)
        return h, h
    big = np.full(shape[:-1] + (2 * shape[-1] + 1,), SENTINEL, NP[dtype])
    st = ocl.from_host(big, 0)
    strides = tuple(s // big.itemsize for s in big.strides[:-1]) + (2,)
    return ocl.as_strided(st, shape, strides, 1), st


def check_gaps(ocl, storage, shape):
    """The elements of a strided output's storage that the view does not cover are
    untouched."""
    if storage is None or not shape or 0 in shape:
        return
    full = ocl.to_host(storage)
    gaps = np.concatenate([full[..., 0:1], full[..., 2::2]], axis=-1)
    assert (gaps == np.array(SENTINEL).astype(full.dtype)).all(), \
        "a kernel wrote outside its output view"


def assert_close(got, want, dtype, rtol=None, atol=None, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if dtype not in FLOATS:
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    tol = {"float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "float32": (2e-5, 1e-6),
           "float64": (1e-11, 1e-13)}[dtype]
    rtol = tol[0] if rtol is None else rtol
    atol = tol[1] if atol is None else atol
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                               atol=atol, equal_nan=True, err_msg=what)


def sample(rng, shape, dtype, kind="normal"):
    """Values for a dtype: small integers, bools, or floats (kind 'unit' for (-1, 1),
    'pos' for positive, 'int' for integer-valued floats)."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in INTS:
        lo = 0 if dtype == "uint8" else -6
        return rng.integers(lo, 7, shape).astype(NP[dtype])
    if kind == "unit":
        v = rng.uniform(-0.95, 0.95, shape)
    elif kind == "pos":
        v = rng.uniform(0.1, 4, shape)
    elif kind == "int":
        v = rng.integers(-4, 5, shape).astype(np.float64)
    else:
        v = rng.standard_normal(shape) * 2
    return np.asarray(v).astype(NP[dtype])
