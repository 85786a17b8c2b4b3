"""cdist / pdist gradients against PyTorch 2.13's CPU backward kernels (the
`*dist_calc::backward` of its distance kernels): 0 at a zero distance even for an inf
incoming gradient (the vector norm's rule gave NaN there), a NaN kept by their sign, and
for p = inf the full gradient to each coordinate tied for the maximum (not shared). The
expected values are PyTorch's, written out."""
import math

import numpy as np
import pytest

import dispatchtorch as torch

inf, nan = math.inf, math.nan
X = [[0.0, 1.0], [0.0, 1.0], [2.0, 3.0]]      # rows 0 and 1 at zero distance
Y = [[0.0, 1.0], [1.0, 1.0]]
G_PDIST = [inf, 1.0, 2.0]                      # the inf g on the zero-distance pair
G_CDIST = [[inf, 1.0], [2.0, -1.0], [0.5, 1.0]]
R2, R3 = math.sqrt(2) / 2, 2 ** (-2 / 3)
# p: (pdist's x gradient, cdist's x1 and x2 gradients)
PYTORCH = {
    2.0: ([[-R2, -R2], [-2 * R2, -2 * R2], [3 * R2, 3 * R2]],
          [[-1.0, 0.0], [1.0, 0.0], [0.8007669860932316, 1.2479805815931897]],
          [[-0.35355339059327373, -0.35355339059327373], [-0.4472135954999579, -0.8944271909999159]]),
    1.0: ([[nan, nan], [nan, nan], [3.0, 3.0]],       # sign(0) * inf: the inf g meets 0
          [[nan, nan], [1.0, 0.0], [1.5, 1.5]], [[nan, nan], [-1.0, -1.0]]),
    3.0: ([[-R3, -R3], [-2 * R3, -2 * R3], [3 * R3, 3 * R3]],
          [[-1.0, 0.0], [1.0, 0.0], [0.5461006872572631, 1.2394619616078977]],
          [[-0.31498026247371824, -0.31498026247371824], [-0.2311204247835449, -0.9244816991341795]]),
    inf: ([[nan, nan], [nan, nan], [3.0, 3.0]],
          [[nan, nan], [1.0, 0.0], [0.5, 1.5]], [[nan, nan], [0.0, -1.0]]),
    0.5: ([[-2.0, -2.0], [-4.0, -4.0], [6.0, 6.0]],
          [[-1.0, 0.0], [1.0, 0.0], [3.414213562373095, 2.7071067811865475]],
          [[-1.0, -1.0], [-2.414213562373095, -1.7071067811865475]]),
}


def _close(got, want):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               rtol=1e-12, atol=0)


def _grads(T, p, dev="cpu"):
    f64 = T.float64
    x = T.tensor(X, dtype=f64, device=dev, requires_grad=True)
    T.pdist(x, p=p).backward(T.tensor(G_PDIST, dtype=f64, device=dev))
    gp = x.grad.cpu().numpy()
    x = T.tensor(X, dtype=f64, device=dev, requires_grad=True)
    y = T.tensor(Y, dtype=f64, device=dev, requires_grad=True)
    T.cdist(x, y, p=p).backward(T.tensor(G_CDIST, dtype=f64, device=dev))
    return gp, x.grad.cpu().numpy(), y.grad.cpu().numpy()


@pytest.mark.parametrize("p", sorted(PYTORCH))
def test_distance_gradients_are_pytorchs(p):
    for got, want in zip(_grads(torch, p), PYTORCH[p]):
        _close(got, want)


def test_self_distance_gradient_is_finite():
    # cdist(x, x) and pdist of repeated rows: every pair at distance 0 contributes 0
    x = torch.tensor([[1.0, 2.0], [1.0, 2.0], [4.0, 6.0]], dtype=torch.float64,
                     requires_grad=True)
    torch.cdist(x, x, p=inf).sum().backward()
    _close(x.grad.numpy(), [[0.0, -2.0], [0.0, -2.0], [0.0, 4.0]])
    x.grad = None
    torch.nn.functional.pdist(x).sum().backward()
    _close(x.grad.numpy(), [[-0.6, -0.8], [-0.6, -0.8], [1.2, 1.6]])


def test_distance_rules_double_backward():
    x = torch.tensor([[0.0, 1.0], [2.0, 4.0], [1.0, -1.0]], dtype=torch.float64,
                     requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: torch.pdist(t, p=3), (x,))
    assert torch.autograd.gradgradcheck(lambda t: torch.cdist(t, t[:2] * 0.5 + 1), (x,))


def test_on_opencl_too():
    if not torch.opencl.is_available():
        pytest.skip("no OpenCL device")
    for got, want in zip(_grads(torch, inf, "opencl"), PYTORCH[inf]):
        _close(got, want)


def test_against_live_pytorch_when_installed():
    real = pytest.importorskip("torch")
    for p in PYTORCH:
        for got, want in zip(_grads(real, p), PYTORCH[p]):
            _close(got, want)
