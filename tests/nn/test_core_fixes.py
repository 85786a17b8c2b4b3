"""Core bugs found while building nn (each fixed minimally in the core)."""
import numpy as np

import dispatchtorch as dt


def test_reshape_of_a_0d_tensor():
    t = dt.tensor(3.0, requires_grad=True)
    r = t.reshape(-1)
    assert r.shape == (1,) and r.tolist() == [3.0]
    assert dt.tensor(2).reshape(1, 1).shape == (1, 1)
    (r * 2).sum().backward()
    assert t.grad.item() == 2.0


def test_gather_backward_returns_a_gradient_per_input():
    x = dt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    idx = dt.tensor([[1, 1], [0, 1]])
    x.gather(1, idx).sum().backward()
    assert np.array_equal(x.grad.numpy(), [[0.0, 2.0], [1.0, 1.0]])
    y = dt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y.index_select(0, dt.tensor([2, 2, 0])).sum().backward()
    assert y.grad.tolist() == [1.0, 0.0, 2.0]
