"""Resetting `.grad`, shared by `Module.zero_grad` and `Optimizer.zero_grad` (PyTorch's
two entry points do exactly the same to each parameter)."""
from __future__ import annotations


def zero_grads(params, set_to_none=True):
    """Drop each gradient, or zero it in place, cut from any graph that produced it."""
    for p in params:
        g = p.grad
        if g is None:
            continue
        if set_to_none:
            p.grad = None
            continue
        if g.grad_fn is not None:
            g = p._grad = g.detach()
        else:
            g.requires_grad_(False)
        g.zero_()
