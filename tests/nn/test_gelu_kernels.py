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


TF_SHAPE = (32, 64, 256)          # the tiny transformer's MLP activation: the phi32 path


def _ulps64(got, want):
    return np.abs(got.astype(np.float64) - want) / np.spacing(np.abs(want).astype(np.float32))


def test_transformer_shape_within_ulps_of_float64_and_near_pytorch(threads):
    """The public gelu on the transformer's shape, contiguous and permuted (non-contiguous
    view), against float64 (ulp and absolute bounds of tests/nn/test_phi32.py) and
    PyTorch's float32 gelu (its vectorised erf is Abramowitz-Stegun 7.1.26 and it rounds
    1 + erf: measured up to 9.3e-7 from ours where ours is within 14 ulp of float64)."""
    torch = pytest.importorskip("torch")
    xn = rng.standard_normal(TF_SHAPE).astype(np.float32)
    for xs in (xn, xn.transpose(2, 0, 1)):
        with dt.no_grad():
            xd = dt.from_numpy(xn)
            got = dt.nn.functional.gelu(xd if xs is xn else xd.permute(2, 0, 1)).numpy()
        x64 = xs.astype(np.float64)
        want = x64 * scipy_special.ndtr(x64)
        assert got.shape == xs.shape
        small = np.abs(xs) < 1.5
        assert _ulps64(got[small], want[small]).max() <= 11
        assert _ulps64(got[~small], want[~small]).max() <= 14       # |x| < 5.5 at N(0, 1)
        assert np.abs(got - want).max() < 4e-7
        yt = torch.nn.functional.gelu(torch.from_numpy(np.ascontiguousarray(xs))).numpy()
        np.testing.assert_allclose(got, yt, rtol=2e-6, atol=1.5e-6)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_special_values_in_a_large_array_like_pytorch(dtype, threads):
    """NaN, +-0.0 (its sign), -inf and the negative tail inside an array long enough for
    the phi32 path (half dtypes go through float32), against PyTorch's values; the two
    documented differences: gelu(inf) = inf (the decomposition's and the small-array
    path's value; PyTorch's vectorised loop gives nan) and the float32 negative tail
    beyond -5.5, which keeps its digits where PyTorch's 1 + erf cancels to -0.0."""
    torch = pytest.importorskip("torch")
    special = np.array([np.nan, -np.inf, 0.0, -0.0, -40.0, 1e-30, -1e-30, 3.0, -3.0],
                       np.float32)
    xn = np.resize(special, 3 * ERF32_MIN + 5)
    x = dt.from_numpy(xn).to(getattr(dt, dtype))
    xt = torch.from_numpy(xn).to(getattr(torch, dtype))
    with dt.no_grad():
        got = dt.nn.functional.gelu(x).float().numpy()
    want = torch.nn.functional.gelu(xt).float().numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    num = ~np.isnan(want)
    nonzero = num & (want != 0)
    np.testing.assert_array_equal(np.signbit(got[nonzero]), np.signbit(want[nonzero]))
    # a zero result's sign is the float64 definition's (-0.0 for -0.0 and -40): PyTorch's
    # depends on its vector loop (+0.0 from its AVX2 kernels, -0.0 from its AVX-512 ones)
    zero = num & (want == 0)
    z64 = xn[zero].astype(np.float64)
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(z64 * scipy_special.ndtr(z64)))
    # PyTorch's gelu(-3) is -0.00405022 (its erf's absolute error); float64's -0.00404969
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == "float32" else 1e-2, atol=1.5e-6)
    if dtype == "float32":
        x64 = xn[num].astype(np.float64)
        np.testing.assert_allclose(got[num], x64 * scipy_special.ndtr(x64), rtol=1e-6, atol=0)
    inf = np.resize(np.array([np.inf, -np.inf], np.float32), ERF32_MIN)
    with dt.no_grad():
        g_inf = dt.nn.functional.gelu(dt.from_numpy(inf).to(getattr(dt, dtype))).float().numpy()
    assert (g_inf[0::2] == np.inf).all() and np.isnan(g_inf[1::2]).all()
    if dtype == "float32":
        tail = np.resize(np.array([-6, -8, -10, -12], np.float32), ERF32_MIN)
        with dt.no_grad():
            gt = dt.nn.functional.gelu(dt.from_numpy(tail)).numpy()
        t64 = tail.astype(np.float64)
        np.testing.assert_allclose(gt, t64 * scipy_special.ndtr(t64), rtol=2e-5)
        assert (torch.nn.functional.gelu(torch.from_numpy(tail)).numpy() == 0).all()


def test_kernel_in_place_on_the_pool_and_on_a_strided_view(threads):
    """gelu.py's kernel with out = x: contiguous (phi32 writes the block it reads, the
    pool's blocks disjoint) and a transposed view (made contiguous, copied back once)
    give the bits of the out-of-place call."""
    from dispatchtorch_cpu import gelu as kernel
    xn = (rng.standard_normal(TF_SHAPE) * 2).astype(np.float32)
    want = np.empty_like(xn)
    kernel.gelu(want, xn, approximate="none")
    y = xn.copy()
    kernel.gelu(y, y, approximate="none")
    assert np.array_equal(y.view(np.int32), want.view(np.int32))
    y = xn.copy()
    v = y.transpose(2, 1, 0)
    want_v = np.empty(v.shape, np.float32)
    kernel.gelu(want_v, np.ascontiguousarray(v), approximate="none")
    kernel.gelu(v, v, approximate="none")
    assert np.array_equal(v.view(np.int32), want_v.view(np.int32))
