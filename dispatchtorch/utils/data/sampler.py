"""Samplers: which indices a DataLoader fetches, in which order and batches.

Random samplers draw as PyTorch's do: lazily (a sampler of 1e10 indices with
replacement holds 32 at a time), from a generator seeded once per epoch from the
global stream when none is given. The numbers differ from PyTorch's (its generator is
not ours); the draw pattern is the same.
"""
from __future__ import annotations

import itertools

from ... import _dtype as D
from ... import ops as _ops

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler",
           "SubsetRandomSampler", "WeightedRandomSampler"]

_CHUNK = 32          # indices drawn at a time with replacement (PyTorch's)


class Sampler:
    """An iterable of dataset indices."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _epoch_generator(generator):
    """The generator to draw one epoch from: the given one, or a fresh one seeded from
    the global stream (PyTorch's way, so the global stream advances once per epoch)."""
    if generator is not None:
        return generator
    seed = int(_ops.randint(0, 2 ** 62, (), dtype=D.int64).item())
    return _ops.Generator().manual_seed(seed)


class RandomSampler(Sampler):
    """A random permutation per epoch, or num_samples indices drawn with replacement."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        # a generator function: the epoch's seed is drawn at the first index, as PyTorch
        n, count = len(self.data_source), self.num_samples
        generator = _epoch_generator(self.generator)
        if self.replacement:
            for _ in range(count // _CHUNK):
                yield from _ops.randint(0, n, (_CHUNK,), dtype=D.int64,
                                        generator=generator).tolist()
            yield from _ops.randint(0, n, (count % _CHUNK,), dtype=D.int64,
                                    generator=generator).tolist()
            return
        for _ in range(count // n):
            yield from _ops.randperm(n, generator=generator).tolist()
        yield from _ops.randperm(n, generator=generator)[:count % n].tolist()

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order."""

    def __init__(self, indices, generator=None):
        self.indices, self.generator = indices, generator

    def __iter__(self):
        for i in _ops.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """num_samples indices in [0, len(weights)) drawn with probabilities ~ weights."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = _ops.as_tensor(weights, dtype=D.float64)
        if w.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        self.weights, self.num_samples = w, num_samples
        self.replacement, self.generator = replacement, generator

    def __iter__(self):
        drawn = _ops.multinomial(self.weights, self.num_samples, self.replacement,
                                 generator=self.generator)
        yield from iter(drawn.tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups a sampler's indices into lists of batch_size."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        it = iter(self.sampler)
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
