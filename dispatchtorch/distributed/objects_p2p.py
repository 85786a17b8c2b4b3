"""send_object_list / recv_object_list: pickled objects point to point, sent as PyTorch
sends them (a tensor of the pickles' sizes, then one uint8 tensor of their bytes), so a
receiver's list length must match the sender's, as in PyTorch."""
from __future__ import annotations

import io
import pickle
import warnings

import numpy as np

from .. import ops as _ops
from .batch_p2p import _canonical
from .collectives import recv, send
from .group import GroupMember, default_group


def _warn_not_in_group(what):
    world = GroupMember.WORLD
    warnings.warn(f"Running {what} on global rank {-1 if world is None else world.rank()} which "
                  f"does not belong to the given group.", stacklevel=3)


def _check_not_self(group, group_rank, kind):
    if group.rank() == group_rank:
        raise ValueError(f"Invalid {kind} rank: {kind} rank should not be the same as the rank "
                         f"of the current process.")


def _group(group, what):
    if group is GroupMember.NON_GROUP_MEMBER:
        default_group(what)
        _warn_not_in_group(what)
        return None
    return default_group(what) if group is None else group


def send_object_list(object_list, dst=None, group=None, device=None, group_dst=None,
                     use_batch=False):
    """Send the picklable objects of object_list to dst (global) or group_dst."""
    pg = _group(group, "send_object_list")
    if pg is None:
        return
    peer = _canonical(pg, dst, group_dst, False)
    _check_not_self(pg, peer, "destination")
    blobs = []
    for obj in object_list:
        f = io.BytesIO()
        pickle.Pickler(f).dump(obj)
        blobs.append(f.getvalue())
    sizes = _ops.from_numpy(np.array([len(b) for b in blobs], dtype=np.int64))
    data = _ops.from_numpy(np.frombuffer(b"".join(blobs), dtype=np.uint8).copy())
    if device is not None:
        sizes, data = sizes.to(device), data.to(device)
    send(sizes, group=pg, group_dst=peer)
    send(data, group=pg, group_dst=peer)


def recv_object_list(object_list, src=None, group=None, device=None, group_src=None,
                     use_batch=False):
    """Fill object_list in place with src's objects; returns the sender's global rank."""
    pg = _group(group, "recv_object_list")
    if pg is None:
        return -1
    peer = _canonical(pg, src, group_src, False)
    _check_not_self(pg, peer, "source")
    sizes = _ops.from_numpy(np.zeros(len(object_list), dtype=np.int64))
    if device is not None:
        sizes = sizes.to(device)
    rank_sizes = recv(sizes, group=pg, group_src=peer)
    counts = [int(c) for c in sizes.cpu().numpy()]
    data = _ops.from_numpy(np.empty(sum(counts), dtype=np.uint8))
    if device is not None:
        data = data.to(device)
    rank_objects = recv(data, group=pg, group_src=peer)
    if rank_sizes != rank_objects:
        raise AssertionError("Mismatch in return ranks for object sizes and objects.")
    raw = data.cpu().numpy().tobytes()
    at = 0
    for i, c in enumerate(counts):
        object_list[i] = pickle.loads(raw[at:at + c])
        at += c
    return rank_objects
