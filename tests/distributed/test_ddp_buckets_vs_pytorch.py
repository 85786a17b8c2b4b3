"""DistributedDataParallel's bucket layout in a world of one rank (plain pytest), against
PyTorch's own DDP on one gloo rank: the buckets a communication hook sees in the first
iteration (one bucket unless find_unused_parameters) and after the rebuild in gradient
arrival order, for several caps, find_unused_parameters and gradient_as_bucket_view."""
from __future__ import annotations


import numpy as np
import pytest
import torch as pt

import dispatchtorch as torch
import dispatchtorch.distributed as dist

pytestmark = [pytest.mark.skipif(not dist.is_available(), reason="mpi4py is not installed"),
              pytest.mark.filterwarnings("ignore::UserWarning")]


@pytest.fixture(scope="module", autouse=True)
def groups(beside_pytorch_groups):
    yield


def _net(lib, bias=False):
    """Layers used out of registration order, so arrival order differs from it. Without
    biases: PyTorch delivers a Linear's bias gradient before its weight's (the weight's
    goes through a transpose node), dispatchtorch the weight's first, so with biases a
    bucket boundary can fall one tensor apart (docs/distributed.md)."""
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = lib.nn.Linear(32, 300, bias=bias)
            self.l2 = lib.nn.Linear(300, 300, bias=bias)
            self.l3 = lib.nn.Linear(32, 300, bias=bias)
            self.l4 = lib.nn.Linear(300, 8, bias=bias)

        def forward(self, x):
            h = lib.relu(self.l3(x))
            h = lib.relu(self.l2(h)) + lib.relu(self.l1(x))
            return self.l4(h)
    return Net()


def _buckets_seen(lib, steps=3, bias=False, **kw):
    lib.manual_seed(0)
    m = _net(lib, bias)
    names = {id(p): n for n, p in m.named_parameters()}
    ddp = lib.nn.parallel.DistributedDataParallel(m, **kw)
    log, grads = [], []

    def hook(state, bucket):
        log.append((step, bucket.index(), bucket.is_last(),
                    [names[id(p)] for p in bucket.parameters()]))
        fut = lib.futures.Future()
        fut.set_result(bucket.buffer())
        return fut
    ddp.register_comm_hook(None, hook)
    x = lib.from_numpy(np.random.default_rng(1).standard_normal((4, 32)).astype("float32"))
    for step in range(steps):
        ddp(x).square().sum().backward()
        grads.append([p.grad.detach().numpy().copy() for p in m.parameters()])
        for p in m.parameters():
            p.grad = None
    return log, grads


@pytest.mark.parametrize("kw", [
    {}, {"bucket_cap_mb": 0.3}, {"bucket_cap_mb": 0.05}, {"bucket_cap_mb": 1e-4},
    {"bucket_cap_mb": 0.3, "find_unused_parameters": True},
    {"find_unused_parameters": True},
    {"bucket_cap_mb": 0.3, "gradient_as_bucket_view": True},
    {"bucket_cap_mb": 0.3, "static_graph": True},
], ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()) or "defaults")
def test_buckets_as_pytorch_lays_them_out(kw):
    ours, our_grads = _buckets_seen(torch, **kw)
    theirs, their_grads = _buckets_seen(pt, **kw)
    assert ours == theirs
    for a, b in zip(our_grads, their_grads):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)


def test_the_rebuild_changes_the_layout_once():
    log, _ = _buckets_seen(torch, steps=3, bias=True, bucket_cap_mb=0.05)
    per_step = [[names for s, _, _, names in log if s == k] for k in range(3)]
    assert len(per_step[0]) == 1 and len(per_step[1]) > 1 and per_step[1] == per_step[2]
