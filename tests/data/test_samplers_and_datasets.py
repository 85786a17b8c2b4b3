"""Samplers draw lazily with PyTorch's draw pattern; the datasets added beside the
basic ones behave as PyTorch's (compared with PyTorch where it is installed)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch.utils.data import (BatchSampler, ChainDataset, DataLoader, IterableDataset,
                                      RandomSampler, StackDataset, TensorDataset,
                                      WeightedRandomSampler)


def test_random_sampler_with_replacement_draws_32_at_a_time():
    """minGPT's sampler: 1e10 indices, never drawn up front."""
    calls = []
    real = dt.ops.randint

    def spy(*args, **kwargs):
        calls.append(args[2])
        return real(*args, **kwargs)
    sampler = RandomSampler(range(7), replacement=True, num_samples=int(1e10),
                            generator=dt.Generator().manual_seed(0))
    dt.ops.randint = spy
    try:
        first = list(itertools.islice(iter(sampler), 40))
    finally:
        dt.ops.randint = real
    assert calls == [(32,), (32,)] and len(sampler) == int(1e10)
    assert set(first) <= set(range(7))
    loader = DataLoader(range(7), batch_size=5, sampler=sampler)
    assert len(next(iter(loader))) == 5


def test_random_sampler_streams_are_reproducible_and_cover_the_data():
    def draw(**kw):
        return list(RandomSampler(range(10), generator=dt.Generator().manual_seed(3), **kw))
    assert draw() == draw() and sorted(draw()) == list(range(10))
    more = draw(num_samples=25)              # two whole permutations and five more
    assert sorted(more[:10]) == sorted(more[10:20]) == list(range(10)) and len(set(more[20:])) == 5
    assert len(draw(replacement=True, num_samples=70)) == 70
    # without a generator, each epoch is seeded from the global stream
    dt.manual_seed(5)
    a = list(RandomSampler(range(10)))
    dt.manual_seed(5)
    assert list(RandomSampler(range(10))) == a


def test_weighted_random_sampler_follows_the_weights():
    s = WeightedRandomSampler([0.0, 1.0, 3.0], 4000, generator=dt.Generator().manual_seed(0))
    counts = np.bincount(list(s), minlength=3)
    assert counts[0] == 0 and abs(counts[2] / counts[1] - 3.0) < 0.4 and len(s) == 4000
    no_repeat = list(WeightedRandomSampler([1, 1, 1, 1], 4, replacement=False))
    assert sorted(no_repeat) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        WeightedRandomSampler([1.0], 0)


class _Range(IterableDataset):
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __iter__(self):
        return iter(range(self.a, self.b))

    def __len__(self):
        return self.b - self.a


def test_chain_and_stack_datasets_match_pytorch():
    torch = pytest.importorskip("torch")
    assert list(ChainDataset([_Range(0, 3), _Range(5, 7)])) == [0, 1, 2, 5, 6]
    assert len(ChainDataset([_Range(0, 3), _Range(5, 7)])) == 5
    x = np.arange(12.0).reshape(6, 2)
    ours = StackDataset(TensorDataset(dt.tensor(x)), dt.arange(6))
    theirs = torch.utils.data.StackDataset(torch.utils.data.TensorDataset(torch.tensor(x)),
                                           torch.arange(6))
    for i in range(6):
        assert ours[i][0][0].tolist() == theirs[i][0][0].tolist() and int(ours[i][1]) == i
    ob = next(iter(DataLoader(ours, batch_size=4)))
    tb = next(iter(torch.utils.data.DataLoader(theirs, batch_size=4)))
    assert ob[0][0].tolist() == tb[0][0].tolist() and ob[1].tolist() == tb[1].tolist()
    named = StackDataset(a=dt.arange(3), b=dt.arange(3) * 2)
    assert {k: int(v) for k, v in named[2].items()} == {"a": 2, "b": 4}
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(dt.arange(3), dt.arange(4))


def test_batch_sampler_is_lazy_too():
    s = BatchSampler(RandomSampler(range(5), replacement=True, num_samples=int(1e12)), 3, False)
    assert len(next(iter(s))) == 3 and len(s) == -(-int(1e12) // 3)
