"""P2POp / batch_isend_irecv, send_object_list / recv_object_list and the coalesced
collectives on every rank, against answers each rank computes by hand; PyTorch's errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import dispatchtorch as torch
import dispatchtorch.distributed as dist


def test_batch_ring_both_directions(world):
    """Each rank sends to both neighbours and receives from both, in one batch."""
    r, n = world
    nxt, prv = (r + 1) % n, (r - 1) % n
    from_prv, from_nxt = torch.zeros(3), torch.zeros(3)
    ops = [dist.P2POp(dist.irecv, from_prv, prv, tag=1),     # receives first: no deadlock
           dist.P2POp(dist.irecv, from_nxt, nxt, tag=2),
           dist.P2POp(dist.isend, torch.tensor([r, 10 * r, 100.0 + r]), nxt, tag=1),
           dist.P2POp(dist.isend, torch.tensor([-r, 7.0, 0.5 * r]), prv, tag=2)]
    reqs = dist.batch_isend_irecv(ops)
    assert len(reqs) == 4
    for w in reqs:
        assert w.wait() is True
    assert from_prv.tolist() == [prv, 10 * prv, 100.0 + prv]
    assert from_nxt.tolist() == [-nxt, 7.0, 0.5 * nxt]


def test_p2pop_fields_and_group_peer(world):
    r, n = world
    op = dist.P2POp(dist.isend, torch.ones(1), group_peer=(r + 1) % n, tag=5)
    assert (op.peer, op.group_peer, op.tag) == ((r + 1) % n, (r + 1) % n, 5)
    assert op.group is dist.group.WORLD
    assert "isend" in repr(op) and f"group_src={r}" in repr(op)


def test_batch_on_subgroup_uses_group_ranks(world):
    """On a group of global ranks [n-1, 0], group rank 0 is global n-1."""
    r, n = world
    g = dist.new_group([n - 1, 0], sort_ranks=False)
    if r not in (0, n - 1):
        assert g is dist.GroupMember.NON_GROUP_MEMBER
        return
    me = 0 if r == n - 1 else 1
    op = dist.P2POp(dist.isend, torch.tensor([float(r)]), group=g, group_peer=1 - me)
    assert op.peer == [n - 1, 0][1 - me]
    got = torch.zeros(1)
    reqs = dist.batch_isend_irecv([op, dist.P2POp(dist.irecv, got, group=g, group_peer=1 - me)])
    [w.wait() for w in reqs]
    assert got.item() == [n - 1, 0][1 - me]
    dist.destroy_process_group(g)


def test_p2pop_and_batch_errors(world):
    r, n = world
    t = torch.ones(1)
    with pytest.raises(ValueError, match=r"Invalid ``op``. Expected ``op`` to be of type "):
        dist.P2POp(print, t, 0)
    with pytest.raises(TypeError, match="Expected parameter `tensor` of type torch.Tensor"):
        dist.P2POp(dist.isend, [1.0], 0)
    with pytest.raises(ValueError, match="Must specify global_rank or group_rank"):
        dist.P2POp(dist.isend, t)
    with pytest.raises(ValueError, match="Can't specify both group_rank and global_rank"):
        dist.P2POp(dist.isend, t, 0, group_peer=0)
    with pytest.raises(ValueError, match="Each op is expected to to be of type"):
        dist.batch_isend_irecv([1])
    with pytest.raises(IndexError):
        dist.batch_isend_irecv([])
    g = dist.new_group(list(range(n)))
    ops = [dist.P2POp(dist.isend, t, (r + 1) % n), dist.P2POp(dist.irecv, t, (r + 1) % n, g)]
    with pytest.raises(ValueError, match="All ops need to use the same group."):
        dist.batch_isend_irecv(ops)
    with pytest.raises(ValueError, match="destination rank should not be the same as the rank"):
        dist.batch_isend_irecv([dist.P2POp(dist.isend, t, r)])
    dist.destroy_process_group(g)


def test_send_recv_object_list(world):
    r, n = world
    if r == 0:
        for dst in range(1, n):
            dist.send_object_list(["foo", dst, {1: (2, dst)}, None], dst=dst)
    else:
        got = [None, None, None, None]
        assert dist.recv_object_list(got, src=0) == 0
        assert got == ["foo", r, {1: (2, r)}, None]


def test_send_recv_object_list_group_ranks_and_tensors(world):
    r, n = world
    if r == n - 1:
        dist.send_object_list([np.arange(3) * r, "x" * 1000], group_dst=0)
    elif r == 0:
        got = [1, 2]
        assert dist.recv_object_list(got, group_src=n - 1) == n - 1
        assert np.array_equal(got[0], np.arange(3) * (n - 1)) and got[1] == "x" * 1000


def test_object_p2p_errors(world):
    r, n = world
    with pytest.raises(ValueError, match="Invalid destination rank: destination rank should not"):
        dist.send_object_list([1], dst=r)
    with pytest.raises(ValueError, match="Invalid source rank: source rank should not"):
        dist.recv_object_list([1], src=r)
    with pytest.raises(ValueError, match="Must specify global_rank or group_rank"):
        dist.recv_object_list([1])


def test_all_reduce_coalesced(world):
    r, n = world
    a = torch.tensor([1.0 * r, 2.0])
    b = torch.tensor([[r, r + 1], [3.0, 4.0]])
    with pytest.warns(FutureWarning, match="`torch.distributed.all_reduce_coalesced` will be "
                                           "deprecated"):
        assert dist.all_reduce_coalesced([a, b]) is None
    s = n * (n - 1) / 2
    assert a.tolist() == [s, 2.0 * n]
    assert b.tolist() == [[s, s + n], [3.0 * n, 4.0 * n]]
    c = torch.tensor([r + 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        fut = dist.all_reduce_coalesced([c], op=dist.ReduceOp.MAX, async_op=True)
        assert isinstance(fut, torch.futures.Future)     # PyTorch 2.13: a Future, not a Work
        value = fut.wait()
        assert len(value) == 1 and value[0] is c and c.item() == n + 1.0
        with pytest.raises(ValueError, match="Invalid usage of tensors with different dtypes"):
            dist.all_reduce_coalesced([a, torch.tensor([1])])


def test_all_gather_coalesced(world):
    r, n = world
    inp = [torch.tensor([r, -r], dtype=torch.int64), torch.tensor([[10 * r]], dtype=torch.int64)]
    out = [[torch.zeros(2, dtype=torch.int64), torch.zeros(1, 1, dtype=torch.int64)]
           for _ in range(n)]
    with pytest.warns(FutureWarning, match="`torch.distributed.all_gather_coalesced` will be "
                                           "deprecated"):
        dist.all_gather_coalesced(out, inp)
    for i in range(n):
        assert out[i][0].tolist() == [i, -i] and out[i][1].tolist() == [[10 * i]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(TypeError, match="output_tensor_lists should be a list"):
            dist.all_gather_coalesced(torch.ones(1), [torch.ones(1)])


def test_outside_group_warns_and_returns(world):
    """A rank outside the group: PyTorch's warning, nothing sent, recv_object_list -> -1."""
    r, n = world
    g = dist.new_group([0])
    if r != 0:
        with pytest.warns(UserWarning, match=f"Running recv_object_list on global rank {r} "
                                             f"which does not belong to the given group."):
            assert dist.recv_object_list([None], src=0, group=g) == -1
        with pytest.warns(UserWarning, match="Running send_object_list on global rank"):
            assert dist.send_object_list([1], dst=0, group=g) is None
        with pytest.warns(UserWarning, match="Running all_reduce_coalesced on global rank"):
            warnings.simplefilter("ignore", FutureWarning)
            assert dist.all_reduce_coalesced([torch.ones(1)], group=g) is None
    else:
        dist.destroy_process_group(g)
