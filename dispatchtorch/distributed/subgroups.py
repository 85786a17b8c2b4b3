"""new_subgroups / new_subgroups_by_enumeration: many new_group calls at once, returning
(the subgroup holding this rank, every subgroup), as PyTorch's."""
from __future__ import annotations

from .group import get_process_group_ranks, get_rank, get_world_size, new_group


def new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None,
                  group_desc=None):
    """Split `group` (default: world) into consecutive subgroups of group_size ranks."""
    if group_size is None:
        from .._accelerator import DeviceModule       # torch.cuda, without the package above
        cuda = DeviceModule("cuda")
        if not cuda.is_available():
            raise ValueError("Default group size only takes effect when CUDA is available."
                             "If your subgroup using a backend that does not depend on CUDA,"
                             "please pass in 'group_size' correctly.")
        group_size = cuda.device_count()
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    world_size = get_world_size(group=group)
    if world_size < group_size:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size "
                         f"({world_size})")
    if world_size % group_size != 0:
        raise ValueError(f"The world size ({world_size}) must be divisible by "
                         f"'group_size={group_size}'")
    ranks = get_process_group_ranks(group)
    return new_subgroups_by_enumeration([ranks[i:i + group_size]
                                         for i in range(0, len(ranks), group_size)],
                                        timeout=timeout, backend=backend, pg_options=pg_options,
                                        group_desc=group_desc)


def new_subgroups_by_enumeration(ranks_per_subgroup_list, timeout=None, backend=None,
                                 pg_options=None, group_desc=None):
    """One new_group per list of ranks (lists must not overlap)."""
    if ranks_per_subgroup_list is None or len(ranks_per_subgroup_list) == 0:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    subgroups, cur_subgroup, owner = [], None, {}
    my_rank = get_rank()
    for ranks in ranks_per_subgroup_list:
        subgroup = new_group(ranks=ranks, timeout=timeout, backend=backend,
                             pg_options=pg_options, group_desc=group_desc)
        subgroups.append(subgroup)
        for rank in ranks:
            if rank in owner:
                raise ValueError(f"Rank {rank} has appeared in both subgroup {owner[rank]} and "
                                 f"{ranks}")
            owner[rank] = ranks
            if my_rank == rank:
                cur_subgroup = subgroup
    return cur_subgroup, subgroups
