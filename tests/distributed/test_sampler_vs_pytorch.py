"""DistributedSampler against PyTorch's (a dev-only dependency; skips without it): the
same index streams, shuffled or not (our randperm draws PyTorch's CPU stream)."""
from __future__ import annotations

import pytest

from dispatchtorch.utils.data.distributed import DistributedSampler

torch = pytest.importorskip("torch")
from torch.utils.data import distributed as torch_distributed  # noqa: E402

CASES = [(10, 3, False), (10, 3, True), (12, 4, False), (5, 4, True), (2, 5, False),
         (7, 2, True)]


@pytest.mark.parametrize("size,replicas,drop_last", CASES)
def test_sequential_streams_equal_pytorchs(size, replicas, drop_last):
    for rank in range(replicas):
        ours = DistributedSampler(range(size), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = torch_distributed.DistributedSampler(range(size), replicas, rank, shuffle=False,
                                                      drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


@pytest.mark.parametrize("size,replicas,drop_last", CASES)
def test_shuffled_streams_equal_pytorchs(size, replicas, drop_last):
    for epoch in (0, 3):
        for rank in range(replicas):
            ours = DistributedSampler(range(size), replicas, rank, seed=5, drop_last=drop_last)
            theirs = torch_distributed.DistributedSampler(range(size), replicas, rank, seed=5,
                                                          drop_last=drop_last)
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert list(ours) == list(theirs)
    a = DistributedSampler(range(50), 2, 0, seed=5)
    first = list(a)
    a.set_epoch(1)
    assert list(a) != first                     # a new permutation per epoch
