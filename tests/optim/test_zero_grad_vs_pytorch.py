"""Module.zero_grad and Optimizer.zero_grad treat each .grad as PyTorch's do."""
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")


def _after_zero_grad(lib, via, set_to_none, grad_has_history):
    w = lib.nn.Parameter(lib.ones(3))
    g = lib.full((3,), 2.0, requires_grad=True)
    w.grad = (g * 1) if grad_has_history else g.detach().requires_grad_(True)
    if via == "module":
        m = lib.nn.Module()
        m.w = w
        m.zero_grad(set_to_none=set_to_none)
    else:
        lib.optim.SGD([w], lr=0.1).zero_grad(set_to_none=set_to_none)
    if w.grad is None:
        return None
    return w.grad.tolist(), w.grad.requires_grad, w.grad.grad_fn is None


@pytest.mark.parametrize("via", ["module", "optimizer"])
@pytest.mark.parametrize("set_to_none", [True, False])
@pytest.mark.parametrize("grad_has_history", [True, False])
def test_zero_grad_matches_pytorch(via, set_to_none, grad_has_history):
    assert (_after_zero_grad(dt, via, set_to_none, grad_has_history)
            == _after_zero_grad(torch, via, set_to_none, grad_has_history))
