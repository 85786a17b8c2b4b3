"""DDP communication hooks and Work.get_future inside an MPI job: each hook's gradients
against an answer computed by hand from every rank's local gradients (gathered as numpy
arrays), float16/bfloat16 compression emulated in numpy."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as torch
import dispatchtorch.distributed as dist
from dispatchtorch import nn
from dispatchtorch.distributed.algorithms.ddp_comm_hooks import (DDPCommHookType,
                                                                 default_hooks,
                                                                 register_ddp_comm_hook)
from dispatchtorch.nn.parallel import DistributedDataParallel as DDP

N = 12


def _net(dtype):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 3)).to(dtype)


def _batch(r, n, dtype):
    g = np.random.default_rng(1)
    X, Y = g.normal(size=(N, 5)), g.normal(size=(N, 3))
    s = slice(r * N // n, (r + 1) * N // n)
    return torch.tensor(X[s], dtype=dtype), torch.tensor(Y[s], dtype=dtype)


def _local_grads(r, n, dtype):
    """This rank's own gradients (no DDP), and every rank's, as float64 numpy arrays."""
    m = _net(dtype)
    x, y = _batch(r, n, dtype)
    nn.functional.mse_loss(m(x), y).backward()
    mine = [p.grad.double().numpy() for p in m.parameters()]
    every = [None] * n
    dist.all_gather_object(every, mine)
    return every


def _ddp_grads(r, n, dtype, hook=None, state=None, bucket_cap_mb=1e-6, register=None):
    ddp = DDP(_net(dtype), bucket_cap_mb=bucket_cap_mb)
    if hook is not None:
        ddp.register_comm_hook(state, hook)
    if register is not None:
        register(ddp)
    x, y = _batch(r, n, dtype)
    nn.functional.mse_loss(ddp(x), y).backward()
    return [p.grad.double().numpy() for p in ddp.module.parameters()], ddp


def _f16(x):
    return np.asarray(x, dtype=np.float32).astype(np.float16)


def _bf16(x):
    """float32 -> bfloat16 (round to nearest even), kept as float32 values."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return u.view(np.float32)


def test_work_get_future_holds_the_outputs(world):
    r, n = world
    t = torch.tensor([1.0 + r, 2.0])
    fut = dist.all_reduce(t, async_op=True).get_future()
    doubled = fut.then(lambda f: f.value()[0] * 2)
    value = fut.wait()
    assert len(value) == 1 and value[0] is t and t.tolist() == [n * (n + 1) / 2, 2.0 * n]
    assert doubled.wait().tolist() == [n * (n + 1), 4.0 * n]
    outs = [torch.zeros(1) for _ in range(n)]
    w = dist.all_gather(outs, torch.tensor([10.0 * r]), async_op=True)
    a = dist.all_reduce(torch.ones(2), async_op=True)
    got = torch.futures.wait_all([w.get_future(), a.get_future()])
    assert [o.item() for o in got[0]] == [10.0 * i for i in range(n)]
    assert got[1][0].tolist() == [n, n]
    assert dist.barrier(async_op=True).get_future().wait() == []
    w = dist.broadcast(torch.tensor([float(r)]), 0, async_op=True)
    w.wait()
    f = w.get_future()
    assert f.done() and f.value()[0].item() == 0.0


