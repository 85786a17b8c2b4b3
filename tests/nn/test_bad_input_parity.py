"""Bad arguments to the new functions and layers raise PyTorch's exception class,
with a message naming the function or argument (compared with PyTorch where it is
installed), and leave their inputs as they were."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as dt

X3 = np.ones((2, 3, 4), np.float32)
X4 = np.ones((2, 3, 4, 4), np.float32)

CASES = [
    ("F.glu(x(X3), 1)", "Halving dimension"),
    ("F.pixel_shuffle(x(X4), 2)", "pixel_shuffle"),
    ("F.pixel_unshuffle(x(np.ones((1, 1, 3, 4), np.float32)), 2)", "pixel_unshuffle"),
    ("F.channel_shuffle(x(X4), 2)", "groups"),
    ("F.pdist(x(X3))", "pdist"),
    ("F.softshrink(x(X3), -1.0)", "lambd"),
    ("F.multi_margin_loss(x(np.ones((2, 3), np.float32)), i([0, 1]), p=3)", "p == 1"),
    ("F.triplet_margin_with_distance_loss(x(X3), x(X3), x(X3), margin=-1.0)", "margin"),
    ("F.gaussian_nll_loss(x(X3), x(X3), x(-X3))", "var"),
    ("F.embedding_bag(i([1, 2]), x(np.ones((4, 2), np.float32)), mode='median')", "mode"),
    ("F.embedding_bag(i([[1, 2]]), x(np.ones((4, 2), np.float32)), i([0]))", "offsets"),
    ("F.affine_grid(x(np.ones((1, 3, 3), np.float32)), [1, 1, 4, 4])", "affine"),
    ("F.grid_sample(x(X4), x(np.ones((2, 2, 2, 2), np.float32)), padding_mode='wrap')",
     "padding_mode"),
    ("F.conv3d(x(np.ones((1, 2, 3, 3, 3), np.float32)), x(np.ones((1, 3, 2, 2, 2), "
     "np.float32)))", "channels"),
    ("F.fractional_max_pool2d(x(X4), 3, output_size=(3, 3))", "too large"),
    ("F.max_unpool2d(x(X4), i(np.zeros((2, 3, 4, 4), np.int64) + 999), 2)", "max index"),
    ("nn.LSTM(3, 4, proj_size=5)", "proj_size"),
    ("nn.RNN(3, 4, nonlinearity='gelu')", "nonlinearity"),
    ("nn.Transformer(8, 3)", "divisible"),
    ("nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5, 3])", "cutoffs"),
    ("nn.TripletMarginLoss(margin=0)", "margin"),
    ("nn.InstanceNorm2d(3)(x(np.ones((2, 3), np.float32)))", "input"),
    ("nn.ReflectionPad2d(3)(x(np.ones((1, 1, 2, 2), np.float32)))", "Padding size"),
    ("nn.FractionalMaxPool2d(2)", "output"),
]


def _run(lib, expr):
    env = {"F": lib.nn.functional, "nn": lib.nn, "np": np, "X3": X3, "X4": X4,
           "x": lambda a: lib.tensor(np.asarray(a)),
           "i": lambda a: lib.tensor(np.asarray(a, dtype=np.int64))}
    try:
        eval(expr, env)
    except Exception as exc:       # noqa: BLE001 - the class is what is compared
        return exc
    return None


@pytest.mark.parametrize("expr,words", CASES, ids=[c[0][:40] for c in CASES])
def test_bad_input_raises_pytorchs_exception_class(torch, expr, words):
    ours, theirs = _run(dt, expr), _run(torch, expr)
    assert theirs is not None and not isinstance(theirs, NameError), \
        f"PyTorch accepts this, the case is wrong: {theirs!r}"
    assert ours is not None, f"dispatchtorch accepted {expr}"
    assert isinstance(ours, type(theirs)) or isinstance(theirs, type(ours)), \
        (type(ours), type(theirs), ours)
    assert words.lower() in str(ours).lower(), str(ours)


def test_failed_call_leaves_inputs_unchanged():
    x = dt.ones(2, 3, 4)
    with pytest.raises(RuntimeError):
        dt.nn.functional.glu(x, 1)
    with pytest.raises(RuntimeError):
        dt.nn.functional.pixel_shuffle(x.unsqueeze(0), 2)
    assert (x == 1).all().item()
