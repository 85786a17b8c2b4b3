"""PyTorch's example programs (own copies, see README.md) run with dispatchtorch and
with PyTorch from the same initial weights, data and noise: the losses agree step by
step to 1e-4 relative. Without PyTorch, the dispatchtorch runs are still checked to
train (finite, decreasing losses)."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from runner import load, numpy_state, timed  # noqa: E402

try:
    import torch as _torch
except ImportError:                    # dispatchtorch alone: no reference run
    _torch = None

TIMES: dict = {}
RTOL = 1e-4


def _noise_source(seed):
    """The same standard-normal draws, call by call, for each run."""
    def make():
        rng = np.random.default_rng(seed)
        return lambda shape: rng.standard_normal(shape).astype(np.float32)
    return make


def _compare(name, ours, theirs, t_ours, t_theirs):
    a, b = np.asarray(ours, np.float64), np.asarray(theirs, np.float64)
    assert a.shape == b.shape
    rel = np.abs(a - b) / np.maximum(np.abs(b), 1e-12)
    TIMES[name] = (float(rel.max()), t_ours, t_theirs)
    print(f"\n{name}: max relative loss difference {rel.max():.2e}; "
          f"dispatchtorch {t_ours:.2f} s, PyTorch {t_theirs:.2f} s")
    np.testing.assert_allclose(a, b, rtol=RTOL, atol=0)


def _reference_state(build):
    if _torch is None:
        return None
    _torch.manual_seed(0)
    return build()


def _tokens(n, vocab, seed=0):
    """A token stream with structure to learn: a repeating pattern with noise."""
    rng = np.random.default_rng(seed)
    base = np.arange(n) % vocab
    noise = rng.integers(0, vocab, n)
    return np.where(rng.random(n) < 0.2, noise, base).astype(np.int64)


@pytest.mark.parametrize("model_type,tied", [("LSTM", True), ("GRU", False),
                                             ("RNN_TANH", False), ("Transformer", False)])
def test_word_language_model(model_type, tied):
    vocab = 12
    tokens = _tokens(84, vocab)
    kw = {"tied": tied} if model_type != "Transformer" else {}
    mine = load("word_language_model", "dispatchtorch")
    if _torch is None:
        losses = mine.run(model_type, tokens, vocab, **kw)
        assert np.all(np.isfinite(losses)) and losses[-1] < losses[0]
        return
    ref = load("word_language_model", "torch")
    state = _reference_state(lambda: numpy_state(ref.build(model_type, vocab, **kw)))
    theirs, t_theirs = timed(ref.run, model_type, tokens, vocab, state=state, **kw)
    ours, t_ours = timed(mine.run, model_type, tokens, vocab, state=state, **kw)
    _compare(f"word_language_model[{model_type}{', tied' if tied else ''}]", ours, theirs,
             t_ours, t_theirs)


@pytest.mark.skipif(not hasattr(__import__("dispatchtorch").Tensor, "is_xpu"),
                    reason="the program reads Tensor.is_xpu, which issue 16's drop-in part adds")
def test_dcgan():
    rng = np.random.default_rng(1)
    images = [np.tanh(rng.standard_normal((2, 3, 64, 64))).astype(np.float32) for _ in range(3)]
    noise = _noise_source(2)
    mine = load("dcgan", "dispatchtorch")
    if _torch is None:
        losses = mine.run(images, noise())
        assert np.all(np.isfinite(losses))
        return
    ref = load("dcgan", "torch")
    states = _reference_state(lambda: tuple(numpy_state(m) for m in ref.models()))
    theirs, t_theirs = timed(ref.run, images, noise(), states)
    ours, t_ours = timed(mine.run, images, noise(), states)
    _compare("dcgan", ours, theirs, t_ours, t_theirs)


def test_vae():
    rng = np.random.default_rng(3)
    batches = [rng.random((8, 1, 28, 28)).astype(np.float32) for _ in range(4)]
    noise = _noise_source(4)
    mine = load("vae", "dispatchtorch")
    if _torch is None:
        losses = mine.run(batches)
        assert np.all(np.isfinite(losses)) and losses[-1] < losses[0]
        return
    ref = load("vae", "torch")
    state = _reference_state(lambda: numpy_state(ref.VAE()))
    theirs, t_theirs = timed(ref.run, batches, noise(), state)
    ours, t_ours = timed(mine.run, batches, noise(), state)
    _compare("vae", ours, theirs, t_ours, t_theirs)


def test_super_resolution():
    rng = np.random.default_rng(5)
    pairs = []
    for _ in range(3):
        hi = rng.random((2, 1, 12, 12)).astype(np.float32)
        lo = hi.reshape(2, 1, 4, 3, 4, 3).mean((3, 5)).astype(np.float32)
        pairs.append((lo, hi))
    mine = load("super_resolution", "dispatchtorch")
    if _torch is None:
        losses = mine.run(pairs)
        assert np.all(np.isfinite(losses))
        return
    ref = load("super_resolution", "torch")
    state = _reference_state(lambda: numpy_state(ref.Net(3)))
    theirs, t_theirs = timed(ref.run, pairs, state=state)
    ours, t_ours = timed(mine.run, pairs, state=state)
    _compare("super_resolution", ours, theirs, t_ours, t_theirs)


def test_fast_neural_style():
    rng = np.random.default_rng(6)
    images = [(rng.random((1, 3, 16, 16)) * 255).astype(np.float32) for _ in range(2)]
    style = (rng.random((3, 16, 16)) * 255).astype(np.float32)
    mine = load("fast_neural_style", "dispatchtorch")
    if _torch is None:
        losses = mine.run(images, style)
        assert np.all(np.isfinite(losses))
        return
    ref = load("fast_neural_style", "torch")
    states = _reference_state(lambda: (numpy_state(ref.TransformerNet()),
                                       numpy_state(ref.SmallVgg())))
    # the program divides its input batches in place (normalize_batch's div_), and
    # from_numpy shares memory: each run gets its own copy
    theirs, t_theirs = timed(ref.run, [x.copy() for x in images], style, states)
    ours, t_ours = timed(mine.run, [x.copy() for x in images], style, states)
    _compare("fast_neural_style", ours, theirs, t_ours, t_theirs)
