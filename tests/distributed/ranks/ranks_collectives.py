"""Every collective of dispatchtorch.distributed against numpy answers, on every rank,
for float32/float64/int64, on CPU tensors and (a smaller set) OpenCL tensors.

Rank r's input is `_x(r)` below, so each rank computes every answer itself."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as torch
import dispatchtorch.distributed as dist
from dispatchtorch.distributed import ReduceOp



def opencl_reason():
    try:
        from dispatchtorch.dispatch import get_backend
        rt = get_backend("opencl")
    except RuntimeError as exc:
        return str(exc)
    return None if rt.status == "ready" else f"opencl backend {rt.status}: {rt.error}"

DTYPES = ["float32", "float64", "int64"]
_OCL = opencl_reason()
DEVICES = ["cpu", pytest.param("opencl", marks=pytest.mark.skipif(_OCL is not None,
                                                                 reason=_OCL or ""))]


def _x(r, n=5, dtype="float32"):
    """Rank r's input: distinct per rank and element, exact in every dtype."""
    return (np.arange(n) * (r + 2) + 3 * r - 4).astype(dtype)


def _t(a, device):
    return torch.from_numpy(np.ascontiguousarray(a)).to(device)


def _np(t):
    return t.cpu().numpy()


def _all(size, **kw):
    return [_x(r, **kw) for r in range(size)]


REDUCE = {ReduceOp.SUM: lambda xs: np.sum(xs, axis=0),
          ReduceOp.PRODUCT: lambda xs: np.prod(xs, axis=0),
          ReduceOp.MIN: lambda xs: np.min(xs, axis=0), ReduceOp.MAX: lambda xs: np.max(xs, axis=0)}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", list(REDUCE), ids=lambda o: o.name)
