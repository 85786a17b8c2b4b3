"""new_subgroups / new_subgroups_by_enumeration and get_pg_count on every rank, against
the subgroup each rank works out by hand; PyTorch's errors."""
from __future__ import annotations

import pytest

import dispatchtorch as torch
import dispatchtorch.distributed as dist


def _sum_in(g):
    t = torch.tensor([float(dist.get_rank())])
    dist.all_reduce(t, group=g)
    return t.item()


def test_new_subgroups_of_one_rank_each(world):
    r, n = world
    before = dist.get_pg_count()
    cur, subs = dist.new_subgroups(group_size=1)
    assert dist.get_pg_count() == before + n            # every rank counts every group
    assert len(subs) == n and subs[r] is cur
    assert dist.get_process_group_ranks(cur) == [r] and _sum_in(cur) == r
    assert all(s is dist.GroupMember.NON_GROUP_MEMBER for i, s in enumerate(subs) if i != r)
    dist.destroy_process_group(cur)


def test_new_subgroups_whole_world(world):
    r, n = world
    cur, subs = dist.new_subgroups(group_size=n)
    assert subs == [cur] and dist.get_process_group_ranks(cur) == list(range(n))
    assert _sum_in(cur) == n * (n - 1) / 2
    dist.destroy_process_group(cur)


def test_new_subgroups_by_enumeration(world):
    r, n = world
    lists = [[n - 1], list(range(n - 1))]       # 2 ranks: [[1], [0]]; 3: [[2], [0, 1]]
    cur, subs = dist.new_subgroups_by_enumeration(lists)
    assert len(subs) == 2
    mine = lists[0] if r == n - 1 else lists[1]
    assert cur is subs[0 if r == n - 1 else 1]
    assert dist.get_process_group_ranks(cur) == mine and _sum_in(cur) == sum(mine)
    dist.destroy_process_group(cur)


def test_subgroup_errors(world):
    r, n = world
    with pytest.raises(ValueError, match=r"The arg 'group_size' \(0\) must be positive"):
        dist.new_subgroups(group_size=0)
    with pytest.raises(ValueError, match=rf"The arg 'group_size' \({n + 1}\) must not exceed "
                                         rf"the world size \({n}\)"):
        dist.new_subgroups(group_size=n + 1)
    with pytest.raises(ValueError, match="Default group size only takes effect when CUDA"):
        dist.new_subgroups()
    with pytest.raises(ValueError, match="The arg 'ranks_per_subgroup_list' cannot be empty"):
        dist.new_subgroups_by_enumeration([])
    if n == 3:
        with pytest.raises(ValueError, match=r"The world size \(3\) must be divisible by "
                                             r"'group_size=2'"):
            dist.new_subgroups(group_size=2)
    with pytest.raises(ValueError, match=r"Rank 0 has appeared in both subgroup \[0\] and "
                                         r"\[0, 1\]"):
        dist.new_subgroups_by_enumeration([[0], [0, 1]])


def test_pg_count_counts_new_groups(world):
    r, n = world
    before = dist.get_pg_count()
    assert before >= 1
    g = dist.new_group([0])
    assert dist.get_pg_count() == before + 1
    dist.destroy_process_group(g)
