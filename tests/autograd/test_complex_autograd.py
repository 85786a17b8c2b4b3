"""Autograd on complex tensors follows PyTorch's conjugate Wirtinger convention: the
gradient of a real loss with respect to z = x + iy is dL/dx + i dL/dy. Checked against
PyTorch, including a LLaMA-style rotary embedding."""
import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(0)
Z = (_rng.standard_normal((3, 4)) + 1j * _rng.standard_normal((3, 4))).astype(np.complex64)
W = (_rng.standard_normal((4, 2)) + 1j * _rng.standard_normal((4, 2))).astype(np.complex64)

LOSSES = {
    "z_conj_z": lambda m, z, w: (z * z.conj()).real.sum(),
    "abs": lambda m, z, w: z.abs().sum(),
    "mul": lambda m, z, w: (z * (2 - 1j) * z).imag.sum(),
    "matmul": lambda m, z, w: (z @ w).abs().sum(),
    "view_as_real": lambda m, z, w: (m.view_as_real(z) ** 2 * m.arange(2.0)).sum(),
    "exp": lambda m, z, w: m.exp(z).real.sum(),
    "div": lambda m, z, w: (1 / z + z / (z + 1)).real.mean(),
    "sqrt_log": lambda m, z, w: (m.sqrt(z) + m.log(z)).imag.sum(),
    "angle": lambda m, z, w: z.angle().sum(),
    "sin_tanh": lambda m, z, w: (m.sin(z) * m.tanh(z)).abs().sum(),
    "pow": lambda m, z, w: (z ** 3).real.sum() + (z ** (0.5 + 0.2j)).imag.sum(),
    "sum_prod": lambda m, z, w: z.prod(1).real.sum() + z.sum(0).abs().sum(),
    "conj_physical": lambda m, z, w: (z.conj_physical() * z * 1j).real.sum(),
    "polar": lambda m, z, w: m.view_as_real(m.polar(z.abs(), z.angle() * 2)).sum(),
    "complex": lambda m, z, w: (m.complex(z.real * 2, z.imag ** 2) * w[0, 0]).abs().sum(),
    "sgn": lambda m, z, w: (m.sgn(z) * z).real.sum(),
    "views_cat": lambda m, z, w: m.cat([z.t().reshape(-1), z[1]]).mul(3j).imag.sum(),
    "real_mixed": lambda m, z, w: (z.real.exp() * z).abs().sum() + (m.ones(4) * z).imag.sum(),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradient_matches_pytorch(name):
    grads = []
    for m in (dt, torch):
        z = m.tensor(Z).requires_grad_(True)
        w = m.tensor(W).requires_grad_(True)
        LOSSES[name](m, z, w).backward()
        grads.append([None if t.grad is None else np.asarray(t.grad.detach()) for t in (z, w)])
    for ours, theirs in zip(*grads):
        assert (ours is None) == (theirs is None)
        if theirs is not None:
            assert ours.dtype == theirs.dtype
            np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)


def test_real_input_gets_a_real_gradient():
    for m in (dt, torch):
        x = m.tensor([1.0, -2.0]).requires_grad_(True)
        (x * m.tensor([1 + 2j, 3 - 1j])).abs().sum().backward()
        assert x.grad.dtype == m.float32
    grads = []
    for m in (dt, torch):
        x = m.tensor([1.0, -2.0]).requires_grad_(True)
        (x * m.tensor([1 + 2j, 3 - 1j])).imag.sum().backward()
        grads.append(np.asarray(x.grad))
    np.testing.assert_allclose(*grads)


def test_complex_output_needs_an_explicit_gradient():
    z = dt.tensor([1 + 1j]).requires_grad_(True)
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        (z * 2).sum().backward()
    g = dt.autograd.grad((z * z).sum(), z, dt.tensor(1 + 0j))[0]
    t = torch.tensor([1 + 1j], requires_grad=True)
    assert g.tolist() == torch.autograd.grad((t * t).sum(), t, torch.tensor(1 + 0j))[0].tolist()


def _rotary(m, xq, xk, dim, seqlen):
    """LLaMA's precompute_freqs_cis / apply_rotary_emb, as written there."""
    freqs = 1.0 / (10000.0 ** (m.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = m.arange(seqlen)
    freqs_cis = m.polar(m.ones_like(m.outer(t, freqs).float()), m.outer(t, freqs).float())
    xq_ = m.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = m.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    shape = [d if i == 1 or i == xq_.ndim - 1 else 1 for i, d in enumerate(xq_.shape)]
    freqs_cis = freqs_cis.view(*shape)
    xq_out = m.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = m.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def test_llama_rotary_embedding_forward_and_backward():
    q = _rng.standard_normal((2, 5, 3, 8)).astype(np.float32)
    k = _rng.standard_normal((2, 5, 3, 8)).astype(np.float32)
    out = []
    for m in (dt, torch):
        xq = m.tensor(q).requires_grad_(True)
        xk = m.tensor(k).requires_grad_(True)
        a, b = _rotary(m, xq, xk, 8, 5)
        ((a * b).sum() + a.pow(2).mean()).backward()
        out.append([np.asarray(v.detach()) for v in (a, b, xq.grad, xk.grad)])
    for ours, theirs in zip(*out):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)
