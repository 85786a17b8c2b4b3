"""threaded.linear with a 3-D (batch, steps, features) input: one GEMM over all rows
through blas_threads.py's choice (as a 2-D input), the values float64's and PyTorch's;
non-contiguous inputs keep the single-threaded kernel."""
import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch_cpu.blas_threads import BLAS
from dispatchtorch_cpu.backend import CPUBackend

KERNELS = CPUBackend.kernels


@pytest.fixture
def two_threads():
    old = dt.get_num_threads()
    dt.set_num_threads(2)
    yield
    dt.set_num_threads(old)


def _inputs(shape, out_f, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((out_f, shape[-1])).astype(np.float32)
    b = rng.standard_normal(out_f).astype(np.float32)
    return x, w, b


def test_batched_rows_go_through_the_blas_choice_as_one_gemm(two_threads):
    x, w, b = _inputs((32, 64, 64), 256)
    out = np.empty((32, 64, 256), np.float32)
    want = x.astype(np.float64) @ w.astype(np.float64).T + b
    for _ in range(5):                  # pool-path reference calls, then threaded ones
        out[...] = np.nan
        KERNELS["linear"](out, x, w, b)
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)
    key = (("linear", (2048, 64), (256, 64), "f"), 2)
    assert BLAS.pool_calls.get(key, 0) >= 1


def test_non_contiguous_input_keeps_the_plain_kernel(two_threads):
    x, w, b = _inputs((64, 32, 64), 256, seed=1)
    xt = x.transpose(1, 0, 2)                       # (32, 64, 64), not contiguous
    out = np.empty((32, 64, 256), np.float32)
    KERNELS["linear"](out, xt, w, b)
    np.testing.assert_allclose(out, xt.astype(np.float64) @ w.astype(np.float64).T + b,
                               rtol=1e-5, atol=1e-4)
    assert (("linear", xt.shape, w.shape, "f"), 2) not in BLAS.pool_calls


def test_transformer_shaped_linear_matches_pytorch(two_threads):
    torch = pytest.importorskip("torch")
    x, w, b = _inputs((32, 64, 64), 192, seed=2)
    got = dt.nn.functional.linear(dt.tensor(x), dt.tensor(w), dt.tensor(b)).numpy()
    want = torch.nn.functional.linear(torch.tensor(x), torch.tensor(w), torch.tensor(b)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
