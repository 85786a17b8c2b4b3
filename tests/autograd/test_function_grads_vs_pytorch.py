"""autograd.Function's backward receives what PyTorch 2.13's does: zeros for an output
nothing used (set_materialize_grads, on by default), None with it off, and None for a
forward output that is not a tensor; the resulting gradients equal PyTorch's."""
import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")


def _function(tl, seen):
    class Split(tl.autograd.Function):
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            return x * 2, 7, x.sin()

        @staticmethod
        def backward(ctx, ga, gint, gb):
            seen.append([None if g is None else np.asarray(g.detach().cpu().numpy())
                         for g in (ga, gint, gb)])
            total = 0
            if ga is not None:
                total = total + ga * 2
            if gb is not None:
                total = total + gb * 3
            return total, None
    return Split


@pytest.mark.parametrize("materialize", [True, False])
@pytest.mark.parametrize("used", ["first", "last", "both"])
def test_backward_gets_pytorchs_gradients(materialize, used):
    x0 = np.array([0.5, -1.0, 2.0], np.float32)
    results = []
    for tl in (torch, dt):
        seen = []
        x = tl.tensor(x0, requires_grad=True)
        a, n, b = _function(tl, seen).apply(x, materialize)
        assert n == 7
        loss = {"first": a.sum(), "last": (b * b).sum(), "both": a.sum() + b.sum()}[used]
        loss.backward()
        results.append((seen, x.grad.numpy()))
    (theirs, tg), (ours, og) = results
    assert len(ours) == len(theirs) == 1
    for t, o in zip(theirs[0], ours[0]):
        assert (t is None) == (o is None), (theirs, ours)
        if t is not None:
            np.testing.assert_allclose(o, t, rtol=1e-6)
    np.testing.assert_allclose(og, tg, rtol=1e-6)
