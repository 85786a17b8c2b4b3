"""The frontend end to end on the cuda backend: views, in-place writes, autograd,
transfers, low-precision dtypes, in strict mode (no CPU fallback).

Without a GPU the backend runs its kernels under numpy as the device type `cudasim`
(registered here, for tests only); with a GPU the same tests also run on `cuda`.
Every result is compared with the same program on the CPU reference.
"""
import numpy as np
import pytest

import dispatchtorch as torch
from dispatchtorch import _place
from dispatchtorch.backend import DTYPE_NAMES, DeviceInfo
from dispatchtorch.dispatch import OPS, get_fallback_mode, loader, set_fallback_mode
from dispatchtorch_cuda._array_module import NumpyModule
from dispatchtorch_cuda.backend import CUDABackend, create_backend

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

SIM = "cudasim"


def _emulated():
    b = CUDABackend(NumpyModule(), [DeviceInfo(0, "cuda kernels under numpy",
                                               frozenset(DTYPE_NAMES))])
    b.name = SIM
    return b


EMULATED = _emulated()
DEVICES = [SIM] + (["cuda"] if create_backend().devices() else [])


@pytest.fixture(params=DEVICES)
def dev(request):
    mode = get_fallback_mode()
    set_fallback_mode("error")
    if request.param == SIM:
        rt = loader.BackendRuntime(SIM)
        loader._adopt(rt, EMULATED)
        loader._runtimes[SIM] = rt
    try:
        yield request.param
    finally:    # forget cudasim only: other tests' tensors keep their places
        loader._runtimes.pop(SIM, None)
        for op in OPS.values():
            op.kernels.pop(SIM, None)
        for table in (_place._places, _place._lookup):
            for key in [k for k, p in table.items() if p.type == SIM]:
                del table[key]
        set_fallback_mode(mode)


def host(t):
    return t.detach().cpu().numpy()


def same(a, b, rtol=1e-5, atol=1e-6):
    a, b = host(a), host(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol)


def pair(data, dev, **kw):
    return torch.tensor(data, **kw), torch.tensor(data, device=dev, **kw)


def test_elementwise_broadcast_promotion_and_scalars(dev):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 5)).astype(np.float32)
    b = rng.integers(-3, 4, (5,))
    ca, da = pair(a, dev)
    cb, db = pair(b, dev)

    def prog(x, i):
        y = (x * 2 + i) / 3 - x.exp().log1p()
        z = torch.where(x > 0, y, -y).clamp(-2, 2)
        return z, (i * 3) // 2, x.abs().sqrt().sum(dim=1), (x >= 0) & (i != 1)
    for c, d in zip(prog(ca, cb), prog(da, db)):
        assert d.device.type == dev
        same(c, d)


def test_in_place_writes_through_views(dev):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)

    def prog(x):
        x[1:, ::2] += 10
        x.t()[2].mul_(-1)
        v = x.view(6, 4)
        v[0] = v[5]
        x.narrow(1, 3, 2).zero_()
        return x
    c, d = pair(base, dev)
    same(prog(c), prog(d))


def test_reductions_and_integer_accumulation(dev):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    c, d = pair(x, dev)
    for fn in (lambda t: t.sum((0, 2)), lambda t: t.mean(1, keepdim=True),
               lambda t: t.amax(2), lambda t: t.argmax(1), lambda t: t.argmin(),
               lambda t: t.min(dim=0).values, lambda t: t.max(dim=2).indices):
        same(fn(c), fn(d))
    ci, di = pair(np.full((1000,), 100, dtype=np.int8), dev)
    r = di.sum()
    assert r.dtype is torch.int64 and r.item() == 100_000 == ci.sum().item()


