"""DistributedSampler: each rank's share of a dataset, as torch.utils.data.distributed.

The index stream follows PyTorch's algorithm exactly (permute with a generator seeded
`seed + epoch`, pad by wrapping or drop to a multiple of the world size, take every
`num_replicas`-th index from `rank`); randperm draws PyTorch's CPU stream, so a seed
gives PyTorch's shuffles too."""
from __future__ import annotations

import math

from ... import ops as _ops
from .sampler import Sampler


class DistributedSampler(Sampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            from ... import distributed as dist
            if not dist.is_available():
                raise RuntimeError(f"Requires distributed package to be available "
                                   f"({dist.unavailable_reason()})")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = _ops.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = _ops.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Seed the next epoch's permutation with `seed + epoch` (the same on every rank)."""
        self.epoch = epoch
