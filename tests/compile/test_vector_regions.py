"""Regions that cast into a float type compute on vector types (OpenCL): GELU's forward
and backward with dropout's bool mask, integer and float32 values cast into float64
before a math builtin. Each is one generated kernel and equals eager and a float64
reference."""
import math

import numpy as np
import pytest

import dispatchtorch as torch
from tests.compile.compile_helpers import DEVICES, _close, _entries, _np

_erf = np.vectorize(math.erf)


def _gelu64(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _mask(shape, dev):
    return torch.tensor(np.random.default_rng(1).random(shape) < 0.8, device=dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_gelu_times_a_bool_mask_is_one_kernel(dev):
    def f(x, b, keep):
        return torch.nn.functional.gelu(x + b) * keep.to(torch.float32) * 1.25

    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((12, 83), dtype=np.float32), device=dev)
    b = torch.tensor(rng.standard_normal(83, dtype=np.float32), device=dev)
    keep = _mask((12, 83), dev)
    cf = torch.compile(f)
    cf(x, b, keep)
    got = cf(x, b, keep)
    _close(got, f(x, b, keep), dev)
    want = _gelu64(_np(x).astype(np.float64) + _np(b)) * _np(keep) * 1.25
    np.testing.assert_allclose(_np(got), want, rtol=2e-6, atol=2e-6)
    entry, = _entries(cf)
    if dev == "opencl":                 # (the CPU runs gelu as one kernel of its own)
        assert entry.forward.n_regions == 1 and entry.launches()[1] == 1


@pytest.mark.parametrize("dev", DEVICES)
def test_gelu_and_dropout_backward_fuse_and_equal_eager(dev):
    data = np.random.default_rng(2).standard_normal((9, 67), dtype=np.float32)

    def f(x):
        return torch.nn.functional.dropout(torch.nn.functional.gelu(x), 0.2)

    cf = torch.compile(f)
    results = []
    for fn in (f, cf, cf):                  # eager, the capture, a replay
        torch.manual_seed(5)
        x = torch.tensor(data, device=dev, requires_grad=True)
        y = fn(x)
        y.sum().backward()
        results.append((y, x.grad))
    for y, g in results[1:]:
        _close(y, results[0][0], dev)
        _close(g, results[0][1], dev)
    x64, kept = data.astype(np.float64), _np(results[2][0]) != 0
    dgelu = 0.5 * (1.0 + _erf(x64 / math.sqrt(2.0))) + x64 * np.exp(-0.5 * x64 * x64) \
        / math.sqrt(2.0 * math.pi)
    np.testing.assert_allclose(_np(results[2][1]), dgelu * kept / 0.8, rtol=2e-6, atol=2e-6)
    entry, = _entries(cf)
    if dev == "opencl":
        # the mask's bool -> float cast, GELU's and dropout's backward rules: one kernel
        assert entry.backward.n_regions == 1
        assert entry.backward.n_eager_kernels >= 10 and entry.backward.n_kernels == 1


@pytest.mark.parametrize("dev", DEVICES)
def test_integers_and_float32_cast_into_float64_before_exp(dev):
    if dev == "opencl" and not _has_fp64():
        pytest.skip("the OpenCL device has no float64")

    def f(i, x):
        return torch.exp(i.to(torch.float64) + x.to(torch.float64))

    rng = np.random.default_rng(3)
    i = torch.tensor(rng.integers(-3, 3, 1003).astype(np.int32), device=dev)
    x = torch.tensor(rng.standard_normal(1003, dtype=np.float32), device=dev)
    cf = torch.compile(f)
    cf(i, x)
    got = cf(i, x)
    _close(got, f(i, x), dev)
    want = np.exp(_np(i).astype(np.float64) + _np(x).astype(np.float64))
    np.testing.assert_allclose(_np(got), want, rtol=1e-13, atol=0)
    entry, = _entries(cf)
    assert entry.forward.n_regions == 1 and entry.launches() == (4, 1)


def _has_fp64():
    from dispatchtorch.dispatch import get_backend
    return "float64" in get_backend("opencl").devices[0].dtypes
