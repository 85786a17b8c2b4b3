"""linear_cross_entropy's chunked path (LinearCrossEntropyOptions) against PyTorch's own
chunked path: losses and the gradients of input, weight and bias, for each reduction,
class weights, ignore_index and chunk sizes that do not divide the batch."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as dt
import dispatchtorch.nn.functional as F

rng = np.random.default_rng(3)


def _case(n, classes=7, features=5):
    x = rng.standard_normal((n, features)) if n else rng.standard_normal(features)
    w = rng.standard_normal((classes, features))
    b = rng.standard_normal(classes)
    cw = rng.uniform(0.5, 2, classes)
    t = rng.integers(0, classes, n) if n else np.int64(rng.integers(0, classes))
    return x, w, b, cw, t


def _run(lib, opts, arrays, kw, g=None):
    x, w, b, cw, t = arrays
    tx, tw, tb = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
    extra = {"weight": lib.tensor(cw)} if kw.pop("class_weight", False) else {}
    out = lib.nn.functional.linear_cross_entropy(tx, tw, lib.tensor(t), linear_bias=tb,
                                                 options=opts, **kw, **extra)
    (out * lib.tensor(g if g is not None else np.ones(out.shape))).sum().backward()
    return [out.detach().numpy()] + [a.grad.numpy() for a in (tx, tw, tb)]


@pytest.mark.parametrize("n,kw,chunk", [
    (5, {"reduction": "mean"}, 2), (5, {"reduction": "sum"}, 3),
    (6, {"reduction": "none"}, 4), (5, {"reduction": "mean", "ignore_index": 1}, 2),
    (5, {"reduction": "mean", "class_weight": True, "ignore_index": 2}, 2),
    (5, {"reduction": "none", "class_weight": True}, 2), (0, {"reduction": "none"}, 2),
    (9, {"reduction": "mean"}, None)])
def test_chunked_matches_pytorch(torch, n, kw, chunk):
    arrays = _case(n)
    g = rng.standard_normal(max(n, 1) if n else ()) if kw["reduction"] == "none" else None
    ours = _run(dt, dt.nn.LinearCrossEntropyOptions(batch_chunk_size=chunk,
                                                     allow_retain_graph=True),
                arrays, dict(kw), g)
    theirs = _run(torch, torch.nn.LinearCrossEntropyOptions(batch_chunk_size=chunk,
                                                             allow_retain_graph=True),
                  arrays, dict(kw), g)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_chunked_backward_twice_needs_allow_retain_graph():
    x, w, b, cw, t = _case(4)
    tx = dt.tensor(x, requires_grad=True)
    loss = F.linear_cross_entropy(tx, dt.tensor(w), dt.tensor(t),
                                  options=dt.nn.LinearCrossEntropyOptions(batch_chunk_size=2))
    loss.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="allow_retain_graph"):
        loss.backward()


def test_chunk_size_rules_and_option_checks():
    from dispatchtorch.nn.functional._linear_cross_entropy_chunked import chunk_size
    O = dt.nn.LinearCrossEntropyOptions
    # 'auto' is aspect_ratio:2: next_pow2(ceil(N / ceil(C / F))) // 2
    assert chunk_size(O(), 64, 8, 32) == 8
    assert chunk_size(O(chunking_method="aspect_ratio"), 64, 8, 32) == 16
    assert chunk_size(O(batch_chunk_size=100), 10, 8, 32) == 10
    with pytest.raises(ValueError, match="different chunk sizes"):
        chunk_size(O(batch_chunk_size=3, chunking_method="aspect_ratio"), 64, 8, 32)
    for bad in ({"acc_policy": "fast"}, {"chunking_method": "rows"}, {"batch_chunk_size": 0}):
        with pytest.raises(ValueError):
            O(**bad)


def test_unsupported_options_fall_back_with_a_warning(torch):
    x, w, b, cw, t = _case(4)
    kw = dict(label_smoothing=0.1, options=dt.nn.LinearCrossEntropyOptions())
    with pytest.warns(UserWarning, match="options.*ignored"):
        ours = F.linear_cross_entropy(dt.tensor(x), dt.tensor(w), dt.tensor(t), **kw)
    ref = torch.nn.functional.linear_cross_entropy(torch.tensor(x), torch.tensor(w),
                                                   torch.tensor(t), label_smoothing=0.1)
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-12)
