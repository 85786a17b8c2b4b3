"""Fetchers: turn what the sampler yields (an index, a list of indices, or for an
IterableDataset nothing) into a collated batch. Shared by the main-process iterator
and the workers."""
from __future__ import annotations


class MapFetcher:
    def __init__(self, dataset, collate_fn, auto_collation):
        self.dataset, self.collate_fn, self.auto_collation = dataset, collate_fn, auto_collation

    def __call__(self, index):
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            data = getitems(index) if callable(getitems) else [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class IterableFetcher:
    """Batches of batch_size samples from the dataset's iterator; StopIteration at its
    end (a short last batch first unless drop_last)."""

    def __init__(self, dataset, collate_fn, batch_size, drop_last):
        self.iterator = iter(dataset)
        self.collate_fn, self.batch_size, self.drop_last = collate_fn, batch_size, drop_last

    def __call__(self, _=None):
        if self.batch_size is None:
            return self.collate_fn(next(self.iterator))
        batch = []
        for sample in self.iterator:
            batch.append(sample)
            if len(batch) == self.batch_size:
                break
        if not batch or (self.drop_last and len(batch) < self.batch_size):
            raise StopIteration
        return self.collate_fn(batch)


class FetcherFactory:
    """A picklable recipe for a loader's fetcher (built inside each worker)."""

    def __init__(self, iterable, collate_fn, auto_collation, batch_size, drop_last):
        self.iterable, self.collate_fn = iterable, collate_fn
        self.auto_collation, self.batch_size, self.drop_last = auto_collation, batch_size, drop_last

    def __call__(self, dataset):
        if self.iterable:
            return IterableFetcher(dataset, self.collate_fn, self.batch_size, self.drop_last)
        return MapFetcher(dataset, self.collate_fn, self.auto_collation)
