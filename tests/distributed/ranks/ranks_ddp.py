"""DistributedDataParallel and DistributedSampler inside an MPI job: training on N ranks
equals single-process training on the full batch (each rank computes that reference
itself), with identical weights on every rank."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as torch
import dispatchtorch.distributed as dist
from dispatchtorch import nn
from dispatchtorch.nn.parallel import DistributedDataParallel as DDP
from dispatchtorch.utils.data.distributed import DistributedSampler

N = 12          # samples: divides by 2 and 3 ranks


class Net(nn.Module):
    def __init__(self, unused=False):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(5, 7), nn.Linear(7, 3)
        self.extra = nn.Linear(3, 3) if unused else None
        self.register_buffer("scale", torch.ones(3))

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x))) * self.scale


def _net(**kw):
    torch.manual_seed(0)
    return Net(**kw).double()


def _data():
    g = np.random.default_rng(1)
    return torch.tensor(g.normal(size=(N, 5))), torch.tensor(g.normal(size=(N, 3)))


def _mine(t, r, n):
    return t[r * N // n:(r + 1) * N // n]


def _perturb(m, r):
    with torch.no_grad():                   # ranks differ until the wrap broadcasts rank 0's
        for p in m.parameters():
            p.add_(0.5 * r)
        m.scale.fill_(1.0 + r)


def _same_on_every_rank(m):
    mine = [p.detach().numpy().copy() for p in m.parameters()]
    every = [None] * dist.get_world_size()
    dist.all_gather_object(every, mine)
    for other in every:
        for a, b in zip(mine, other):
            assert np.array_equal(a, b)


@pytest.mark.parametrize("bucket_cap_mb,as_view,set_to_none",
                         [(25, False, True), (1e-6, False, False), (1e-6, True, True),
                          (25, True, False)],
                         ids=["one-bucket", "bucket-per-param", "bucket-view", "view-kept-grads"])
def test_ddp_20_steps_equal_full_batch(world, bucket_cap_mb, as_view, set_to_none):
    r, n = world
    X, Y = _data()
    ref = _net()
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    m = _net()
    _perturb(m, r)
    ddp = DDP(m, bucket_cap_mb=bucket_cap_mb, gradient_as_bucket_view=as_view)
    assert ddp.module is m
    assert len(ddp.reducer.buckets) == 1      # PyTorch's first iteration: one bucket
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    for _ in range(20):
        opt_ref.zero_grad()
        nn.functional.mse_loss(ref(X), Y).backward()
        opt_ref.step()
        opt.zero_grad(set_to_none=set_to_none)
        nn.functional.mse_loss(ddp(_mine(X, r, n)), _mine(Y, r, n)).backward()
        opt.step()
    # rebuilt after the first backward, in the order the gradients arrived (a bucket
    # closes once it holds the cap or more: at 1 byte, every tensor alone)
    assert len(ddp.reducer.buckets) == (1 if bucket_cap_mb == 25 else 4)
    if as_view:
        b0 = ddp.reducer.buckets[0]
        assert all(p.grad is s for p, s in zip(b0.params, b0.slots))
    for a, b in zip(ref.parameters(), m.parameters()):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=0, atol=1e-6)
    assert m.scale.tolist() == [1.0] * 3          # broadcast_buffers: rank 0's buffer
    _same_on_every_rank(m)


def test_no_sync_accumulation_equals_larger_batch(world):
    r, n = world
    X, Y = _data()
    ddp = DDP(_net())
    half = N // n // 2 if N // n >= 2 else 1
    x, y = _mine(X, r, n), _mine(Y, r, n)
    with ddp.no_sync():
        nn.functional.mse_loss(ddp(x[:half]), y[:half]).backward()
    nn.functional.mse_loss(ddp(x[half:]), y[half:]).backward()
    # the same larger batch in one process: the mean over each micro-batch, summed,
    # with micro-batches of equal size: 2 x the gradient of the mean over all samples
    ref = _net()
    (2 * nn.functional.mse_loss(ref(X), Y)).backward()
    for a, b in zip(ref.parameters(), ddp.module.parameters()):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=0, atol=1e-6)


def test_find_unused_parameters_and_the_error_without(world):
    r, n = world
    X, Y = _data()
    ddp = DDP(_net(unused=True), find_unused_parameters=True)
    nn.functional.mse_loss(ddp(_mine(X, r, n)), _mine(Y, r, n)).backward()
    ref = _net(unused=True)
    nn.functional.mse_loss(ref(X), Y).backward()
    for (name, a), b in zip(ref.named_parameters(), ddp.module.parameters()):
        if name.startswith("extra"):
            assert b.grad is None and a.grad is None
        else:
            np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=0, atol=1e-6)
    strict = DDP(_net(unused=True))
    with pytest.raises(RuntimeError, match="find_unused_parameters=True.*extra.weight"):
        nn.functional.mse_loss(strict(_mine(X, r, n)), _mine(Y, r, n)).backward()


def test_state_dict_prefix_as_pytorch(world):
    m = _net()
    ddp = DDP(m)
    keys = list(ddp.state_dict())
    assert keys == ["module." + k for k in m.state_dict()]
    fresh = DDP(_net())
    fresh.load_state_dict(ddp.state_dict())
    with pytest.raises(RuntimeError):
        fresh.load_state_dict(m.state_dict())       # the wrapper expects the prefix


@pytest.mark.parametrize("shuffle,drop_last", [(False, False), (True, False), (True, True)])
def test_distributed_sampler_partitions_the_dataset(world, shuffle, drop_last):
    r, n = world
    size = 10                                        # not a multiple of 3: padding or drop
    s = DistributedSampler(range(size), shuffle=shuffle, seed=3, drop_last=drop_last)
    s.set_epoch(2)
    mine = list(s)
    every = [None] * n
    dist.all_gather_object(every, mine)
    assert all(len(e) == len(s) == len(mine) for e in every)
    flat = [i for pos in range(len(mine)) for i in (e[pos] for e in every)]
    if drop_last:
        assert len(set(flat)) == len(flat) == (size // n) * n
    else:
        assert set(flat) == set(range(size)) and len(flat) == -(-size // n) * n
    if not shuffle:
        assert mine == (list(range(size)) + list(range(size)))[r:len(flat):n]


def test_buckets_launch_during_backward(world):
    r, n = world
    X, Y = _data()
    m = _net()
    ddp = DDP(m, bucket_cap_mb=1e-6)                  # a bucket per parameter, once rebuilt
    nn.functional.mse_loss(ddp(_mine(X, r, n)), _mine(Y, r, n)).backward()   # one bucket
    seen = []
    # runs after DDP's own hook on fc1.bias: fc2's buckets (the first ones) are in flight
    m.fc1.bias.register_hook(lambda g: seen.append(
        ([b.work is not None for b in ddp.reducer.buckets], ddp.reducer.in_backward)))
    nn.functional.mse_loss(ddp(_mine(X, r, n)), _mine(Y, r, n)).backward()
    (launched, in_backward), = seen
    assert launched[0] and launched[1] and in_backward
    first = ddp.reducer.buckets[0].params
    assert len(first) == 1 and first[0] is m.fc2.weight     # the first gradient to arrive
    assert all(b.work is None for b in ddp.reducer.buckets)     # all waited for and reset


def test_ddp_on_opencl_tensors_through_host_buffers(world):
    from .ranks_collectives import opencl_reason
    why = opencl_reason()
    if why:
        pytest.skip(why)
    r, n = world
    X, Y = (t.float() for t in _data())

    def make(device):
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 3)).to(device)
    ref, m = make("cpu"), make("opencl")
    ddp = DDP(m, bucket_cap_mb=1e-4)
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.1)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    for _ in range(3):
        opt_ref.zero_grad()
        nn.functional.mse_loss(ref(X), Y).backward()
        opt_ref.step()
        opt.zero_grad()
        nn.functional.mse_loss(ddp(_mine(X, r, n).to("opencl")),
                               _mine(Y, r, n).to("opencl")).backward()
        opt.step()
    for a, b in zip(ref.parameters(), m.parameters()):
        np.testing.assert_allclose(b.detach().cpu().numpy(), a.detach().numpy(), atol=1e-5)
