"""Collectives of picklable Python objects (over the group's MPI communicator, whatever
engine its tensors use, as PyTorch pickles them into tensors)."""
from __future__ import annotations

from .collectives import _root
from .group import resolve


def _blocking(pg, what, call):
    pg.watchdog.arm(what, pg.timeout_s)
    try:
        return call()
    finally:
        pg.watchdog.disarm()


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """object_list[:] = src's object_list (same length on every rank)."""
    pg = resolve(group, "broadcast_object_list")
    if pg is None:
        return
    if not isinstance(object_list, list):
        raise TypeError(f"broadcast_object_list: object_list must be a list, got "
                        f"{type(object_list).__name__}")
    root = _root(pg, src, group_src, "broadcast_object_list", "src")
    got = _blocking(pg, "broadcast_object_list",
                    lambda: pg.comm.bcast(object_list if pg.rank() == root else None, root))
    if len(got) != len(object_list):
        raise ValueError(f"broadcast_object_list: src's list has {len(got)} objects, this "
                         f"rank's has {len(object_list)}")
    object_list[:] = got


def all_gather_object(object_list, obj, group=None):
    """object_list[i] = rank i's obj (object_list: one slot per rank)."""
    pg = resolve(group, "all_gather_object")
    if pg is None:
        return
    if not isinstance(object_list, list) or len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list must be a list of world size "
                         f"({pg.size()}) entries")
    object_list[:] = _blocking(pg, "all_gather_object", lambda: pg.comm.allgather(obj))


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """object_gather_list[i] on dst = rank i's obj."""
    pg = resolve(group, "gather_object")
    if pg is None:
        return
    root = _root(pg, dst, group_dst, "gather_object", "dst")
    me = pg.rank() == root
    if me and (not isinstance(object_gather_list, list) or len(object_gather_list) != pg.size()):
        raise ValueError(f"gather_object: object_gather_list must be a list of world size "
                         f"({pg.size()}) entries on the destination rank")
    if not me and object_gather_list is not None:
        raise ValueError("gather_object: Argument ``object_gather_list`` must NOT be specified "
                         "on non-destination ranks.")
    got = _blocking(pg, "gather_object", lambda: pg.comm.gather(obj, root))
    if me:
        object_gather_list[:] = got


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
                        group=None, group_src=None):
    """scatter_object_output_list[0] = src's scatter_object_input_list[rank]."""
    pg = resolve(group, "scatter_object_list")
    if pg is None:
        return
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("scatter_object_list: Expected argument scatter_object_output_list to be "
                         "a list of size at least 1.")
    root = _root(pg, src, group_src, "scatter_object_list", "src")
    if pg.rank() == root and (not isinstance(scatter_object_input_list, list)
                              or len(scatter_object_input_list) != pg.size()):
        raise ValueError(f"scatter_object_list: scatter_object_input_list must be a list of "
                         f"world size ({pg.size()}) entries on the source rank")
    inp = scatter_object_input_list if pg.rank() == root else None
    scatter_object_output_list[0] = _blocking(pg, "scatter_object_list",
                                              lambda: pg.comm.scatter(inp, root))
