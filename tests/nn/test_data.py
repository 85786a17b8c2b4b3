"""utils.data: datasets, samplers, DataLoader, collate, random_split."""
from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest
from conftest import to_np

import dispatchtorch as dt
from dispatchtorch.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset,
                                      IterableDataset, RandomSampler, SequentialSampler, Subset,
                                      TensorDataset, default_collate, random_split)


def _ds(n=10):
    return TensorDataset(dt.arange(n * 2.0).reshape(n, 2), dt.arange(n))


def test_tensor_dataset_and_sequential_loading():
    ds = _ds()
    assert len(ds) == 10
    x, y = ds[3]
    assert to_np(x).tolist() == [6.0, 7.0] and int(y) == 3
    batches = list(DataLoader(ds, batch_size=4))
    assert [len(b[1]) for b in batches] == [4, 4, 2]
    assert isinstance(batches[0], list) and batches[0][0].shape == (4, 2)
    assert to_np(batches[2][1]).tolist() == [8, 9]
    assert len(DataLoader(ds, batch_size=4)) == 3
    assert [len(b[1]) for b in DataLoader(ds, batch_size=4, drop_last=True)] == [4, 4]
    with pytest.raises(AssertionError, match="Size mismatch"):
        TensorDataset(dt.zeros(3), dt.zeros(4))


def test_shuffle_is_a_permutation_reproducible_with_a_generator():
    ds = _ds(20)

    def order(seed):
        loader = DataLoader(ds, batch_size=6, shuffle=True,
                            generator=dt.Generator().manual_seed(seed))
        return [i for _, y in loader for i in to_np(y).tolist()]
    a, b, c = order(1), order(1), order(2)
    assert sorted(a) == list(range(20)) and a == b and a != c
    loader = DataLoader(ds, batch_size=20, shuffle=True, generator=dt.Generator().manual_seed(0))
    first, second = (to_np(y).tolist() for _, y in (next(iter(loader)), next(iter(loader))))
    assert first != second                     # a new permutation each epoch


def test_custom_collate_sampler_and_batch_sampler():
    ds = _ds(6)
    loader = DataLoader(ds, batch_size=2, collate_fn=lambda samples: [int(y) for _, y in samples])
    assert list(loader) == [[0, 1], [2, 3], [4, 5]]
    loader = DataLoader(ds, batch_size=2, sampler=[5, 4, 0])
    assert [to_np(y).tolist() for _, y in loader] == [[5, 4], [0]]
    bs = BatchSampler(SequentialSampler(range(5)), 2, drop_last=False)
    assert list(bs) == [[0, 1], [2, 3], [4]] and len(bs) == 3
    loader = DataLoader(ds, batch_sampler=[[1, 3], [0]])
    assert [to_np(y).tolist() for _, y in loader] == [[1, 3], [0]]
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(ds, batch_size=2, shuffle=True, sampler=[0])
    unbatched = DataLoader(ds, batch_size=None)
    assert to_np(next(iter(unbatched))[0]).tolist() == [0.0, 1.0]


class Squares(Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, i):
        return {"x": np.full(2, i, dtype=np.float32), "y": i * i, "name": f"s{i}",
                "pair": (float(i), dt.tensor([i]))}


def test_default_collate_of_nested_samples():
    batch = next(iter(DataLoader(Squares(), batch_size=3)))
    assert to_np(batch["x"]).tolist() == [[0, 0], [1, 1], [2, 2]]
    assert batch["y"].dtype is dt.int64 and to_np(batch["y"]).tolist() == [0, 1, 4]
    assert batch["name"] == ["s0", "s1", "s2"]
    assert batch["pair"][0].dtype is dt.float64 and batch["pair"][1].shape == (3, 1)
    Point = namedtuple("Point", "a b")
    p = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert isinstance(p, Point) and to_np(p.a).tolist() == [1, 3]


def test_tensor_dataset_batches_are_fetched_whole_but_look_like_samples():
    ds = _ds(4)
    seen = []
    loader = DataLoader(ds, batch_size=3, collate_fn=lambda s: seen.append(len(s)) or s)
    b = next(iter(loader))
    assert seen == [3] and len(b) == 3
    x, y = b[1]
    assert to_np(x).tolist() == [2.0, 3.0] and int(y) == 1


class Count(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def test_iterable_dataset():
    assert [to_np(b).tolist() for b in DataLoader(Count(5), batch_size=2)] == [[0, 1], [2, 3], [4]]
    assert len(DataLoader(Count(5), batch_size=2, drop_last=True)) == 2
    with pytest.raises(ValueError, match="IterableDataset"):
        DataLoader(Count(3), shuffle=True)


def test_random_split_and_subset():
    ds = _ds(10)
    a, b = random_split(ds, [7, 3], generator=dt.Generator().manual_seed(0))
    ia, ib = a.indices, b.indices
    assert len(a) == 7 and sorted(ia + ib) == list(range(10))
    assert int(a[0][1]) == ia[0]
    c, d, e = random_split(ds, [0.5, 0.3, 0.2])
    assert (len(c), len(d), len(e)) == (5, 3, 2)
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(ds, [3, 3])
    sub = Subset(ds, [9, 0])
    assert to_np(next(iter(DataLoader(sub, batch_size=2)))[1]).tolist() == [9, 0]
    assert len(ConcatDataset([ds, sub])) == 12 and int((ds + sub)[10][1]) == 9


def test_random_sampler_replacement():
    s = RandomSampler(range(3), replacement=True, num_samples=50,
                      generator=dt.Generator().manual_seed(0))
    v = list(s)
    assert len(v) == 50 and set(v) <= {0, 1, 2} and len(set(v)) == 3