def test_all_reduce(world, device, dtype, op):
    r, n = world
    t = _t(_x(r, dtype=dtype), device)
    dist.all_reduce(t, op=op)
    want = REDUCE[op](np.stack(_all(n, dtype=dtype)))
    assert _np(t).dtype == want.dtype and np.array_equal(_np(t), want.astype(dtype))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_all_reduce_avg(world, device, dtype):
    r, n = world
    t = _t(_x(r, dtype=dtype), device)
    dist.all_reduce(t, op=ReduceOp.AVG)
    np.testing.assert_allclose(_np(t), np.mean(np.stack(_all(n, dtype="float64")), 0), rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcast_reduce(world, device, dtype):
    r, n = world
    t = _t(_x(r, dtype=dtype), device)
    dist.broadcast(t, src=n - 1)
    assert np.array_equal(_np(t), _x(n - 1, dtype=dtype))
    t = _t(_x(r, dtype=dtype), device)
    dist.reduce(t, dst=n - 1, op=ReduceOp.SUM)
    want = np.sum(_all(n, dtype=dtype), axis=0) if r == n - 1 else _x(r, dtype=dtype)
    assert np.array_equal(_np(t), want)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_all_gather_forms(world, device, dtype):
    r, n = world
    x = _t(_x(r, dtype=dtype), device)
    out = [torch.zeros(5, dtype=getattr(torch, dtype), device=device) for _ in range(n)]
    dist.all_gather(out, x)
    for i in range(n):
        assert np.array_equal(_np(out[i]), _x(i, dtype=dtype))
    stacked = torch.zeros(n, 5, dtype=getattr(torch, dtype), device=device)
    dist.all_gather_into_tensor(stacked, x)
    assert np.array_equal(_np(stacked), np.stack(_all(n, dtype=dtype)))
    flat = torch.zeros(n * 5, dtype=getattr(torch, dtype), device=device)
    dist.all_gather_into_tensor(flat, x)
    assert np.array_equal(_np(flat), np.concatenate(_all(n, dtype=dtype)))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_scatter_forms(world, device, dtype):
    r, n = world
    big = [_x(r, n=3 * n, dtype=dtype) + k for k in range(1)]
    inp = _t(big[0], device)
    out = torch.zeros(3, dtype=getattr(torch, dtype), device=device)
    dist.reduce_scatter_tensor(out, inp, op=ReduceOp.SUM)
    total = np.sum([_x(q, n=3 * n, dtype=dtype) for q in range(n)], axis=0)
    assert np.array_equal(_np(out), total[3 * r:3 * r + 3])
    lst = [_t(_x(r, n=3 * n, dtype=dtype)[3 * j:3 * j + 3], device) for j in range(n)]
    out2 = torch.zeros(3, dtype=getattr(torch, dtype), device=device)
    dist.reduce_scatter(out2, lst, op=ReduceOp.MAX)
    mx = np.max([_x(q, n=3 * n, dtype=dtype) for q in range(n)], axis=0)
    assert np.array_equal(_np(out2), mx[3 * r:3 * r + 3])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_scatter(world, device, dtype):
    r, n = world
    x = _t(_x(r, dtype=dtype), device)
    lst = [torch.zeros(5, dtype=getattr(torch, dtype), device=device) for _ in range(n)] \
        if r == 0 else None
    dist.gather(x, lst, dst=0)
    if r == 0:
        for i in range(n):
            assert np.array_equal(_np(lst[i]), _x(i, dtype=dtype))
    src = n - 1
    parts = [_t(_x(10 + j, dtype=dtype), device) for j in range(n)] if r == src else None
    got = torch.zeros(5, dtype=getattr(torch, dtype), device=device)
    dist.scatter(got, parts, src=src)
    assert np.array_equal(_np(got), _x(10 + r, dtype=dtype))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_all_to_all_uneven_and_single(world, device, dtype):
    r, n = world
    dt = getattr(torch, dtype)
    # rank i sends i+j+1 elements valued 100*i+j to rank j
    inputs = [_t(np.full(r + j + 1, 100 * r + j, dtype), device) for j in range(n)]
    outputs = [torch.zeros(i + r + 1, dtype=dt, device=device) for i in range(n)]
    dist.all_to_all(outputs, inputs)
    for i in range(n):
        assert np.array_equal(_np(outputs[i]), np.full(i + r + 1, 100 * i + r, dtype))
    inp = _t(np.repeat(np.arange(n) + 10 * r, 2).astype(dtype), device)   # block j: [10r+j]*2
    out = torch.zeros(2 * n, dtype=dt, device=device)
    dist.all_to_all_single(out, inp)
    assert np.array_equal(_np(out), np.repeat(np.arange(n) * 10 + r, 2).astype(dtype))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_send_recv_ring(world, device, dtype):
    r, n = world
    work = dist.isend(_t(_x(r, dtype=dtype), device), dst=(r + 1) % n)
    got = torch.zeros(5, dtype=getattr(torch, dtype), device=device)
    assert dist.recv(got, src=(r - 1) % n) == (r - 1) % n
    work.wait()
    assert np.array_equal(_np(got), _x((r - 1) % n, dtype=dtype))


def test_recv_from_any_source_and_irecv(world):
    r, n = world
    if r == 0:
        seen = set()
        for _ in range(n - 1):
            t = torch.zeros(5)
            src = dist.recv(t)
            assert np.array_equal(t.numpy(), _x(src))
            seen.add(src)
        assert seen == set(range(1, n))
        w = dist.irecv(torch.zeros(1), src=1, tag=7)
        assert w.wait() and w.is_completed()
    else:
        dist.send(_t(_x(r), "cpu"), dst=0)
        if r == 1:
            dist.send(torch.ones(1), dst=0, tag=7)


def test_async_op_work_and_views(world):
    r, n = world
    base = torch.from_numpy(np.stack([_x(r), _x(r) * 2]).astype("float64"))
    view = base.t()                        # not contiguous: staged and written back
    work = dist.all_reduce(view, async_op=True)
    assert isinstance(work, dist.Work)
    assert work.wait() is True and work.is_completed()
    total = np.sum([np.stack([_x(q), _x(q) * 2]) for q in range(n)], axis=0)
    assert np.array_equal(base.numpy(), total)
    b16 = torch.full((4,), float(r + 1), dtype=torch.bfloat16)
    dist.all_reduce(b16)
    assert b16.float().tolist() == [n * (n + 1) / 2] * 4
    flags = torch.tensor([r == 0, True, False])
    dist.all_reduce(flags, op=ReduceOp.SUM)
    assert flags.tolist() == [True, True, False]


def _staged_pair(r):
    """A rank's non-contiguous float64 input (staged through a host copy) and its base."""
    base = torch.from_numpy(np.stack([_x(r), _x(r) * 2]).astype("float64"))
    return base, base.t()


def test_a_dropped_async_handle_still_writes_its_result(world):
    """PyTorch's process groups keep a Work alive until it completes; a dropped handle
    whose staging copy were freed would let MPI write into freed memory and the result
    never reach the tensor."""
    import gc
    r, n = world
    total = np.sum([np.stack([_x(q), _x(q) * 2]) for q in range(n)], axis=0)
    base, view = _staged_pair(r)
    dist.all_reduce(view, async_op=True)          # the handle is dropped at once
    gc.collect()
    junk = [np.full(10, -7.0) for _ in range(64)]  # reuses freed memory, if any was
    for _ in range(2000):                         # each new collective retires finished ones
        landed = torch.tensor([int(np.array_equal(base.numpy(), total))])
        dist.all_reduce(landed, op=ReduceOp.MIN)  # every rank leaves the loop together
        if landed.item():
            break
    assert np.array_equal(base.numpy(), total)
    assert all((j == -7.0).all() for j in junk)


def test_freeing_a_group_waits_for_its_dropped_handles(world):
    import gc
    r, n = world
    group = dist.new_group(list(range(n)))
    total = np.sum([np.stack([_x(q), _x(q) * 2]) for q in range(n)], axis=0)
    base, view = _staged_pair(r)
    dist.all_reduce(view, group=group, async_op=True)
    gc.collect()
    dist.destroy_process_group(group)
    assert np.array_equal(base.numpy(), total)


def test_object_collectives(world):
    r, n = world
    objs = [{"from": r}, (r, "x")] if r == 1 % n else [None, None]
    dist.broadcast_object_list(objs, src=1 % n)
    assert objs == [{"from": 1 % n}, (1 % n, "x")]
    got = [None] * n
    dist.all_gather_object(got, {"rank": r, "sq": r * r})
    assert got == [{"rank": q, "sq": q * q} for q in range(n)]
    gl = [None] * n if r == 0 else None
    dist.gather_object(f"r{r}", gl, dst=0)
    if r == 0:
        assert gl == [f"r{q}" for q in range(n)]
    out = [None]
    dist.scatter_object_list(out, [q * 10 for q in range(n)] if r == 0 else None, src=0)
    assert out == [r * 10]


def test_new_group_and_queries(world):
    r, n = world
    assert dist.is_initialized() and dist.get_backend() == "mpi"
    members = [0, n - 1]
    g = dist.new_group(members)
    if r in members:
        assert dist.get_world_size(g) == 2 and dist.get_rank(g) == members.index(r)
        t = torch.tensor([float(r)])
        dist.all_reduce(t, group=g)
        assert t.tolist() == [float(n - 1)]
        b = torch.tensor([float(r)])
        dist.broadcast(b, src=n - 1, group=g)          # a global rank
        assert b.tolist() == [float(n - 1)]
        assert dist.get_process_group_ranks(g) == members
    else:
        assert g is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(g) == -1
        assert dist.all_reduce(torch.ones(1), group=g) is None
    second = [n - 2, n - 1]                # overlaps the first differently on 3 ranks
    g2 = dist.new_group(second)
    if r in second:
        t = torch.tensor([r + 1])
        dist.all_reduce(t, group=g2)
        assert t.tolist() == [2 * n - 1]
    dist.barrier()
    dist.barrier(async_op=True).wait()
    for grp, ranks in ((g, members), (g2, second)):
        if r in ranks:
            dist.destroy_process_group(grp)


def test_bad_arguments_raise_and_leave_tensors(world):
    r, n = world
    t = torch.arange(3.)
    with pytest.raises(TypeError, match="all_reduce: op"):
        dist.all_reduce(t, op="sum")
    with pytest.raises(ValueError, match="all_gather: tensor_list has 1 tensors"):
        dist.all_gather([torch.zeros(3)], t)      # n >= 2 ranks here
    with pytest.raises(RuntimeError, match="broadcast: invalid root rank: 99"):
        dist.broadcast(t, src=99)
    with pytest.raises(ValueError, match="should not be the same as the rank"):
        dist.send(t, dst=r)
    with pytest.raises(TypeError, match="all_gather: tensor_list\\[0\\] has dtype"):
        dist.all_gather([torch.zeros(3, dtype=torch.int64) for _ in range(n)], t)
    with pytest.raises(ValueError, match="reduce_scatter_tensor: input has 3 elements"):
        dist.reduce_scatter_tensor(torch.zeros(3), t)
    assert t.tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="twice"):
        dist.init_process_group()
