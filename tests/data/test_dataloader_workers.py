"""DataLoader with worker processes: the same batches in the same order as without
workers, worker_init_fn / get_worker_info / persistent workers / prefetch, an
IterableDataset sharded by worker, and a worker's exception raised in the main process
with the worker's traceback. Small datasets: each test starts two workers at most."""
from __future__ import annotations

import os

import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch.utils.data import (DataLoader, Dataset, IterableDataset, TensorDataset,
                                      get_worker_info)


def _ds(n=23):
    return TensorDataset(dt.arange(n * 2.0).reshape(n, 2), dt.arange(n))


def _flat(loader):
    return [[b.numpy().tolist() for b in batch] for batch in loader]


def test_workers_give_the_batches_of_the_main_process_in_order():
    ds = _ds()
    single = _flat(DataLoader(ds, batch_size=4))
    loader = DataLoader(ds, batch_size=4, num_workers=2, prefetch_factor=3)
    assert _flat(loader) == single
    assert len(loader) == 6


class _Pids(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = get_worker_info()
        return {"i": i, "pid": os.getpid(), "worker": info.id, "n": info.num_workers,
                "tag": getattr(info.dataset, "tag", None)}


def _init(worker_id):
    get_worker_info().dataset.tag = f"init{worker_id}"


def test_worker_processes_worker_info_and_init_fn():
    assert get_worker_info() is None
    batches = list(DataLoader(_Pids(), batch_size=2, num_workers=2, worker_init_fn=_init))
    pids = {int(p) for b in batches for p in b["pid"]}
    assert os.getpid() not in pids and len(pids) == 2            # real processes
    assert [b["i"].tolist() for b in batches] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert [int(b["worker"][0]) for b in batches] == [0, 1, 0, 1]     # round robin
    assert all(b["tag"] == [f"init{int(b['worker'][0])}"] * 2 for b in batches)
    assert all(int(b["n"][0]) == 2 for b in batches)


class _Fails(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 3:
            raise KeyError(f"no sample {i}")
        return i


def test_a_worker_exception_reaches_the_main_process_with_its_traceback():
    loader = DataLoader(_Fails(), batch_size=2, num_workers=2)
    it = iter(loader)
    assert next(it).tolist() == [0, 1]
    with pytest.raises(KeyError) as info:
        next(it)
    msg = str(info.value)
    assert "Caught KeyError in DataLoader worker process 1" in msg
    assert "Traceback (most recent call last)" in msg and "in __getitem__" in msg
    assert "no sample 3" in msg


def _bad_init(worker_id):
    raise ValueError(f"init failed in {worker_id}")


def test_worker_init_fn_errors_are_raised_too():
    with pytest.raises(ValueError, match="init failed in 0"):
        list(DataLoader(_ds(), batch_size=4, num_workers=1, worker_init_fn=_bad_init))


class _Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))


def test_iterable_dataset_sharded_by_worker():
    got = [b.tolist() for b in DataLoader(_Stream(11), batch_size=2, num_workers=2)]
    # worker 0 yields 0 2 4 ..., worker 1 yields 1 3 5 ...; batches alternate workers
    assert got == [[0, 2], [1, 3], [4, 6], [5, 7], [8, 10], [9]]
    assert sorted(sum(got, [])) == list(range(11))


def test_persistent_workers_survive_epochs_and_reshuffle():
    loader = DataLoader(_ds(12), batch_size=3, num_workers=2, shuffle=True,
                        persistent_workers=True, generator=dt.Generator().manual_seed(0))
    first = _flat(loader)
    workers = loader._iterator._workers
    second = _flat(loader)
    assert loader._iterator._workers is workers and all(w.is_alive() for w in workers)
    for epoch in (first, second):
        assert sorted(i for b in epoch for i in b[1]) == list(range(12))
    assert first != second
    stream = DataLoader(_Stream(5), batch_size=2, num_workers=2, persistent_workers=True)
    assert [b.tolist() for b in stream] == [b.tolist() for b in stream] == [[0, 2], [1, 3], [4]]
    loader._iterator._shutdown()
    stream._iterator._shutdown()
    assert not any(w.is_alive() for w in workers)


def test_worker_seeds_come_from_the_loader_generator():
    class Draw(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return dt.rand(()).item(), get_worker_info().seed

    def run(seed):
        loader = DataLoader(Draw(), batch_size=None, num_workers=2,
                            generator=dt.Generator().manual_seed(seed))
        return [tuple(x) for x in loader]
    a, b, c = run(1), run(1), run(2)
    assert a == b and a != c
    assert a[1][1] == a[0][1] + 1                     # seed = base_seed + worker id


def test_options_are_checked_as_in_pytorch():
    ds = _ds()
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified"):
        DataLoader(ds, prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="timeout option should be non-negative"):
        DataLoader(ds, timeout=-1)
    loader = DataLoader(ds, batch_size=5, num_workers=1, pin_memory=True,
                        multiprocessing_context="spawn" if False else None, timeout=30)
    assert loader.prefetch_factor == 2 and loader.pin_memory
    assert [len(b[0]) for b in loader] == [5, 5, 5, 5, 3]


def _die(worker_id):
    os._exit(3)


def test_a_dead_worker_is_reported_not_waited_for():
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(DataLoader(_ds(), batch_size=4, num_workers=1, worker_init_fn=_die))


def test_spawned_workers_work_too():
    """multiprocessing_context='spawn': the dataset, sampler and collate travel pickled."""
    loader = DataLoader(_ds(9), batch_size=4, num_workers=1, multiprocessing_context="spawn")
    assert _flat(loader) == _flat(DataLoader(_ds(9), batch_size=4))
