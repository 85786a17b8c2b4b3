"""Every optimizer of torch.optim against PyTorch itself: same parameters, same
gradients, step by step the same trajectory; state dicts moved both ways."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch import optim

torch = pytest.importorskip("torch")

SHAPES = [(3, 4), (4,), (2, 2, 2)]


def _grads(step, dtype=np.float32):
    rng = np.random.default_rng(100 + step)
    out = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    out[1][1] = 0.0               # an exact zero: sign() and masks see it
    return out


def _params(dtype=np.float32):
    rng = np.random.default_rng(7)
    return [rng.standard_normal(s).astype(dtype) for s in SHAPES]


CASES = {
    "Adadelta": dict(lr=0.5),
    "Adadelta-wd-max": dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True),
    "Adamax": dict(lr=0.01),
    "Adamax-wd": dict(lr=0.01, weight_decay=0.1, betas=(0.8, 0.9)),
    "NAdam": dict(lr=0.01),
    "NAdam-wd": dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01),
    "NAdam-dwd": dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
    "RAdam": dict(lr=0.01),
    "RAdam-dwd": dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, betas=(0.9, 0.6)),
    "RAdam-wd": dict(lr=0.01, weight_decay=0.1),
    "ASGD": dict(lr=0.05),
    "ASGD-t0": dict(lr=0.05, t0=2, lambd=0.01, weight_decay=0.01),
    "Rprop": dict(lr=0.01),
    "Rprop-max": dict(lr=0.01, etas=(0.3, 1.5), step_sizes=(1e-3, 0.02), maximize=True),
    "Adam-options": dict(lr=0.01, amsgrad=True, foreach=False, capturable=False,
                         differentiable=False, fused=None),
    "AdamW": dict(lr=0.01),
    "SGD": dict(lr=0.1, momentum=0.9, nesterov=True, foreach=True),
    "RMSprop": dict(lr=0.01, centered=True, momentum=0.5),
    "Adagrad": dict(lr=0.1, lr_decay=0.01),
}


def _make(lib, name, params):
    kwargs = CASES[name]
    return getattr(lib.optim, name.split("-")[0])(params, **kwargs)


def _run(name, steps, dtype=np.float32, foreach=None):
    ours = [dt.tensor(p, requires_grad=True) for p in _params(dtype)]
    theirs = [torch.tensor(p, requires_grad=True) for p in _params(dtype)]
    o, t = _make(dt, name, ours), _make(torch, name, theirs)
    if foreach is not None:
        for g in o.param_groups:
            g["foreach"] = foreach
    for k in range(steps):
        for a, b, g in zip(ours, theirs, _grads(k, dtype)):
            a.grad, b.grad = dt.tensor(g), torch.tensor(g)
        o.step()
        t.step()
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=2e-5,
                                       atol=2e-6, err_msg=f"{name} step {k}")
    return o, t, ours, theirs


def _plain(groups):
    """Param groups with tuples as lists (PyTorch keeps what the caller passed)."""
    return [{k: list(v) if isinstance(v, tuple) else v for k, v in g.items()} for g in groups]


@pytest.mark.parametrize("name", list(CASES))
def test_trajectory_matches_pytorch(name):
    o, t, _, _ = _run(name, 6)
    ours_sd, theirs_sd = o.state_dict(), t.state_dict()
    assert _plain(ours_sd["param_groups"]) == _plain(theirs_sd["param_groups"])
    for i, st in theirs_sd["state"].items():
        assert list(ours_sd["state"][i]) == list(st), name      # same keys, same order
        for key, v in st.items():
            mine = ours_sd["state"][i][key]
            if isinstance(v, torch.Tensor):
                np.testing.assert_allclose(np.asarray(mine.detach().numpy(), np.float64),
                                           v.numpy().astype(np.float64), rtol=2e-5, atol=2e-6)
                assert str(mine.dtype).split(".")[-1] == str(v.dtype).split(".")[-1], (name, key)
            else:
                assert mine == v


@pytest.mark.parametrize("name", ["NAdam", "Rprop", "ASGD", "Adadelta"])
def test_per_parameter_updates_equal_flat_updates(name):
    _run(name, 4, foreach=False)


def test_float64_parameters():
    _run("RAdam", 4, dtype=np.float64)


def _to_ours(sd):
    def conv(v):
        if isinstance(v, torch.Tensor):
            return dt.tensor(v.numpy())
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v
    return conv(sd)


def _to_torch(sd):
    def conv(v):
        if isinstance(v, dt.Tensor):
            return torch.tensor(v.numpy())
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v
    return conv(sd)


@pytest.mark.parametrize("name", ["NAdam", "ASGD", "Rprop", "Adam-options"])
def test_state_dicts_move_between_pytorch_and_ours(name):
    _, t, _, theirs = _run(name, 3)
    # PyTorch's state -> ours, then both continue
    ours = [dt.tensor(p.detach().numpy(), requires_grad=True) for p in theirs]
    o = _make(dt, name, ours)
    o.load_state_dict(_to_ours(t.state_dict()))
    # ours -> a fresh PyTorch optimizer, which must continue identically too
    theirs2 = [torch.tensor(p.detach().numpy(), requires_grad=True) for p in theirs]
    t2 = _make(torch, name, theirs2)
    t2.load_state_dict(_to_torch(o.state_dict()))
    for k in range(3, 6):
        for a, b, c, g in zip(ours, theirs, theirs2, _grads(k)):
            a.grad, b.grad, c.grad = dt.tensor(g), torch.tensor(g), torch.tensor(g)
        o.step()
        t.step()
        t2.step()
        for a, b, c in zip(ours, theirs, theirs2):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=2e-5, atol=2e-6)
            np.testing.assert_array_equal(c.detach().numpy(), b.detach().numpy())


def test_sparse_adam_matches_pytorch_on_an_embedding():
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal((10, 3)).astype(np.float32)
    emb_t = torch.nn.Embedding(10, 3, sparse=True)
    emb_t.weight.data = torch.tensor(w0)
    emb_o = dt.nn.Embedding(10, 3)
    emb_o.weight.data = dt.tensor(w0)
    ot = torch.optim.SparseAdam(emb_t.parameters(), lr=0.1)
    oo = optim.SparseAdam(emb_o.parameters(), lr=0.1)
    for k in range(4):
        idx = rng.integers(0, 10, size=5)
        tgt = rng.standard_normal((5, 3)).astype(np.float32)
        for emb, lib, opt in ((emb_t, torch, ot), (emb_o, dt, oo)):
            opt.zero_grad()
            ((emb(lib.tensor(idx)) - lib.tensor(tgt)) ** 2).sum().backward()
            opt.step()
        np.testing.assert_allclose(emb_o.weight.detach().numpy(), emb_t.weight.detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
    assert oo.state_dict()["state"][0]["step"] == ot.state_dict()["state"][0]["step"] == 4


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_matches_pytorch_on_rosenbrock(line_search):
    def run(lib):
        # float64: Rosenbrock's curvature turns float32 rounding noise into 1e-5 drift
        x = lib.tensor([-1.5, 2.0, 0.5, -0.5], dtype=lib.float64, requires_grad=True)
        opt = lib.optim.LBFGS([x], lr=1, max_iter=15, history_size=5, line_search_fn=line_search)
        losses = []

        def closure():
            opt.zero_grad()
            loss = (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
            loss.backward()
            return loss
        for _ in range(3):
            losses.append(float(opt.step(closure)))
        return x.detach().numpy(), losses, opt.state_dict()["state"][0]
    xo, lo, so = run(dt)
    xt, lt, st = run(torch)
    np.testing.assert_allclose(lo, lt, rtol=1e-10)
    np.testing.assert_allclose(xo, xt, rtol=1e-10, atol=1e-12)
    assert so["func_evals"] == st["func_evals"] and so["n_iter"] == st["n_iter"]


def test_constructor_errors_match_pytorch():
    p = [dt.zeros(2, requires_grad=True)]
    pt = [torch.zeros(2, requires_grad=True)]
    for name, kwargs in [("Adadelta", dict(rho=1.5)), ("Adamax", dict(betas=(1.0, 0.9))),
                         ("NAdam", dict(momentum_decay=-1)), ("RAdam", dict(eps=-1)),
                         ("ASGD", dict(lr=-1)), ("Rprop", dict(etas=(1.5, 1.2))),
                         ("SparseAdam", dict(betas=(0.9, 1.0))), ("LBFGS", dict(lr=-1))]:
        with pytest.raises(ValueError) as theirs:
            getattr(torch.optim, name)(pt, **kwargs)
        with pytest.raises(ValueError) as mine:
            getattr(optim, name)(p, **kwargs)
        assert str(mine.value) == str(theirs.value), name


@pytest.mark.parametrize("kwargs", [dict(lr=0.01), dict(lr=0.05, weight_decay=0.1, d=1.5,
                                                         beta2_decay=-0.5, maximize=True)])
def test_adafactor_matches_pytorch(kwargs):
    ours = [dt.tensor(p, requires_grad=True) for p in _params()]
    theirs = [torch.tensor(p, requires_grad=True) for p in _params()]
    o, t = optim.Adafactor(ours, **kwargs), torch.optim.Adafactor(theirs, **kwargs)
    for k in range(5):
        for a, b, g in zip(ours, theirs, _grads(k)):
            a.grad, b.grad = dt.tensor(g), torch.tensor(g)
        o.step()
        t.step()
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=2e-5,
                                       atol=2e-6)
    assert list(o.state_dict()["state"][0]) == list(t.state_dict()["state"][0])


@pytest.mark.parametrize("nesterov", [True, False])
def test_muon_matches_pytorch(nesterov):
    """Newton-Schulz runs in bfloat16 (as PyTorch's): a matmul summed in another order can
    round one entry by one bfloat16 unit, so the trajectories agree to ~1e-2 of a step."""
    rng = np.random.default_rng(4)
    w0 = rng.standard_normal((6, 4)).astype(np.float32)
    ours, theirs = dt.tensor(w0, requires_grad=True), torch.tensor(w0, requires_grad=True)
    o = optim.Muon([ours], lr=0.02, nesterov=nesterov)
    t = torch.optim.Muon([theirs], lr=0.02, nesterov=nesterov)
    for k in range(4):
        g = rng.standard_normal((6, 4)).astype(np.float32)
        ours.grad, theirs.grad = dt.tensor(g), torch.tensor(g)
        o.step()
        t.step()
        moved = np.abs(theirs.detach().numpy() - w0).max()
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=0,
                                   atol=1e-2 * moved)
    with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
        optim.Muon([dt.zeros(3, requires_grad=True)])


def test_swap_in_optimizer_params_and_state_matches_pytorch():
    def run(lib):
        live = lib.nn.Linear(3, 2)
        with lib.no_grad():
            live.weight.copy_(lib.tensor(_params()[0][:2, :3]))
            live.bias.zero_()
        opt = lib.optim.Adam(live.parameters(), lr=0.1)
        live(lib.ones(1, 3)).sum().backward()
        opt.step()
        other = {n: p.detach().clone().requires_grad_(True) for n, p in live.named_parameters()}
        for p in other.values():
            p.grad = lib.ones(p.shape)
        osd = opt.state_dict()
        osd = {"state": {k: {n: v.clone() for n, v in s.items()} for k, s in osd["state"].items()},
               "param_groups": osd["param_groups"]}
        before = [p.detach().clone() for p in live.parameters()]
        with lib.optim.swap_in_optimizer_params_and_state(opt, other, osd):
            opt.step()
        unchanged = all(bool((a == b).all()) for a, b in zip(before, live.parameters()))
        return unchanged, [p.detach().numpy() for p in other.values()], \
            osd["state"][0]["exp_avg"].numpy(), float(osd["state"][0]["step"])
    ours, theirs = run(dt), run(torch)
    assert ours[0] and theirs[0]
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-5, atol=1e-6)
    assert ours[3] == theirs[3] == 2.0
