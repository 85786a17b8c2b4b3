"""Adam, AdamW and SGD's fused rows (ops/optim_ops.py: the CPU backend's blocked,
multi-threaded kernel, and the decomposition every other backend runs) follow
PyTorch's trajectories to float32 rounding, with every option of the update."""
import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch.dispatch import DECOMPOSE
from dispatchtorch.ops import optim_ops

torch = pytest.importorskip("torch")

# one tensor over several blocks of the CPU kernel, small ones, a 0-d one
SHAPES = ((7, 3), (150000,), (5,), ())
CONFIGS = [
    ("Adam", dict(lr=1e-2)),
    ("Adam", dict(lr=1e-2, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=1e-2, maximize=True, eps=1e-3)),
    ("AdamW", dict(lr=1e-2)),
    ("AdamW", dict(lr=1e-2, weight_decay=0.3, amsgrad=True)),
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.5, maximize=True)),
]


def _trajectory(tl, cls, kw, steps=4):
    rng = np.random.default_rng(0)
    ps = [tl.tensor(rng.standard_normal(s).astype(np.float32)).requires_grad_() for s in SHAPES]
    opt = getattr(tl.optim, cls)(ps, **kw)
    for _ in range(steps):
        for p in ps:
            p.grad = tl.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32))
        opt.step()
    return [p.detach().numpy().copy() for p in ps]


@pytest.fixture(params=["kernel", "decomposition"])
def path(request):
    if request.param == "decomposition":
        saved = {op: dict(op.kernels) for op in (optim_ops.FUSED_ADAM, optim_ops.FUSED_SGD)}
        for op in saved:
            op.kernels["cpu"] = DECOMPOSE
        yield request.param
        for op, k in saved.items():
            op.kernels.clear()
            op.kernels.update(k)
    else:
        yield request.param


@pytest.mark.parametrize("cls,kw", CONFIGS, ids=[f"{c}-{'-'.join(k)}" for c, k in CONFIGS])
@pytest.mark.parametrize("option", [{}, {"fused": True}, {"foreach": True}])
def test_fused_step_follows_pytorch(cls, kw, option, path):
    want = _trajectory(torch, cls, kw)
    got = _trajectory(dt, cls, {**kw, **option})
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=2e-7)


def test_foreach_false_runs_per_parameter(monkeypatch):
    calls = []
    monkeypatch.setattr(optim_ops, "_fused", lambda *a: calls.append(a))
    p = dt.nn.Parameter(dt.ones(3))
    opt = dt.optim.Adam([p], lr=0.1, foreach=False)
    p.grad = dt.ones(3)
    opt.step()
    assert calls == [] and float(opt.state[p]["step"]) == 1


def test_state_matches_pytorch_and_survives_a_state_dict_round_trip():
    def make(tl):
        ps = [tl.nn.Parameter(tl.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3)))]
        return ps, tl.optim.Adam(ps, lr=0.1, amsgrad=True)
    (a,), o1 = make(dt)
    (b,), o2 = make(torch)
    for k in range(3):
        a.grad = dt.full((2, 3), float(k) - 1.0)
        b.grad = torch.full((2, 3), float(k) - 1.0)
        o1.step()
        o2.step()
        if k == 1:                           # reload the saved state mid-run
            (c,), o3 = make(dt)
            with dt.no_grad():
                c.copy_(a)
            o3.load_state_dict(o1.state_dict())
            a, o1 = c, o3
    s1, s2 = o1.state_dict()["state"][0], o2.state_dict()["state"][0]
    assert sorted(s1) == sorted(s2)
    for name in s2:
        np.testing.assert_allclose(s1[name].numpy(), s2[name].numpy(), rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=2e-6)


def test_bfloat16_parameters_are_updated_in_float32_and_rounded_once():
    """One step on bfloat16 tensors equals PyTorch's float32 step rounded to bfloat16."""
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.standard_normal(150000).astype(np.float32)).bfloat16()
    g = torch.tensor(rng.standard_normal(150000).astype(np.float32)).bfloat16()
    tp = x.float().requires_grad_()
    dp = dt.tensor(x.float().numpy()).bfloat16().requires_grad_()
    ot, od = torch.optim.Adam([tp], lr=1e-2), dt.optim.Adam([dp], lr=1e-2)
    tp.grad, dp.grad = g.float(), dt.tensor(g.float().numpy()).bfloat16()
    ot.step()
    od.step()
    want = tp.detach().bfloat16().float().numpy()
    got = dp.detach().float().numpy()
    np.testing.assert_array_equal(got, want)
