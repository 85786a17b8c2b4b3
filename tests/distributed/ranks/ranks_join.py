"""Join / DDP.join() inside an MPI job: rank r has 2 + r batches; the ranks that ran out
shadow the others' collectives, and every rank ends with the parameters of a gold run
computed here by hand (each active rank's own gradient summed, the joined ones adding
nothing, divided by the initial world size or by the number still active)."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as torch
import dispatchtorch.distributed as dist
from dispatchtorch import nn
from dispatchtorch.distributed.algorithms import Join, Joinable, JoinHook
from dispatchtorch.distributed.algorithms.ddp_comm_hooks import default_hooks
from dispatchtorch.nn.parallel import DistributedDataParallel as DDP

from .ranks_ddp import Net      # fc1 5 -> 7, tanh, fc2 7 -> 3, times a buffer; `extra` unused

LR = 0.1


def _net(**kw):
    torch.manual_seed(0)
    return Net(**kw).double()


def _batch(r, t):
    g = np.random.default_rng(100 * r + t)
    return torch.tensor(g.normal(size=(3, 5))), torch.tensor(g.normal(size=(3, 3)))


def _steps(r):
    return 2 + r


def _gold(n, divide_by_initial, **kw):
    """The training every rank should end with, on one process."""
    ref = _net(**kw)
    for t in range(_steps(n - 1)):
        active = [r for r in range(n) if t < _steps(r)]
        total = [torch.zeros_like(p) for p in ref.parameters()]
        for r in active:
            ref.zero_grad()
            x, y = _batch(r, t)
            nn.functional.mse_loss(ref(x), y).backward()
            for s, p in zip(total, ref.parameters()):
                if p.grad is not None:
                    s.add_(p.grad)
        with torch.no_grad():
            for s, p in zip(total, ref.parameters()):
                p.sub_(LR * s / (n if divide_by_initial else len(active)))
    return [p.detach().numpy().copy() for p in ref.parameters()]


def _train(r, ddp, **join_kw):
    opt = torch.optim.SGD(ddp.parameters(), lr=LR)
    with ddp.join(**join_kw):
        for t in range(_steps(r)):
            opt.zero_grad()
            x, y = _batch(r, t)
            nn.functional.mse_loss(ddp(x), y).backward()
            opt.step()
    return [p.detach().numpy() for p in ddp.module.parameters()]


@pytest.mark.parametrize("divide_by_initial", [True, False])
@pytest.mark.parametrize("bucket_cap_mb", [25, 1e-4], ids=["one-bucket", "bucket-per-param"])
def test_join_uneven_inputs_end_at_the_gold_parameters(world, divide_by_initial,
                                                       bucket_cap_mb):
    r, n = world
    ddp = DDP(_net(), bucket_cap_mb=bucket_cap_mb)
    got = _train(r, ddp, divide_by_initial_world_size=divide_by_initial)
    gold = _gold(n, divide_by_initial)
    for a, b in zip(got, gold):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)
    if n > 1:   # the uneven steps matter: the even-input answer differs
        even = _net()
        assert not np.allclose(even.fc1.weight.detach().numpy(), got[0])


def test_join_with_a_comm_hook_and_unused_parameters(world):
    r, n = world
    ddp = DDP(_net(unused=True), bucket_cap_mb=1e-4, find_unused_parameters=True)
    ddp.register_comm_hook(None, default_hooks.allreduce_hook)   # divides by the group size
    got = _train(r, ddp)
    gold = _gold(n, True, unused=True)
    for a, b in zip(got, gold):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)
    assert ddp.module.extra.weight.grad is None


def test_join_throw_on_early_termination(world):
    r, n = world
    ddp = DDP(_net())
    opt = torch.optim.SGD(ddp.parameters(), lr=LR)
    steps = 1 if r == 0 else 2
    msg = ("Rank 0 exhausted all inputs." if r == 0 else
           "Detected at least one rank that exhausted inputs. Throwing across all ranks.")
    if n == 1:
        msg = None
    ctx = pytest.raises(RuntimeError, match=msg) if msg else _nothing()
    with ctx:
        with ddp.join(throw_on_early_termination=True):
            for t in range(steps):
                opt.zero_grad()
                nn.functional.mse_loss(ddp(_batch(r, t)[0]), _batch(r, t)[1]).backward()
                opt.step()


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *a):
        return False


class Counter(Joinable):
    """Each iteration all-reduces 1 (active) or 0 (joined): the sum counts the active."""

    def __init__(self):
        super().__init__()
        self.seen, self.last = [], None

    def step(self):
        work = Join.notify_join_context(self)
        if work is not None:     # its all-reduce of 1 must finish before its tensor goes
            work.wait()
        t = torch.ones(1)
        dist.all_reduce(t)
        self.seen.append(int(t.item()))

    def join_hook(self, **kwargs):
        me = self

        class Hook(JoinHook):
            def main_hook(self):
                dist.all_reduce(torch.zeros(1))

            def post_hook(self, is_last_joiner):
                me.last = is_last_joiner
        return Hook()

    @property
    def join_device(self):
        return torch.device("cpu")

    @property
    def join_process_group(self):
        return None


def test_generic_joinable_counts_the_active_ranks(world):
    r, n = world
    c = Counter()
    with Join([c]):
        for _ in range(r + 1):
            c.step()
    assert c.seen == [n - i for i in range(r + 1)]
    assert c.last is (r == n - 1)


def test_join_checks(world):
    with pytest.raises(ValueError, match="requires at least one joinable"):
        Join([])
    with pytest.raises(AssertionError, match="calls the ``Joinable`` constructor"):
        Join.notify_join_context(object())
    c = Counter()
    with Join([c], enable=False):        # a no-op: even inputs
        c.step()
    assert c.seen == [dist.get_world_size()] and c.last is None


def test_join_with_no_sync_accumulation(world):
    """Rank r trains 1 + r pairs of batches: the first of a pair under no_sync, the second
    synchronised; joined ranks skip the shadow backward of the no_sync iterations (and the
    buffers' broadcast after them, as the active ranks do)."""
    r, n = world
    ddp = DDP(_net())
    opt = torch.optim.SGD(ddp.parameters(), lr=LR)
    with ddp.join():
        for k in range(1 + r):
            opt.zero_grad()
            for t in (2 * k, 2 * k + 1):
                x, y = _batch(r, t)
                if t % 2 == 0:
                    with ddp.no_sync():
                        nn.functional.mse_loss(ddp(x), y).backward()
                else:
                    nn.functional.mse_loss(ddp(x), y).backward()
            opt.step()
    ref = _net()
    for k in range(n):
        total = [torch.zeros_like(p) for p in ref.parameters()]
        for rr in range(n):
            if k >= 1 + rr:
                continue
            ref.zero_grad()
            for t in (2 * k, 2 * k + 1):
                x, y = _batch(rr, t)
                nn.functional.mse_loss(ref(x), y).backward()
            for s, p in zip(total, ref.parameters()):
                s.add_(p.grad)
        with torch.no_grad():
            for s, p in zip(total, ref.parameters()):
                p.sub_(LR * s / n)
    for a, p in zip(ddp.module.parameters(), ref.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), p.detach().numpy(), rtol=1e-12,
                                   atol=1e-13)
