"""Regression tests for core bugs the conformance cases found (each compared with a
hand-computed or numpy answer; PyTorch 2.x behaves as asserted)."""
import math

import ml_dtypes
import numpy as np
import pytest

import dispatchtorch as torch


def test_composites_of_bool_and_int_inputs_compute_in_float():
    r = torch.sigmoid(torch.tensor([True, False]))
    assert r.dtype is torch.float32
    np.testing.assert_allclose(r.numpy(), [1 / (1 + math.e ** -1), 0.5], rtol=1e-6)
    assert torch.rsqrt(torch.tensor([4, 16])).tolist() == [0.5, 0.25]


def test_half_precision_composites_round_once():
    x = np.linspace(-8, 8, 4001).astype(np.float16)
    r = torch.sigmoid(torch.tensor(x)).numpy()
    x32 = x.astype(np.float32)
    once = (np.float32(1) / (np.float32(1) + np.exp(-x32))).astype(np.float16)
    assert np.array_equal(r, once)        # computed in float32, rounded to float16 once
    steps = (np.float16(1) / (np.float16(1) + np.exp(-x))).astype(np.float16)
    assert not np.array_equal(r, steps)   # (rounding after every step differs somewhere)


def test_relu_passes_nan_through():
    r = torch.relu(torch.tensor([float("nan"), -1.0, 2.0]))
    assert math.isnan(r[0].item()) and r[1:].tolist() == [0.0, 2.0]


def test_square_of_bool_is_int64():
    r = torch.square(torch.tensor([True, False]))
    assert r.dtype is torch.int64 and r.tolist() == [1, 0]


def test_add_alpha_keeps_bool():
    a, b = torch.tensor([False, False, True]), torch.tensor([True, False, False])
    r = torch.add(a, b, alpha=2)
    assert r.dtype is torch.bool and r.tolist() == [True, False, True]


def test_floor_divide_by_a_python_number():
    r = torch.floor_divide(torch.tensor([7.0, -7.0, 0.5]), 2)
    assert r.tolist() == [3.0, -4.0, 0.0]
    assert (torch.tensor([7.5]) // 2.0).tolist() == [3.0]


def test_round_with_decimals():
    x = torch.tensor([9.2421875, 65504.0], dtype=torch.float16)
    r = torch.round(x, decimals=2)
    # scaled in float32: no overflow of 65504 * 100, and 924.2 rounds as in float32
    want = (np.round(x.numpy().astype(np.float32) * 100) / 100).astype(np.float16)
    assert np.array_equal(r.numpy(), want) and math.isfinite(r[1].item())
    with pytest.raises(NotImplementedError):
        torch.round(torch.tensor([1, 2]), decimals=1)
    assert torch.round(torch.tensor([1, 2])).tolist() == [1, 2]


def test_shifts_reject_bool_and_dtype_errors_are_not_implemented():
    t = torch.tensor([True])
    with pytest.raises(NotImplementedError, match="\"lshift_cpu\" not implemented for 'Bool'"):
        torch.bitwise_left_shift(t, t)
    with pytest.raises(NotImplementedError):
        torch.bitwise_and(torch.tensor([1.0]), torch.tensor([1.0]))
    assert torch.bitwise_left_shift(torch.tensor([3], dtype=torch.int8), 2).tolist() == [12]


def test_integer_fmod_by_zero_raises_before_any_kernel():
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        torch.fmod(torch.tensor([5, 6]), torch.tensor([2, 0]))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        torch.tensor([5]).fmod_(0)
    assert torch.fmod(torch.tensor([-7, 7]), 3).tolist() == [-1, 1]


def test_prod():
    x = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)
    t = torch.tensor(x)
    assert torch.prod(t).item() == pytest.approx(float(np.prod(x)))
    assert t.prod(1, keepdim=True).tolist() == np.prod(x, 1, keepdims=True).tolist()
    assert torch.prod(torch.tensor([2, 3], dtype=torch.int8)).dtype is torch.int64
    with pytest.raises(TypeError):
        torch.prod(t, (0, 1))


def test_half_precision_mean_accumulates_in_float32():
    r = torch.mean(torch.ones(100_000, dtype=torch.float16))
    assert r.dtype is torch.float16 and r.item() == 1.0


def test_reductions_of_empty_tensors_raise_as_pytorch():
    e = torch.zeros(0, 3)
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        torch.amax(e)
    with pytest.raises(IndexError):
        torch.amin(e, 0)
    assert torch.amax(e, 1).shape == (0,)
    with pytest.raises(IndexError):
        torch.argmax(e)


def test_argmax_rejects_bool_but_max_with_dim_accepts_it():
    b = torch.tensor([[True, False], [False, False]])
    with pytest.raises(RuntimeError, match="bool"):
        torch.argmax(b)
    values, indices = torch.max(b, 0)
    assert values.tolist() == [True, False] and indices.tolist() == [0, 0]


