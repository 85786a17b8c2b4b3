"""On a GPU with libnccl: the NCCL engine in a one-rank job (MPI's singleton world), every
collective through dispatchtorch.distributed on CUDA tensors against numpy answers.
Without a usable GPU, NCCL or mpi4py the module skips with the reason."""
import datetime

import numpy as np
import pytest

from dispatchtorch_cuda.backend import create_backend
from dispatchtorch_cuda.nccl import nccl_module

GPU = create_backend()
if not GPU.devices():
    pytest.skip(f"no usable GPU: {GPU.unavailable_reason}", allow_module_level=True)
if nccl_module() is None:
    pytest.skip("libnccl does not load: pip install 'dispatchtorch-cuda[nccl]'",
                allow_module_level=True)

import dispatchtorch as torch  # noqa: E402
import dispatchtorch.distributed as dist  # noqa: E402

if not dist.is_available():
    pytest.skip(dist.unavailable_reason(), allow_module_level=True)


@pytest.fixture(scope="module", autouse=True)
def nccl_group():
    dist.init_process_group(timeout=datetime.timedelta(seconds=60))
    yield
    dist.destroy_process_group()


def test_default_backend_for_cuda_tensors_is_nccl():
    t = torch.arange(6, dtype=torch.float32, device="cuda")
    eng = dist.GroupMember.WORLD.engine_for(t, "test")
    assert eng.name == "nccl"


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bfloat16"])
def test_one_rank_collectives_on_cuda(dtype):
    dt = getattr(torch, dtype)
    x = np.arange(6).astype("float32")
    t = torch.tensor(x, device="cuda").to(dt)
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX, dist.ReduceOp.MIN, dist.ReduceOp.PRODUCT):
        dist.all_reduce(t, op=op)
    dist.broadcast(t, src=0)
    dist.reduce(t, dst=0)
    assert np.array_equal(t.float().cpu().numpy(), x)
    out = torch.zeros(1, 6, dtype=dt, device="cuda")
    dist.all_gather_into_tensor(out, t)
    lst = [torch.zeros(6, dtype=dt, device="cuda")]
    dist.all_gather(lst, t)
    rs = torch.zeros(6, dtype=dt, device="cuda")
    dist.reduce_scatter_tensor(rs, t)
    g = [torch.zeros(6, dtype=dt, device="cuda")]
    dist.gather(t, g, dst=0)
    sc = torch.zeros(6, dtype=dt, device="cuda")
    dist.scatter(sc, [t], src=0)
    a2a = torch.zeros(6, dtype=dt, device="cuda")
    dist.all_to_all_single(a2a, t)
    for r in (out[0], lst[0], rs, g[0], sc, a2a):
        assert np.array_equal(r.float().cpu().numpy(), x)
    w = dist.all_reduce(t, op=dist.ReduceOp.AVG, async_op=True)
    assert w.wait() and w.is_completed()
    assert np.array_equal(t.float().cpu().numpy(), x)


def test_ddp_on_cuda_one_rank():
    from dispatchtorch import nn
    from dispatchtorch.nn.parallel import DistributedDataParallel as DDP
    torch.manual_seed(0)
    m = nn.Linear(4, 2).to("cuda")
    ref = nn.Linear(4, 2)
    ref.load_state_dict({k: v.cpu() for k, v in m.state_dict().items()})
    ddp = DDP(m)
    x = torch.arange(8.).reshape(2, 4)
    ddp(x.to("cuda")).sum().backward()
    ref(x).sum().backward()
    np.testing.assert_allclose(m.weight.grad.cpu().numpy(), ref.weight.grad.numpy(), rtol=1e-5)
