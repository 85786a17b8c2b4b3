"""The backward reads what the forward computed instead of computing it again
(passes.cse's `prior`): layer_norm's decomposition recomputes its mean and variance in
its backward rule; compiled, those kernels are gone and the gradients stay eager's."""
import math

import numpy as np
import pytest

import dispatchtorch as torch
from tests.compile.compile_helpers import DEVICES, _close, _entries, _np

_erf = np.vectorize(math.erf)


def _reference_grad(x, c, eps=1e-5):
    """d/dx sum(gelu(layer_norm(x)) * c) in float64 (weight 1, bias 0)."""
    mu = x.mean(-1, keepdims=True)
    sigma = np.sqrt(x.var(-1, keepdims=True) + eps)
    xh = (x - mu) / sigma
    dgelu = 0.5 * (1.0 + _erf(xh / math.sqrt(2.0))) + xh * np.exp(-0.5 * xh * xh) \
        / math.sqrt(2.0 * math.pi)
    g = c * dgelu
    return (g - g.mean(-1, keepdims=True) - xh * (g * xh).mean(-1, keepdims=True)) / sigma


@pytest.mark.parametrize("dev", DEVICES)
def test_layer_norm_backward_reads_the_forward_statistics(dev):
    rng = np.random.default_rng(0)
    data = rng.standard_normal((4, 8, 16)).astype(np.float32) * 3.0 + 1.0
    c = torch.tensor(rng.standard_normal((4, 8, 16)).astype(np.float32), device=dev)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.LayerNorm(16), torch.nn.GELU()).to(dev)
    cm = torch.compile(model)
    grads = []
    for fn in (model, cm, cm):               # eager, the capture, a replay
        x = torch.tensor(data, device=dev, requires_grad=True)
        (fn(x) * c).sum().backward()
        grads.append(x.grad)
    _close(grads[2], grads[0], dev)
    want = _reference_grad(data.astype(np.float64), _np(c).astype(np.float64))
    np.testing.assert_allclose(_np(grads[2]), want, rtol=1e-4, atol=1e-5)
    entry, = _entries(cm._compiled)
    if dev == "opencl":                      # (the CPU runs layer_norm as one kernel)
        # the mean's sum and division, the centred square's region: read, not rerun
        assert entry.backward.n_kernels == 12 and entry.backward.n_eager_kernels == 36
        names = " ".join(st[3] for st in entry.backward.steps)
        assert "(sub, mul)" not in names
