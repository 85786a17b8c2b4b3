"""dropout's CPU kernel (composites.dropout: x * mask * scale in one buffer) gives the bits
of the row's decomposition, on one thread and on the pool, for strided inputs and half
dtypes; the backward without a graph runs the same row and equals g * mask * scale."""
import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch.ops.nn_ops.embedding import DROPOUT, _dropout
from dispatchtorch_cpu import parallel as P

rng = np.random.default_rng(11)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(9,), (P.THRESHOLD // 500 + 3, 500)])
def test_kernel_equals_the_decomposition_bit_for_bit(shape, dtype, threads):
    xn = rng.standard_normal(shape).astype(np.float32)
    x = dt.from_numpy(xn).to(getattr(dt, dtype))
    mask = dt.from_numpy(rng.random(shape) < 0.7)
    with dt.no_grad():
        for xs, ms in [(x, mask), (x.flip(0), mask.flip(0))]:
            got = DROPOUT(xs, ms, scale=1 / 0.7).float().numpy()
            want = _dropout(xs, ms, 1 / 0.7).float().numpy()
            assert np.array_equal(got, want)
            assert np.array_equal(np.signbit(got), np.signbit(want))   # -0.0 where dropped


def test_backward_is_grad_times_mask_times_scale(threads):
    shape = (P.THRESHOLD // 400 + 1, 400)
    x = dt.from_numpy(rng.standard_normal(shape).astype(np.float32)).requires_grad_()
    dt.manual_seed(4)
    y = dt.nn.functional.dropout(x, 0.25)
    keep = (y.detach().numpy() != 0)
    g = rng.standard_normal(shape).astype(np.float32)
    y.backward(dt.from_numpy(g))
    np.testing.assert_array_equal(x.grad.numpy(), (g * keep) * np.float32(1 / 0.75))
    np.testing.assert_array_equal(y.detach().numpy(), (x.detach().numpy() * keep) * np.float32(1 / 0.75))
