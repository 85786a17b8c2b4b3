"""Rules that differed from PyTorch only for an inf / NaN incoming gradient or in the
sign of a zero, found by tools/special_values.py (docs/special-values.md): xlog1py at
a = 0 (derivatives.yaml's `xlog1py(g, b)` masked where b <= -1, so inf * 0 is NaN),
softmax / log_softmax / softmin with a -0.0 g (PyTorch's last-dim kernel sums the row
from its first element: a row of -0.0 sums to -0.0, and g - (-0.0) is +0.0). PyTorch
is the answer: these compare with it live, bit for bit on zeros (np.signbit) and NaN
positions, on cpu and opencl."""
import math

import numpy as np
import pytest

import dispatchtorch as dt

T = pytest.importorskip("torch")

inf, nan = math.inf, math.nan
VALUES = [0.0, -0.0, 1.0, -1.0, 0.5, -3.0, 2.0, inf, -inf, nan, 1e-300]
GRADS = [1.0, -1.0, -0.0, 0.0, 2.5, inf, -inf, nan]
DEVS = ["cpu", "opencl"]


def _dev(dev):
    if dev == "opencl" and not dt.opencl.is_available():
        pytest.skip("no OpenCL device")
    return dev


def _check(got, want, dtype):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-12 if dtype == "float64" else 2e-6, atol=0)
    zero = want == 0
    np.testing.assert_array_equal(np.signbit(got)[zero], np.signbit(want)[zero])


def _compare(fn, inputs, dev, dtype="float64", grads=GRADS, forward=True):
    """fn(lib, *tensors) on both libraries: the output, then every input's gradient for
    each incoming gradient (the same g everywhere)."""
    dev = _dev(dev)
    for g in ([None] if forward else []) + list(grads):
        res = []
        for lib, kw in ((T, {}), (dt, {"device": dev})):
            xs = [lib.tensor(v, dtype=getattr(lib, dtype), requires_grad=True, **kw)
                  for v in inputs]
            out = fn(lib, *xs)
            if g is None:
                res.append([out.detach().cpu().numpy()])
                continue
            gs = lib.autograd.grad([out], xs, [lib.full_like(out, g)])
            res.append([x.cpu().numpy() for x in gs])
        for want, got in zip(*res):
            _check(got, want, dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("dev", DEVS)
def test_xlog1py_gradient_at_special_values(dev, dtype):
    a = [x for x in VALUES for _ in VALUES]
    b = [y for _ in VALUES for y in VALUES]
    a, b = a + [0.0, 0.0, -0.0], b + [-1.0, -2.0, -1.0]
    _compare(lambda L, x, y: L.special.xlog1py(x, y), [a, b], dev, dtype)


def test_xlog1py_number_operands():
    for a, b in ((2, [1.0, -1.0, -2.0, 0.0]), ([1.0, 0.0, -0.0, 3.0], -1), ([1.0, 0.0], 2.5)):
        want = T.special.xlog1py(a if not isinstance(a, list) else T.tensor(a, dtype=T.float64),
                                 b if not isinstance(b, list) else T.tensor(b, dtype=T.float64))
        got = dt.special.xlog1py(a if not isinstance(a, list) else dt.tensor(a, dtype=dt.float64),
                                 b if not isinstance(b, list) else dt.tensor(b, dtype=dt.float64))
        _check(got.numpy(), want.numpy(), "float64")
