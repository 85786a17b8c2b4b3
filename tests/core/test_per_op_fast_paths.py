"""The per-op fast paths give the general paths' results: `x[a:b:c]` on dim 0 (numpy's
own slice as the view's handle when the bounds are plain ints) and `a + b` (one shape
comparison, the output wrapped inline), checked against numpy (an independent answer)
and against the same op taken through the general machinery."""
import itertools

import numpy as np
import pytest

import dispatchtorch as dt

rng = np.random.default_rng(5)
BOUNDS = [None, 0, 2, -3, 9, 100, -100]


@pytest.mark.parametrize("step", [None, 1, 2, 3, np.int64(2)])
def test_slices_on_dim_0_match_numpy_and_share_memory(step):
    base = rng.standard_normal((10, 3)).astype(np.float32)
    fortran = np.asfortranarray(base)
    for x, ref in ((dt.tensor(base), base), (dt.tensor(base)[1:], base[1:]),
                   (dt.tensor(fortran.T).t(), fortran)):                   # a strided view
        for start, stop in itertools.product(BOUNDS, BOUNDS):
            key = slice(start, stop, step)
            v = x[key]
            want = ref[key]
            assert tuple(v.shape) == want.shape, key
            np.testing.assert_array_equal(v.numpy(), want)
            assert tuple(v.stride()) == tuple(s // 4 for s in want.strides) or want.size == 0
            if want.size:            # the same memory, at numpy's offset
                assert np.shares_memory(v.numpy(), x.numpy())
                assert v._offset - x._offset == (want.ctypes.data - ref.ctypes.data) // 4


def test_slice_of_a_slice_writes_through_and_counts_versions():
    x = dt.arange(10.0)
    v = x[2:8][1::2]
    np.testing.assert_array_equal(v.numpy(), np.arange(10.0)[2:8][1::2])
    before = x._version
    v.add_(100)
    np.testing.assert_array_equal(x.numpy()[[3, 5, 7]], [103, 105, 107])
    assert x._version == before + 1


def test_slice_errors_and_non_int_bounds():
    x = dt.arange(6.0)
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::0]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]
    np.testing.assert_array_equal(x[True:4].numpy(), np.arange(6.0)[1:4])     # bool bound
    np.testing.assert_array_equal(x[np.int64(1):np.int32(5)].numpy(), np.arange(6.0)[1:5])


def test_slice_records_its_gradient():
    x = dt.arange(8.0, requires_grad=True)
    (x[1:7:2] * dt.tensor([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 1, 0, 2, 0, 3, 0, 0])


def test_binary_same_shape_broadcast_scalar_and_subclass_operands():
    a_np = rng.standard_normal((4, 3)).astype(np.float32)
    b_np = rng.standard_normal((4, 3)).astype(np.float32)
    row = rng.standard_normal(3).astype(np.float32)
    a, b = dt.tensor(a_np), dt.tensor(b_np)
    np.testing.assert_array_equal((a + b).numpy(), a_np + b_np)
    np.testing.assert_array_equal((a + dt.tensor(row)).numpy(), a_np + row)
    np.testing.assert_array_equal((dt.tensor(row) - a).numpy(), row - a_np)
    np.testing.assert_array_equal((a * 2.5).numpy(), a_np * np.float32(2.5))
    np.testing.assert_array_equal((3 - a).numpy(), np.float32(3) - a_np)
    p = dt.nn.Parameter(dt.tensor(a_np))                  # a Tensor subclass
    np.testing.assert_array_equal((p + b).detach().numpy(), a_np + b_np)
    np.testing.assert_array_equal((b + p).detach().numpy(), a_np + b_np)
    mixed = dt.tensor(a_np) + dt.tensor(b_np.astype(np.float64))        # promotion
    assert mixed.dtype == dt.float64
    np.testing.assert_array_equal(mixed.numpy(), a_np.astype(np.float64) + b_np.astype(np.float64))
    r = a + b
    assert r._stride is None and r._storage is None and r.grad_fn is None


def test_binary_records_gradients_and_rejects_foreign_operands():
    a = dt.tensor([1.0, 2.0], requires_grad=True)
    b = dt.tensor([3.0, 4.0], requires_grad=True)
    (a * b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 2.0])
    with pytest.raises(TypeError):
        a + "x"
    with pytest.raises(RuntimeError, match="add"):
        dt.ones(3) + dt.ones(4)