def test_indexing(dev):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 6)).astype(np.float32)
    idx = np.array([[0, 4, 4], [1, 1, 2]])
    c, d = pair(x, dev)
    ci, di = pair(idx, dev)
    same(c.gather(1, ci), d.gather(1, di))
    src = rng.standard_normal((2, 3)).astype(np.float32)
    cs, ds = pair(src, dev)
    same(c.scatter_add(1, ci, cs), d.scatter_add(1, di, ds))
    same(c.scatter(1, ci, cs), d.scatter(1, di, ds))
    same(c[ci[0]], d[di[0]])
    same(c[c > 0], d[d > 0])
    same(torch.nonzero(c > 0.5), torch.nonzero(d > 0.5))
    same(c.masked_fill(c < 0, 7.0), d.masked_fill(d < 0, 7.0))
    cv, dv = c.clone(), d.clone()
    cv.index_add_(0, torch.tensor([0, 0, 3]), torch.ones(3, 6))
    dv.index_add_(0, torch.tensor([0, 0, 3], device=dev), torch.ones(3, 6, device=dev))
    same(cv, dv)


def test_autograd_training_steps_match_the_cpu(dev):
    rng = np.random.default_rng(3)
    xs = rng.standard_normal((32, 8)).astype(np.float32)
    ys = rng.standard_normal((32, 1)).astype(np.float32)
    w1 = (rng.standard_normal((8, 16)) * 0.3).astype(np.float32)
    w2 = (rng.standard_normal((16, 1)) * 0.3).astype(np.float32)

    def train(device):
        x, y = torch.tensor(xs, device=device), torch.tensor(ys, device=device)
        p1 = torch.tensor(w1, device=device, requires_grad=True)
        p2 = torch.tensor(w2, device=device, requires_grad=True)
        losses = []
        for _ in range(3):
            loss = ((torch.relu(x @ p1) @ p2 - y) ** 2).mean()
            loss.backward()
            with torch.no_grad():
                for p in (p1, p2):
                    p -= 0.1 * p.grad
                    p.grad = None
            losses.append(loss.item())
        return losses, p1, p2
    cl, c1, c2 = train("cpu")
    dl, d1, d2 = train(dev)
    np.testing.assert_allclose(dl, cl, rtol=1e-5)
    assert dl[-1] < dl[0]
    same(c1, d1)
    same(c2, d2)


@pytest.mark.parametrize("dtype,rtol", [(torch.float16, 1e-3), (torch.bfloat16, 8e-3)])
def test_low_precision(dev, dtype, rtol):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((6, 7)).astype(np.float32)
    b = rng.standard_normal((7, 3)).astype(np.float32)
    c = [torch.tensor(v, dtype=dtype) for v in (a, b)]
    d = [torch.tensor(v, dtype=dtype, device=dev) for v in (a, b)]

    def prog(x, w):
        return ((x @ w).tanh() * 3, x.sum(0), x.amax(dim=1), x.float() + 1, x > 0,
                torch.relu(x), torch.where(x > 0.5, x, w[0, 0]))
    for cr, dr in zip(prog(*c), prog(*d)):
        assert dr.dtype is cr.dtype
        same(cr, dr, rtol=rtol, atol=rtol)
    assert d[0][0, 0].item() == c[0][0, 0].item()


def test_host_transfers(dev):
    d = torch.arange(6, device=dev).reshape(2, 3)
    assert d.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert d[1, 2].item() == 5
    assert d.cpu().device.type == "cpu" and d.cpu().to(dev).device.type == dev
    with pytest.raises(TypeError, match="can't convert"):
        d.numpy()
    bf = torch.tensor([1.5, -2.25], dtype=torch.bfloat16, device=dev)
    assert bf.tolist() == [1.5, -2.25] and bf.cpu().dtype is torch.bfloat16


def test_mixing_devices_is_a_clear_error(dev):
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.ones(3) + torch.ones(3, device=dev)
    assert (torch.tensor(2.0) * torch.ones(3, device=dev)).tolist() == [2.0, 2.0, 2.0]


def test_copy_between_overlapping_views(dev):
    c, d = pair(np.arange(16, dtype=np.float32).reshape(4, 4), dev)
    c.copy_(c.t())
    d.copy_(d.t())
    same(c, d)
    c, d = pair(np.arange(10, dtype=np.int64), dev)
    c[1:].copy_(c[:-1].clone())
    d[1:].copy_(d[:-1])
    same(c, d)