def test_all_any_of_uint8_return_uint8():
    x = torch.tensor([[0, 3], [1, 2]], dtype=torch.uint8)
    assert torch.all(x, 1).dtype is torch.uint8 and torch.all(x, 1).tolist() == [0, 1]
    assert torch.any(x).dtype is torch.uint8 and torch.any(x).item() == 1
    assert torch.all(torch.tensor([1, 2])).dtype is torch.bool


def test_fill_out_of_range_raises():
    with pytest.raises(RuntimeError, match="without overflow"):
        torch.zeros(2, dtype=torch.uint8).fill_(-1.5)
    with pytest.raises(RuntimeError, match="without overflow"):
        torch.zeros(2, dtype=torch.int8).fill_(200)
    assert torch.zeros(2, dtype=torch.int8).fill_(-1.5).tolist() == [-1, -1]


def test_cat_of_nothing_is_a_value_error():
    with pytest.raises(ValueError):
        torch.cat([])


def test_index_bounds_and_error_types_follow_pytorch():
    x = torch.arange(12.0).reshape(3, 4)
    with pytest.raises(RuntimeError, match="out of bounds"):
        torch.gather(x, 0, torch.tensor([[-1]]))
    with pytest.raises(RuntimeError, match="out of bounds"):
        torch.gather(x, 0, torch.tensor([[3]]))
    with pytest.raises(RuntimeError, match="out of bounds"):
        torch.scatter(x, 0, torch.tensor([[-1]]), 1.0)
    with pytest.raises(RuntimeError, match="out of bounds"):
        x.clone().index_add_(0, torch.tensor([-1]), x[:1])
    with pytest.raises(IndexError):
        torch.index_select(x, 0, torch.tensor([-1]))
    assert torch.take(x, torch.tensor([-1])).tolist() == [11.0]        # take wraps negatives
    assert x[torch.tensor([-1])].tolist() == [[8.0, 9.0, 10.0, 11.0]]


def test_gather_and_scatter_with_an_index_smaller_than_the_input():
    x = np.arange(20.0).reshape(4, 5)
    idx = np.array([[0, 2], [1, 4]])                          # (2, 2) into a (4, 5)
    r = torch.gather(torch.tensor(x), 1, torch.tensor(idx))
    assert r.tolist() == [[0.0, 2.0], [6.0, 9.0]]
    s = torch.scatter(torch.zeros(4, 5), 1, torch.tensor(idx), torch.ones(3, 3))
    want = np.zeros((4, 5))
    want[0, [0, 2]] = 1
    want[1, [1, 4]] = 1
    assert s.tolist() == want.tolist()


def test_empty_views_with_an_offset_past_the_end():
    e = torch.zeros(0, 3)
    assert e[:, 2].shape == (0,)
    rows, cols = torch.nonzero(e, as_tuple=True)
    assert rows.shape == (0,) and cols.shape == (0,)


def test_zero_dim_tensors_view_and_scatter():
    s = torch.tensor(2.5)
    assert s.view(1).tolist() == [2.5] and s.reshape(1, 1).tolist() == [[2.5]]
    assert torch.tensor([7]).view(()).item() == 7
    r = torch.scatter(torch.tensor(1.0), 0, torch.tensor(0), torch.tensor(4.0))
    assert r.shape == () and r.item() == 4.0
    r = torch.scatter_add(torch.tensor(1.0), 0, torch.tensor(0), torch.tensor(4.0))
    assert r.item() == 5.0


def test_bfloat16_host_values_survive():
    x = np.array([1.5, -2.25], ml_dtypes.bfloat16)
    assert torch.tensor(x).float().tolist() == [1.5, -2.25]


def _ulps(actual, truth):
    """Error in float16 units in the last place of the true value."""
    ulp = np.spacing(np.abs(truth).astype(np.float16)).astype(np.float64)
    return np.max(np.abs(actual.astype(np.float64) - truth) / ulp)


def test_nn_ops_in_half_precision_round_once():
    import dispatchtorch.nn.functional as F
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, (6, 1000)).astype(np.float16)
    x64 = x.astype(np.float64)
    shifted = x64 - x64.max(1, keepdims=True)
    truth = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    assert _ulps(F.log_softmax(torch.tensor(x), 1).numpy(), truth) <= 1.0   # half steps: > 1
    mean, var = rng.uniform(-1, 1, 1000).astype(np.float16), rng.uniform(0.5, 2, 1000).astype(np.float16)
    bn = F.batch_norm(torch.tensor(x), torch.tensor(mean), torch.tensor(var))
    truth = (x64 - mean.astype(np.float64)) / np.sqrt(var.astype(np.float64) + 1e-5)
    assert bn.dtype is torch.float16 and _ulps(bn.numpy(), truth) <= 1.0    # half steps: 13
