"""P2POp and batch_isend_irecv (what pipeline parallelism schedules): a list of sends and
receives issued together. Every MPI send and receive here is nonblocking, so issuing
them one after another in any order cannot deadlock, as PyTorch promises for a batch."""
from __future__ import annotations

from .._tensor import Tensor
from .collectives import irecv, isend
from .group import default_group


def _check_op(op):
    if op is not isend and op is not irecv:
        raise ValueError("Invalid ``op``. Expected ``op`` to be of type "
                         "``torch.distributed.isend`` or ``torch.distributed.irecv``.")


def _check_single_tensor(param, name):
    if not isinstance(param, Tensor):
        raise TypeError(f"""Invalid function argument. Expected parameter `{name}` of type torch.Tensor
             but got {type(param)} instead.""")


def _canonical(group, peer, group_peer, return_global):
    """PyTorch's _canonicalize_group_rank: a global or a group rank, never both."""
    if group_peer is not None:
        if peer is not None:
            raise ValueError("Can't specify both group_rank and global_rank")
        return group.ranks[group_peer] if return_global else group_peer
    if peer is None:
        raise ValueError("Must specify global_rank or group_rank")
    return peer if return_global else group.group_rank(peer, "P2POp")


class P2POp:
    """One send (op=isend) or receive (op=irecv) of a batch for batch_isend_irecv."""

    def __new__(cls, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        _check_op(op)
        _check_single_tensor(tensor, "tensor")
        return object.__new__(cls)

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        self.op = op
        self.tensor = tensor
        self.group = default_group("P2POp") if group is None else group
        self.peer = _canonical(self.group, peer, group_peer, True)
        self.tag = tag
        self.group_peer = _canonical(self.group, peer, group_peer, False)

    def __repr__(self):
        me = self.group.rank()
        name = self.op.__name__
        s, d = (me, self.group_peer) if "send" in name else (self.group_peer, me)
        return (f"P2POp({name} pg={self.group.backend_name()}, group_src={s}, group_dst={d},  "
                f"{self.tensor.shape}, {self.tensor.dtype})")


def batch_isend_irecv(p2p_op_list):
    """Issue every op of the list (one group); the Works, in the list's order."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    group = p2p_op_list[0].group           # an empty list: IndexError, as PyTorch's
    if not all(group is p.group for p in p2p_op_list):
        raise ValueError("All ops need to use the same group.")
    reqs = []
    for p in p2p_op_list:
        key = "group_dst" if p.op is isend else "group_src"
        work = p.op(p.tensor, group=p.group, tag=p.tag, **{key: p.group_peer})
        if work:
            reqs.append(work)
    return reqs