def test_allreduce_hook_equals_hand_mean_and_no_hook(world):
    r, n = world
    gold = [np.mean([g[i] for g in _local_grads(r, n, torch.float64)], axis=0) for i in range(4)]
    plain, _ = _ddp_grads(r, n, torch.float64)
    hooked, _ = _ddp_grads(r, n, torch.float64, default_hooks.allreduce_hook)
    via_enum, _ = _ddp_grads(r, n, torch.float64, register=lambda d: register_ddp_comm_hook(
        DDPCommHookType.ALLREDUCE, d))
    for a, b, c, g in zip(plain, hooked, via_enum, gold):
        np.testing.assert_allclose(a, g, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(b, g, rtol=1e-12, atol=1e-14)
        np.testing.assert_array_equal(b, c)


@pytest.mark.parametrize("which", ["fp16", "bf16"])
def test_compress_hooks_equal_hand_compressed_mean(world, which):
    r, n = world
    every = _local_grads(r, n, torch.float32)
    hook = default_hooks.fp16_compress_hook if which == "fp16" else default_hooks.bf16_compress_hook
    got, _ = _ddp_grads(r, n, torch.float32, hook)
    wrapped, _ = _ddp_grads(r, n, torch.float32, (default_hooks.fp16_compress_wrapper
                                                  if which == "fp16" else
                                                  default_hooks.bf16_compress_wrapper)(
        default_hooks.allreduce_hook))
    compressed_somewhere = False
    for i in range(4):
        if which == "fp16":     # cast, divide in float16, sum (in float32) over ranks, cast
            parts = [(_f16(g[i]) / np.float16(n)).astype(np.float16) for g in every]
            gold = _f16(np.sum([p.astype(np.float32) for p in parts], axis=0)).astype(np.float32)
            tol = 1e-3
        else:
            parts = [_bf16(_bf16(g[i]) / np.float32(n)) for g in every]
            gold = _bf16(np.sum(parts, axis=0))
            tol = 8e-3
        np.testing.assert_allclose(got[i], gold, rtol=tol, atol=tol * 1e-2)
        np.testing.assert_allclose(wrapped[i], gold, rtol=tol, atol=tol * 1e-2)
        exact = np.mean([g[i] for g in every], axis=0).astype(np.float32)
        compressed_somewhere |= not np.array_equal(got[i].astype(np.float32), exact)
    assert compressed_somewhere          # the float16/bfloat16 rounding shows
    builtin, _ = _ddp_grads(r, n, torch.float32, register=lambda d: (
        d._register_builtin_comm_hook(dist.BuiltinCommHookType.FP16_COMPRESS)))
    if which == "fp16":
        for a, b in zip(builtin, got):
            np.testing.assert_array_equal(a, b)


def test_custom_hook_sees_the_buckets_and_its_result_lands_in_grad(world):
    r, n = world
    every = _local_grads(r, n, torch.float64)
    seen = []

    def doubling_hook(state, bucket):
        assert state == "my-state"
        params, grads, buf = bucket.parameters(), bucket.gradients(), bucket.buffer()
        assert buf.dim() == 1 and buf.numel() == sum(p.numel() for p in params)
        assert [tuple(g.shape) for g in grads] == [tuple(p.shape) for p in params]
        at = 0
        for g in grads:     # views of the buffer, in parameters() order
            np.testing.assert_array_equal(g.reshape(-1).numpy(), buf[at:at + g.numel()].numpy())
            at += g.numel()
        seen.append((bucket.index(), bucket.is_last(), [id(p) for p in params]))
        return default_hooks.allreduce_hook(None, bucket).then(lambda f: f.value() * 2)

    got, ddp = _ddp_grads(r, n, torch.float64, doubling_hook, "my-state")
    params = list(ddp.module.parameters())
    # PyTorch's first iteration: one bucket of every parameter, in registration order
    assert seen == [(0, True, [id(p) for p in params])]
    for i in range(4):
        gold = 2 * np.mean([g[i] for g in every], axis=0)
        np.testing.assert_allclose(got[i], gold, rtol=1e-12, atol=1e-14)
    # then rebuilt: one bucket per parameter at this cap, in gradient arrival order (the
    # last layer's first; its weight's before its bias's here, PyTorch's bias first)
    seen.clear()
    for p in params:
        p.grad = None
    x, y = _batch(r, n, torch.float64)
    nn.functional.mse_loss(ddp(x), y).backward()
    arrival = [params[2], params[3], params[0], params[1]]
    assert seen == [(i, i == 3, [id(arrival[i])]) for i in range(4)]
    for i in range(4):
        gold = 2 * np.mean([g[i] for g in every], axis=0)
        np.testing.assert_allclose(params[i].grad.numpy(), gold, rtol=1e-12, atol=1e-14)


def test_noop_hook_keeps_local_gradients(world):
    r, n = world
    every = _local_grads(r, n, torch.float64)
    got, _ = _ddp_grads(r, n, torch.float64, register=lambda d: register_ddp_comm_hook(
        DDPCommHookType.NOOP, d))
    for i in range(4):
        np.testing.assert_allclose(got[i], every[r][i], rtol=1e-12, atol=1e-14)


def test_register_comm_hook_checks(world):
    ddp = DDP(_net(torch.float64))
    with pytest.raises(TypeError, match="Communication hook must be callable."):
        ddp.register_comm_hook(None, 5)

    def bad(state, bucket: int):
        return None
    with pytest.raises(ValueError, match="bucket annotation should be dist.GradBucket"):
        ddp.register_comm_hook(None, bad)
    ddp.register_comm_hook(None, default_hooks.allreduce_hook)
    with pytest.raises(RuntimeError, match="can only be called once"):
        ddp.register_comm_hook(None, default_hooks.allreduce_hook)
    with pytest.raises(RuntimeError, match="can only be called once"):
        ddp._register_builtin_comm_hook(dist.BuiltinCommHookType.ALLREDUCE)


def test_powerSGD_is_allreduce_then_matches_a_numpy_rank1_step(world):
    """Iterations before start_powerSGD_iter average plainly; the first compressed one
    equals PowerSGD's step done here in numpy from every rank's gradients (same
    parameters and data each time, no optimizer step: the local gradients are fixed)."""
    from dispatchtorch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as psgd
    r, n = world
    every = _local_grads(r, n, torch.float64)
    mean = [np.mean([g[i] for g in every], axis=0) for i in range(4)]
    state = psgd.PowerSGDState(None, matrix_approximation_rank=1, start_powerSGD_iter=2)
    ddp = DDP(_net(torch.float64), bucket_cap_mb=1e-6)
    ddp.register_comm_hook(state, psgd.powerSGD_hook)
    x, y = _batch(r, n, torch.float64)
    for it in range(3):
        for p in ddp.module.parameters():
            p.grad = None
        nn.functional.mse_loss(ddp(x), y).backward()
        got = [p.grad.double().numpy() for p in ddp.module.parameters()]
        if it < 2:
            for a, b in zip(got, mean):
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert state.iter == 3
    seeds = np.random.RandomState(0)
    # buckets as rebuilt (arrival order: fc2.weight, fc2.bias, fc1.weight, fc1.bias); 1-D
    # ones go uncompressed (yet draw a seed)
    position = {id(p): i for i, p in enumerate(ddp.module.parameters())}
    order = [position[id(b.params[0])] for b in ddp.reducer.buckets]
    assert order == [2, 3, 0, 1]
    for b in range(4):
        i = order[b]
        seed = seeds.randint(1_000_000_000)
        if every[0][i].ndim == 1:
            np.testing.assert_allclose(got[i], mean[i], rtol=1e-12, atol=1e-14)
            continue
        torch.manual_seed(int(seed))
        q = torch.randn(1, every[0][i].shape[1], 1, dtype=torch.float64).numpy()[0]
        q = q / np.linalg.norm(q)
        p = sum(g[i] @ q for g in every)
        p = p / np.linalg.norm(p)
        qq = sum(g[i].T @ p for g in every) / n
        np.testing.assert_allclose(got[i], p @ qq.T, rtol=1e-10, atol=1e-12)
        assert not np.allclose(got[i], mean[i])           # rank 1: an approximation
    with pytest.raises(ValueError, match="Expect `start_powerSGD_iter` > 1"):
        psgd.PowerSGDState(None, start_powerSGD_iter=1)
    assert state.compression_stats()[0] > 1


def test_a_failing_hook_raises_and_the_next_backward_is_clean(world):
    r, n = world
    every = _local_grads(r, n, torch.float64)
    calls = [0]

    def flaky(state, bucket):
        calls[0] += 1
        if calls[0] == 3:                      # the second bucket of the second backward
            raise ValueError("hook failed")
        if calls[0] == 4:                      # the first bucket of the third
            return "not a future"
        return default_hooks.allreduce_hook(None, bucket)

    ddp = DDP(_net(torch.float64), bucket_cap_mb=1e-6)
    ddp.register_comm_hook(None, flaky)
    x, y = _batch(r, n, torch.float64)
    nn.functional.mse_loss(ddp(x), y).backward()       # one bucket; then rebuilt, four
    with pytest.raises(ValueError, match="hook failed"):
        nn.functional.mse_loss(ddp(x), y).backward()
    with pytest.raises(RuntimeError, match="must return a torch.futures.Future, got str"):
        nn.functional.mse_loss(ddp(x), y).backward()
    for p in ddp.module.parameters():
        p.grad = None
    nn.functional.mse_loss(ddp(x), y).backward()
    for p, i in zip(ddp.module.parameters(), range(4)):
        np.testing.assert_allclose(p.grad.numpy(), np.mean([g[i] for g in every], axis=0),
                                   rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("hook", [default_hooks.allreduce_hook, default_hooks.fp16_compress_hook],
                         ids=["allreduce", "fp16"])
def test_hooks_on_opencl_tensors_equal_cpus(world, hook):
    from .ranks_collectives import opencl_reason
    why = opencl_reason()
    if why:
        pytest.skip(why)
    r, n = world
    got = {}
    for device in ("cpu", "opencl"):
        ddp = DDP(_net(torch.float32).to(device), bucket_cap_mb=1e-4)
        ddp.register_comm_hook(None, hook)
        x, y = _batch(r, n, torch.float32)
        nn.functional.mse_loss(ddp(x.to(device)), y.to(device)).backward()
        got[device] = [p.grad.cpu().numpy() for p in ddp.module.parameters()]
    for a, b in zip(got["opencl"], got["cpu"]):
        np.testing.assert_allclose(a, b, rtol=2e-3, atol=1e-5)
