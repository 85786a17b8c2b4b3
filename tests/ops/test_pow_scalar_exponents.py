"""pow(Tensor, Scalar) at the exponents PyTorch 2.13 computes by other means
(pow_tensor_scalar_kernel: 0.5 is sqrt, -0.5 rsqrt, -1 reciprocal, 2 / 3 / -2
products), at -inf, -1, -0.0, 0, inf, NaN: forward and gradient (pow_backward's
x ** (e - 1) takes the same paths). float16 keeps C's pow, as PyTorch's half kernel.
The expected values are PyTorch's on CPU, written out."""
import math

import numpy as np
import pytest

import dispatchtorch as torch

inf, nan = math.inf, math.nan
X = [-inf, -1.0, -0.0, 0.0, inf, nan, 4.0]
# exponent: (forward, gradient for g = 1)
PYTORCH = {
    0.5: ([nan, nan, -0.0, 0.0, inf, nan, 2.0], [nan, nan, -inf, inf, 0.0, nan, 0.25]),
    -0.5: ([nan, nan, -inf, inf, 0.0, nan, 0.5], [-0.0, nan, -inf, -inf, -0.0, nan, -0.0625]),
    1.5: ([inf, nan, 0.0, 0.0, inf, nan, 8.0], [nan, nan, -0.0, 0.0, inf, nan, 3.0]),
    2: ([inf, 1.0, 0.0, 0.0, inf, nan, 16.0], [-inf, -2.0, -0.0, 0.0, inf, nan, 8.0]),
    3: ([-inf, -1.0, -0.0, 0.0, inf, nan, 64.0], [inf, 3.0, 0.0, 0.0, inf, nan, 48.0]),
    -1: ([-0.0, -1.0, -inf, inf, 0.0, nan, 0.25], [-0.0, -1.0, -inf, -inf, -0.0, nan, -0.0625]),
    -2: ([0.0, 1.0, inf, inf, 0.0, nan, 0.0625], [0.0, 2.0, inf, -inf, -0.0, nan, -0.03125]),
}


def _same_bits(got, want):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    np.testing.assert_array_equal(got, want)
    assert (np.signbit(got) == np.signbit(want))[want == 0].all(), (got, want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dev", ["cpu", "opencl"])
@pytest.mark.parametrize("e", sorted(PYTORCH))
def test_pow_at_special_bases_is_pytorchs(e, dev, dtype):
    if dev == "opencl" and not torch.opencl.is_available():
        pytest.skip("no OpenCL device")
    dt = getattr(torch, dtype)
    x = torch.tensor(X, dtype=dt, device=dev, requires_grad=True)
    y = torch.pow(x, e)
    assert y.grad_fn.name() == "PowBackward0"
    y.backward(torch.ones_like(y))
    fwd, grad = PYTORCH[e]
    _same_bits(y.detach().cpu().numpy(), fwd)
    _same_bits(x.grad.cpu().numpy(), grad)
    _same_bits((x.detach() ** e).cpu().numpy(), fwd)        # the operator and float_power
    _same_bits(torch.float_power(x.detach(), e).cpu().numpy(), fwd)


def test_pow_half_roots_keep_c_pow_and_tensor_exponents_too():
    # PyTorch's float16 kernel and pow(Tensor, Tensor) are std::pow: pow(-inf, 0.5) = inf
    x = torch.tensor([-inf, -0.0, 4.0], dtype=torch.float16)
    _same_bits(torch.pow(x, 0.5).float().numpy(), [inf, 0.0, 2.0])
    _same_bits(torch.pow(x, -0.5).float().numpy(), [0.0, inf, 0.5])
    b = torch.tensor([-inf, -0.0, 4.0, -0.0])
    _same_bits(torch.pow(b, torch.full_like(b, 0.5)).numpy(), [inf, 0.0, 2.0, 0.0])
    x = torch.tensor([-inf, -0.0, 4.0], dtype=torch.bfloat16)
    _same_bits(torch.pow(x, -0.5).float().numpy(), [nan, -inf, 0.5])


def test_pow_root_in_place_and_double_backward():
    z = torch.tensor([-inf, -0.0, 4.0])
    z.pow_(-0.5)
    _same_bits(z.numpy(), [nan, -inf, 0.5])
    x = torch.tensor([-inf, -0.0, 4.0], requires_grad=True)
    (g,) = torch.autograd.grad(torch.pow(x, 0.5).sum(), x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x)
    _same_bits(g.detach().numpy(), [nan, -inf, 0.25])
    _same_bits(h.numpy(), [-0.0, -inf, -0.03125])


def test_against_live_pytorch_when_installed():
    real = pytest.importorskip("torch")
    for e in PYTORCH:
        t = real.tensor(X, requires_grad=True)
        y = real.pow(t, e)
        y.backward(real.ones_like(y))
        _same_bits(y.detach().numpy(), PYTORCH[e][0])
        _same_bits(t.grad.numpy(), PYTORCH[e][1])
