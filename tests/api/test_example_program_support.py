"""What the pytorch/examples programs needed (tests/examples_pytorch/test_more_examples.py
runs them): torch.distributions' Categorical and Normal, torch.multiprocessing.spawn,
the DataLoader's base-seed draw, dropout2d on 2-D/3-D input, a range as an index,
torch.tensor of any sequence, size= in factories, torch.spmm, torch.nan and friends.
Checked against PyTorch where it is installed, else against hand-computed values."""
from __future__ import annotations

import collections
import math
import warnings

import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch.distributions import Categorical, Normal

try:
    import torch
except ImportError:                    # the hand-computed checks still run
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="compares with PyTorch")

P = [[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]]


def test_categorical_log_prob_entropy_by_hand():
    m = Categorical(dt.tensor(P, dtype=dt.float64))
    assert m.batch_shape == (2,) and m.event_shape == ()
    lp = m.log_prob(dt.tensor([2, 0])).tolist()
    assert lp == pytest.approx([math.log(0.7), math.log(0.5)], rel=1e-12)
    ent = m.entropy().tolist()
    assert ent == pytest.approx([-sum(p * math.log(p) for p in row) for row in P], rel=1e-12)
    assert m.mode.tolist() == [2, 0]
    # probs are normalised; logits give the same distribution
    m2 = Categorical(logits=dt.tensor(P, dtype=dt.float64).log() + 3.0)
    np.testing.assert_allclose(m2.probs.tolist(), P, rtol=1e-12)


def test_categorical_validates_arguments_and_support():
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        Categorical()
    with pytest.raises(ValueError, match="parameter probs .* Simplex()"):
        Categorical(dt.tensor([0.5, -0.1, 0.6]))
    with pytest.raises(ValueError, match="within the support .*IntegerInterval"):
        Categorical(dt.tensor([0.5, 0.5])).log_prob(dt.tensor(2))
    Categorical(dt.tensor([0.5, -0.1, 0.6]), validate_args=False)      # no check


def test_normal_by_hand():
    m = Normal(dt.tensor([0.0, 1.0], dtype=dt.float64), 2.0)
    x = dt.tensor([0.5, -1.0], dtype=dt.float64)
    want = [-(v - mu) ** 2 / 8 - math.log(2) - 0.5 * math.log(2 * math.pi)
            for v, mu in ((0.5, 0.0), (-1.0, 1.0))]
    assert m.log_prob(x).tolist() == pytest.approx(want, rel=1e-12)
    assert m.cdf(x).tolist() == pytest.approx(
        [0.5 * (1 + math.erf((v - mu) / (2 * math.sqrt(2)))) for v, mu in ((0.5, 0), (-1, 1))])
    assert m.entropy().tolist() == pytest.approx([0.5 + 0.5 * math.log(2 * math.pi)
                                                   + math.log(2)] * 2)
    with pytest.raises(ValueError, match="parameter scale .*GreaterThan\\(lower_bound=0.0\\)"):
        Normal(0.0, -1.0)


@needs_torch
def test_distributions_draw_pytorchs_numbers():
    for seed in (0, 5):
        got = []
        for lib in (dt, torch):
            lib.manual_seed(seed)
            c = lib.distributions.Categorical(lib.tensor(P))
            loc = lib.tensor([0.0, 1.0], requires_grad=True)
            n = lib.distributions.Normal(loc, lib.tensor([1.0, 0.5]))
            s = n.rsample((3,))
            s.sum().backward()
            got.append((c.sample().tolist(), c.sample((4, 2)).tolist(),
                        n.sample((2,)).tolist(), s.tolist(), loc.grad.tolist(),
                        c.log_prob(lib.tensor([[1, 2]])).tolist(), c.entropy().tolist()))
        ours, theirs = got
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-6)


def test_start_processes_reraises_a_childs_exception():
    from dispatchtorch import multiprocessing as mp
    mp.start_processes(_ok, args=(3,), nprocs=2, start_method="fork")
    with pytest.raises(mp.ProcessRaisedException, match="(?s)Process 1 terminated.*bad rank 1"):
        mp.start_processes(_raise_on_one, nprocs=2, start_method="fork")
    with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with exit code 3"):
        mp.start_processes(_exit3, nprocs=1, start_method="fork")
    assert mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    assert mp.Queue is not None and mp.Process is not None        # Python's, re-exported


def _ok(i, n):
    assert dt.ones(n).sum().item() == n


def _raise_on_one(i):
    if i == 1:
        raise KeyError(f"bad rank {i}")


def _exit3(i):
    raise SystemExit(3)


def _stream_after_loader(lib, shuffle):
    lib.manual_seed(7)
    loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.arange(6)),
                                       batch_size=2, shuffle=shuffle)
    batches = [b[0].tolist() for b in loader]
    return batches, lib.rand(3).tolist()


def test_a_loader_iterator_draws_one_base_seed():
    dt.manual_seed(7)
    dt.empty((), dtype=dt.int64).random_()          # the one draw PyTorch's iterator makes
    want = dt.rand(3).tolist()
    assert _stream_after_loader(dt, False) == ([[0, 1], [2, 3], [4, 5]], want)


@needs_torch
def test_the_global_stream_after_a_loader_is_pytorchs():
    for shuffle in (False, True):
        assert _stream_after_loader(dt, shuffle) == _stream_after_loader(torch, shuffle)


@pytest.mark.parametrize("shape", [(6, 5), (3, 4, 5)])
def test_dropout2d_on_2d_and_3d_input_drops_per_channel_with_a_warning(shape):
    dt.manual_seed(0)
    with pytest.warns(UserWarning, match="dropout2d"):
        y = dt.nn.functional.dropout2d(dt.ones(shape), 0.5, True).numpy()
    per_channel = y.reshape(shape[0], shape[1], -1)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2).all(-1))
    if torch is not None:
        torch.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = torch.nn.functional.dropout2d(torch.ones(shape), 0.5, True).numpy()
        np.testing.assert_array_equal(y, ref)
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        dt.nn.functional.dropout1d(dt.ones(2, 3, 4, 5), 0.5, True)


def test_range_index_sequence_data_and_size_keyword():
    x = dt.zeros(3, 4)
    x[range(3), dt.tensor([0, 2, 1])] = 5.0
    assert x.tolist() == [[5, 0, 0, 0], [0, 0, 5, 0], [0, 5, 0, 0]]
    assert x[range(1, 3)].tolist() == x[1:3].tolist()
    t = dt.tensor(collections.deque([1.5, 2.0]))
    assert t.dtype == dt.float32 and t.tolist() == [1.5, 2.0]
    assert dt.tensor([collections.deque([1, 2]), range(3, 5)]).tolist() == [[1, 2], [3, 4]]
    with pytest.raises(TypeError):
        dt.tensor("ab")
    assert dt.empty(size=(2, 3)).shape == (2, 3)
    assert dt.zeros(size=[2]).tolist() == [0, 0] and dt.ones(size=(1,)).tolist() == [1]
    assert dt.rand(size=(4,)).shape == (4,) and dt.randn(size=(2, 2)).shape == (2, 2)
    with pytest.raises(TypeError, match="zeros"):
        dt.zeros(2, size=(2,))


def test_spmm_of_dense_operands_and_constants():
    a = dt.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert dt.spmm(a, a).tolist() == [[7, 10], [15, 22]]
    with pytest.raises(RuntimeError, match="mm"):
        dt.spmm(dt.ones(2), a)
    assert math.isnan(dt.nan) and dt.inf == math.inf and dt.pi == math.pi and dt.e == math.e
    assert dt.newaxis is None
