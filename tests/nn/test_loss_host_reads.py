"""cross_entropy / nll_loss read their target back once (its min and max, for the class
check) and the index ops inside the row do not check again: on a device every read is
a queue sync (the OpenCL MLP step made three a step). Counted, not timed; the values
are PyTorch's where it is installed."""
import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch._tensor import Tensor


def _count_host_reads(monkeypatch):
    calls = []
    real = Tensor._host

    def counted(self, *a, **k):
        calls.append(self.shape)
        return real(self, *a, **k)
    monkeypatch.setattr(Tensor, "_host", counted)
    return calls


@pytest.mark.parametrize("ignored", [False, True])
@pytest.mark.parametrize("fn", ["cross_entropy", "nll_loss"])
def test_one_host_read_for_a_loss_step(fn, ignored, monkeypatch):
    rng = np.random.default_rng(0)
    xn = rng.standard_normal((64, 10)).astype(np.float32)
    tn = rng.integers(0, 10, 64)
    if ignored:
        tn[3] = -100                                    # an ignored target
    x = dt.from_numpy(xn).requires_grad_()
    t = dt.from_numpy(tn)
    calls = _count_host_reads(monkeypatch)
    inp = x if fn == "cross_entropy" else dt.log_softmax(x, 1)
    loss = getattr(dt.nn.functional, fn)(inp, t)
    loss.backward()
    # the target, once; with an ignored entry, again with it masked
    assert calls == [(64,)] * (2 if ignored else 1)
    monkeypatch.undo()
    torch = pytest.importorskip("torch")
    xt = torch.from_numpy(xn).requires_grad_()
    it = xt if fn == "cross_entropy" else torch.log_softmax(xt, 1)
    lt = getattr(torch.nn.functional, fn)(it, torch.from_numpy(tn))
    lt.backward()
    np.testing.assert_allclose(loss.item(), lt.item(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_an_out_of_range_target_is_still_refused():
    with pytest.raises(IndexError, match="Target 10 is out of bounds"):
        dt.nn.functional.cross_entropy(dt.randn(4, 10), dt.tensor([0, 10, 2, 1]))
