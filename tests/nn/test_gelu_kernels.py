"""gelu's fused CPU kernels (backends/cpu/dispatchtorch_cpu/gelu.py) give the bits of the
row's decomposition, on one thread and on the pool, for contiguous and strided inputs,
except the erf form on float32 arrays of ERF32_MIN elements or more, which evaluates
x Phi(x) directly (phi32.py: checked against float64 here and in tests/nn/test_phi32.py);
the gelu_backward row is what an ordinary backward runs, and double backward keeps the
differentiable formulas. PyTorch is the independent answer where installed."""
import numpy as np
import pytest
from scipy import special as scipy_special

import dispatchtorch as dt
from dispatchtorch.ops.nn_ops.activation import GELU, GELU_BACKWARD, _gelu, _gelu_backward
from dispatchtorch_cpu import parallel as P
from dispatchtorch_cpu.gelu import BLOCK
from dispatchtorch_cpu.kernels import ERF32_MIN

rng = np.random.default_rng(7)
SIZES = [(5,), (BLOCK + 100,), (P.THRESHOLD // 64 + 3, 64)]


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SIZES)
def test_kernels_equal_the_decomposition_bit_for_bit(shape, dtype, approximate, threads):
    x = dt.from_numpy((rng.standard_normal(shape) * 2).astype(dtype))
    g = dt.from_numpy(rng.standard_normal(shape).astype(dtype))
    phi = dtype == "float32" and approximate == "none" and x.numel() >= ERF32_MIN
    with dt.no_grad():
        for xs, gs in [(x, g), (x.t() if x.dim() == 2 else x[::2], g.t() if g.dim() == 2 else g[::2])]:
            fused = GELU(xs, approximate=approximate).numpy()
            back = GELU_BACKWARD(gs, xs, approximate=approximate).numpy()
            if not phi or xs.numel() < ERF32_MIN:
                assert np.array_equal(fused, _gelu(xs, approximate).numpy())
                assert np.array_equal(back, _gelu_backward(gs, xs, approximate).numpy())
                continue
            x64, g64 = xs.numpy().astype(np.float64), gs.numpy().astype(np.float64)
            want = x64 * scipy_special.ndtr(x64)
            dwant = g64 * (scipy_special.ndtr(x64) + x64 * np.exp(-x64 * x64 / 2) / np.sqrt(2 * np.pi))
            np.testing.assert_allclose(fused, want, rtol=2e-6, atol=3e-7)
            np.testing.assert_allclose(back, dwant, rtol=2e-6, atol=3e-7 * np.abs(g64).max())


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype,tol", [("float32", 5e-6), ("float16", 2e-3), ("bfloat16", 2e-2)])
def test_gelu_and_its_gradient_match_pytorch(dtype, tol, approximate, threads):
    torch = pytest.importorskip("torch")
    xn = (rng.standard_normal((BLOCK // 8 + 1, 8)) * 2).astype(np.float32)
    gn = rng.standard_normal(xn.shape).astype(np.float32)
    x = dt.from_numpy(xn).to(getattr(dt, dtype)).requires_grad_()
    y = dt.nn.functional.gelu(x, approximate=approximate)
    y.backward(dt.from_numpy(gn).to(getattr(dt, dtype)))
    xt = torch.from_numpy(xn).to(getattr(torch, dtype)).requires_grad_()
    yt = torch.nn.functional.gelu(xt, approximate=approximate)
    yt.backward(torch.from_numpy(gn).to(getattr(torch, dtype)))
    np.testing.assert_allclose(y.float().detach().numpy(), yt.float().detach().numpy(),
                               rtol=tol, atol=tol)
    np.testing.assert_allclose(x.grad.float().numpy(), xt.grad.float().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_double_backward_matches_pytorch(approximate):
    torch = pytest.importorskip("torch")
    xn = rng.standard_normal(40)
    x = dt.from_numpy(xn).requires_grad_()
    (gx,) = dt.autograd.grad(dt.nn.functional.gelu(x, approximate=approximate).sum(), x,
                             create_graph=True)
    gx.sum().backward()
    xt = torch.from_numpy(xn).requires_grad_()
    (gxt,) = torch.autograd.grad(torch.nn.functional.gelu(xt, approximate=approximate).sum(),
                                 xt, create_graph=True)
    gxt.sum().backward()
    np.testing.assert_allclose(gx.detach().numpy(), gxt.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_gelu_of_an_integer_tensor_raises_like_pytorch():
    x = dt.tensor([1, 2])
    with pytest.raises(NotImplementedError, match="GeluKernelImpl.*'Long'"):
        dt.nn.functional.gelu(x)
