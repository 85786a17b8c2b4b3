"""A TCPStore the ranks build for their own coordination, as a PyTorch script would: rank
0 binds a socket, broadcasts its port (broadcast_object_list) and serves on it (waiting
for every rank to join); the others connect. Concurrent adds, gets, the store's barrier
and a queue, checked against counts each rank works out."""
from __future__ import annotations

import datetime
import socket

import pytest

import dispatchtorch.distributed as dist

ADDS = 50


@pytest.fixture(scope="module")
def store(world):
    r, n = world
    sock = None
    if r == 0:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen()
    port = [sock.getsockname()[1] if r == 0 else None]
    dist.broadcast_object_list(port, src=0)
    t = datetime.timedelta(seconds=30)
    s = dist.TCPStore("127.0.0.1", port[0], n, r == 0, t,
                      master_listen_fd=sock.fileno() if r == 0 else None)
    yield s
    dist.barrier()                             # nobody's client outlives the master's server
    if sock is not None:
        sock.close()


def test_every_rank_joined(store, world):
    r, n = world
    joined = store.num_keys()                  # init/ alone: rank 0's store waited for n
    dist.barrier()                             # before any rank sets a key
    assert joined == 1


def test_concurrent_adds_total_exactly(store, world):
    r, n = world
    mine = [store.add("counter", 1) for _ in range(ADDS)]
    everyone = [None] * n
    dist.all_gather_object(everyone, mine)
    assert sorted(v for vals in everyone for v in vals) == list(range(1, ADDS * n + 1))
    assert int(store.get("counter")) == ADDS * n


def test_each_rank_gets_every_other_ranks_key(store, world):
    r, n = world
    store.set(f"rank{r}", str(r * r))
    assert [store.get(f"rank{i}") for i in range(n)] == [str(i * i).encode() for i in range(n)]


def test_store_barrier_counts_every_rank(store, world):
    r, n = world
    store.barrier("round1", n)
    first = store.get("round1")
    dist.barrier()                             # no rank starts round two before all read
    assert first == str(n).encode()
    store.barrier("round1", n)                 # a reused key counts on: passes at once
    dist.barrier()
    assert store.get("round1") == str(2 * n).encode()


def test_queue_hands_each_item_to_one_rank(store, world):
    r, n = world
    if r == 0:
        for i in range(1, n):
            store.queue_push("work", f"item{i}")
        popped = None
    else:
        popped = store.queue_pop("work").decode()
    got = [None] * n
    dist.all_gather_object(got, popped)
    assert sorted(g for g in got if g) == [f"item{i}" for i in range(1, n)]
    assert store.queue_len("work") == 0


def test_wait_timeout_on_every_rank(store, world):
    with pytest.raises(dist.DistStoreError, match="wait timeout after 50ms, keys: /nobody"):
        store.wait(["nobody"], datetime.timedelta(milliseconds=50))


def test_init_process_group_with_the_store(store, world):
    """PyTorch's idiom: init_process_group(store=..., rank=..., world_size=...). The ranks
    still join through MPI (the store is accepted); the group works, the store too."""
    r, n = world
    dist.destroy_process_group()
    dist.init_process_group("gloo", store=store, rank=r, world_size=n,
                            timeout=datetime.timedelta(seconds=60))
    got = [None] * n
    dist.all_gather_object(got, store.add("after_init", r + 1))
    assert dist.get_world_size() == n and int(store.get("after_init")) >= max(got)
    dist.barrier()
    assert int(store.get("after_init")) == n * (n + 1) // 2
