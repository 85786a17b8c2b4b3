"""where_bits.py with a broadcast condition (attention's where(dead_rows, 0, out): a
(L, 1) condition broadcast to (B, H, L, D)): the condition is compacted before its
mask is made, and the result is numpy's np.where bit for bit (NaN payloads, -0.0),
for +0 branches given as 0-d or broadcast values and for the general select."""
import numpy as np
import pytest

from dispatchtorch_cpu import where_bits

SPECIAL = [np.nan, -np.inf, np.inf, 0.0, -0.0, 1.5, -2.25, 1e-40]


def _data(shape, dtype, seed):
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    x.reshape(-1)[:len(SPECIAL)] = SPECIAL
    return x


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("cond_shape", [(64, 1), (1, 4, 64, 1), (4, 1, 1), (64, 16), (1, 1, 1, 1)])
@pytest.mark.parametrize("branch", ["zero_0d", "zero_broadcast", "minus_zero", "tensor"])
@pytest.mark.parametrize("truth", [0.0, 0.3, 1.0])
def test_broadcast_condition_equals_numpys_where(dtype, cond_shape, branch, truth):
    shape = (8, 4, 64, 16)
    b = _data(shape, dtype, 1)
    c = np.random.default_rng(2).random(cond_shape) < truth
    cond = np.broadcast_to(c, shape)
    if branch == "tensor":
        a = _data(shape, dtype, 3)
    else:
        value = np.array(-0.0 if branch == "minus_zero" else 0.0, dtype)
        a = value if branch == "zero_0d" else np.broadcast_to(value, shape)
    out = np.empty(shape, dtype)
    assert where_bits.where(out, cond, a, b)
    want = np.where(cond, a, b)
    bits = f"u{out.itemsize}"
    np.testing.assert_array_equal(out.view(bits), want.view(bits))


def test_compact_keeps_full_conditions_and_small_arrays():
    full = np.random.default_rng(0).random((8, 4, 64, 16)) < 0.5
    assert where_bits._compact(full) is full
    small = np.broadcast_to(np.array([[True], [False]]), (2, 16))
    assert where_bits._compact(small) is small            # under COMPACT_MIN elements
    rows = np.broadcast_to(np.zeros((64, 1), bool), (8, 4, 64, 16))
    got = where_bits._compact(rows)
    assert got.shape == (1, 1, 64, 16) and got.flags.c_contiguous
