"""dispatchtorch.masked against torch.masked on what OpInfo's float samples leave out:
integer inputs (int64 promotion of sum / prod, integer identities of amax / amin),
fully masked-out rows, broadcast masks, and the argument errors."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")

rng = np.random.default_rng(5)
X = rng.integers(-5, 6, (3, 4)).astype(np.int32)
M = rng.random((3, 4)) > 0.4
M[1] = False                                     # a fully masked-out row


def _both(name, x, mask, *args, **kw):
    ours = getattr(dt.masked, name)(dt.tensor(x), *args, mask=dt.tensor(mask), **kw)
    theirs = getattr(torch.masked, name)(torch.tensor(x), *args, mask=torch.tensor(mask), **kw)
    return ours, theirs


@pytest.mark.parametrize("name,args,kw", [
    ("sum", (1,), {}), ("prod", (0,), {"keepdim": True}), ("amax", (1,), {}),
    ("amin", ((0, 1),), {}), ("argmax", (1,), {}), ("argmin", (0,), {}),
    ("cumsum", (1,), {}), ("cumprod", (0,), {}), ("sum", (), {"dtype": dt.float64})])
def test_integer_inputs_match_pytorch(name, args, kw):
    tkw = {k: getattr(torch, v.name) if isinstance(v, dt.dtype) else v for k, v in kw.items()}
    ours = getattr(dt.masked, name)(dt.tensor(X), *args, mask=dt.tensor(M), **kw)
    theirs = getattr(torch.masked, name)(torch.tensor(X), *args, mask=torch.tensor(M), **tkw)
    assert ours.dtype.name == str(theirs.dtype)[6:]
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("name,args", [
    ("mean", (1,)), ("var", (1,)), ("std", (0,)), ("median", (1,)), ("norm", (2.0, 1)),
    ("softmax", (1,)), ("log_softmax", (1,)), ("softmin", (1,)), ("logsumexp", (1,)),
    ("normalize", (2.0, 1))])
def test_fully_masked_rows_and_broadcast_masks_match_pytorch(name, args):
    x = rng.standard_normal((3, 4))
    for mask in (M, M[2]):                       # (3, 4), and (4,) broadcast over rows
        ours, theirs = _both(name, x, mask, *args)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, equal_nan=True)


def test_errors_match_pytorch():
    x, mask = dt.tensor(X), dt.tensor(M)
    with pytest.raises(ValueError, match="mean.*floating point"):
        dt.masked.mean(x, 1, mask=mask)
    with pytest.raises(ValueError, match="median expects no fully masked out rows"):
        dt.masked.median(x, 1, mask=mask)
    with pytest.raises(IndexError, match="mask dimensionality higher"):
        dt.masked.sum(x[0], mask=mask)
    with pytest.raises(RuntimeError, match="appears multiple times"):
        dt.masked.sum(x, (1, 1), mask=mask)
    with pytest.raises(IndexError, match="Dimension out of range"):
        dt.masked.amax(x, 2, mask=mask)
