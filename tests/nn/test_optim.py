"""Optimizers: PyTorch's documented update rules written out in numpy here, a few
steps on a fixed problem; PyTorch itself; param groups; state dicts; training."""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from conftest import assert_close, to_np

import dispatchtorch as dt
import dispatchtorch.nn as nn
from dispatchtorch import optim

rng = np.random.default_rng(0)
W0 = rng.standard_normal((3, 2)).astype(np.float64)
X = rng.standard_normal((8, 3)).astype(np.float64)
Y = rng.standard_normal((8, 2)).astype(np.float64)


def loss_and_grad(w):
    """0.5 * mean ||X w - Y||^2 and its gradient (the fixed problem)."""
    e = X @ w - Y
    return 0.5 * (e ** 2).sum() / len(X), X.T @ e / len(X)


def run_ours(make_opt, steps=5):
    w = nn.Parameter(dt.tensor(W0))
    opt = make_opt([w])
    x, y = dt.tensor(X), dt.tensor(Y)
    for _ in range(steps):
        opt.zero_grad()
        loss = (((x @ w - y) ** 2).sum() / len(X)) * 0.5
        loss.backward()
        opt.step()
    return to_np(w)


# -- numpy transcriptions of the documented algorithms -------------------------------------------

def np_sgd(lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False,
           steps=5):
    w, buf = W0.copy(), None
    for _ in range(steps):
        g = loss_and_grad(w)[1]
        g = -g if maximize else g
        if weight_decay:
            g = g + weight_decay * w
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        w = w - lr * g
    return w


def np_adam(lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, decoupled=False,
            maximize=False, steps=5):
    w = W0.copy()
    m, v, vmax = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for t in range(1, steps + 1):
        g = loss_and_grad(w)[1]
        g = -g if maximize else g
        if weight_decay:
            if decoupled:
                w = w * (1 - lr * weight_decay)
            else:
                g = g + weight_decay * w
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        mhat = m / (1 - betas[0] ** t)
        if amsgrad:
            vmax = np.maximum(vmax, v)
            vhat = vmax / (1 - betas[1] ** t)
        else:
            vhat = v / (1 - betas[1] ** t)
        w = w - lr * mhat / (np.sqrt(vhat) + eps)
    return w


def np_rmsprop(lr, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
               steps=5):
    w = W0.copy()
    sq, ga, buf = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for _ in range(steps):
        g = loss_and_grad(w)[1] + weight_decay * w
        sq = alpha * sq + (1 - alpha) * g * g
        if centered:
            ga = alpha * ga + (1 - alpha) * g
            avg = np.sqrt(sq - ga * ga) + eps
        else:
            avg = np.sqrt(sq) + eps
        if momentum:
            buf = momentum * buf + g / avg
            w = w - lr * buf
        else:
            w = w - lr * g / avg
    return w


def np_adagrad(lr, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10,
               steps=5):
    w = W0.copy()
    s = np.full_like(w, initial_accumulator_value)
    for t in range(1, steps + 1):
        g = loss_and_grad(w)[1] + weight_decay * w
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g
        w = w - clr * g / (np.sqrt(s) + eps)
    return w


CONFIGS = [
    ("SGD", lambda p: optim.SGD(p, lr=0.1), lambda: np_sgd(0.1)),
    ("SGD-momentum-dampening-wd", lambda p: optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.2,
                                                      weight_decay=0.01),
     lambda: np_sgd(0.1, 0.9, 0.2, 0.01)),
    ("SGD-nesterov-maximize", lambda p: optim.SGD(p, lr=0.05, momentum=0.8, nesterov=True,
                                                  maximize=True),
     lambda: np_sgd(0.05, 0.8, nesterov=True, maximize=True)),
    ("Adam", lambda p: optim.Adam(p, lr=0.1), lambda: np_adam(0.1)),
    ("Adam-amsgrad-wd", lambda p: optim.Adam(p, lr=0.05, betas=(0.8, 0.9), weight_decay=0.1,
                                             amsgrad=True),
     lambda: np_adam(0.05, (0.8, 0.9), weight_decay=0.1, amsgrad=True)),
    ("Adam-maximize", lambda p: optim.Adam(p, lr=0.05, maximize=True),
     lambda: np_adam(0.05, maximize=True)),
    ("AdamW", lambda p: optim.AdamW(p, lr=0.1), lambda: np_adam(0.1, weight_decay=0.01,
                                                                 decoupled=True)),
    ("AdamW-amsgrad", lambda p: optim.AdamW(p, lr=0.1, weight_decay=0.3, amsgrad=True, eps=1e-3),
     lambda: np_adam(0.1, eps=1e-3, weight_decay=0.3, decoupled=True, amsgrad=True)),
    ("RMSprop", lambda p: optim.RMSprop(p, lr=0.01), lambda: np_rmsprop(0.01)),
    ("RMSprop-centered-momentum-wd", lambda p: optim.RMSprop(p, lr=0.01, alpha=0.9, momentum=0.5,
                                                             centered=True, weight_decay=0.1),
     lambda: np_rmsprop(0.01, 0.9, weight_decay=0.1, momentum=0.5, centered=True)),
    ("Adagrad", lambda p: optim.Adagrad(p, lr=0.1), lambda: np_adagrad(0.1)),
    ("Adagrad-decay-wd-init", lambda p: optim.Adagrad(p, lr=0.1, lr_decay=0.1, weight_decay=0.05,
                                                      initial_accumulator_value=0.5),
     lambda: np_adagrad(0.1, 0.1, 0.05, 0.5)),
]


@pytest.mark.parametrize("name,make,expected", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_optimizer_steps_match_the_documented_algorithm(name, make, expected):
    assert_close(run_ours(make), expected(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,make,expected", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_optimizer_steps_match_pytorch(torch, name, make, expected):
    w = torch.tensor(W0, requires_grad=True)
    topt = eval(_TORCH_CTORS[name], {"torch": torch, "p": [w]})      # the same call on torch
    x, y = torch.tensor(X), torch.tensor(Y)
    for _ in range(5):
        topt.zero_grad()
        (((x @ w - y) ** 2).sum() / len(X) * 0.5).backward()
        topt.step()
    assert_close(run_ours(make), w, rtol=1e-10, atol=1e-12)


_TORCH_CTORS = {
    "SGD": "torch.optim.SGD(p, lr=0.1)",
    "SGD-momentum-dampening-wd": "torch.optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.2, "
                                 "weight_decay=0.01)",
    "SGD-nesterov-maximize": "torch.optim.SGD(p, lr=0.05, momentum=0.8, nesterov=True, "
                             "maximize=True)",
    "Adam": "torch.optim.Adam(p, lr=0.1)",
    "Adam-amsgrad-wd": "torch.optim.Adam(p, lr=0.05, betas=(0.8, 0.9), weight_decay=0.1, "
                       "amsgrad=True)",
    "Adam-maximize": "torch.optim.Adam(p, lr=0.05, maximize=True)",
    "AdamW": "torch.optim.AdamW(p, lr=0.1)",
    "AdamW-amsgrad": "torch.optim.AdamW(p, lr=0.1, weight_decay=0.3, amsgrad=True, eps=1e-3)",
    "RMSprop": "torch.optim.RMSprop(p, lr=0.01)",
    "RMSprop-centered-momentum-wd": "torch.optim.RMSprop(p, lr=0.01, alpha=0.9, momentum=0.5, "
                                    "centered=True, weight_decay=0.1)",
    "Adagrad": "torch.optim.Adagrad(p, lr=0.1)",
    "Adagrad-decay-wd-init": "torch.optim.Adagrad(p, lr=0.1, lr_decay=0.1, weight_decay=0.05, "
                             "initial_accumulator_value=0.5)",
}


# -- groups, state dicts, errors ------------------------------------------------------------------

def test_param_groups_use_their_own_hyperparameters():
    a, b = nn.Parameter(dt.ones(2)), nn.Parameter(dt.ones(2))
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.0)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[1]["lr"] == 0.5
    assert opt.param_groups[1]["momentum"] == 0.0
    (a.sum() + b.sum()).backward()
    opt.step()
    assert_close(a, [0.9, 0.9])
    assert_close(b, [0.5, 0.5])
    c = nn.Parameter(dt.ones(1))
    opt.add_param_group({"params": c, "lr": 1.0})
    assert len(opt.param_groups) == 3 and opt.param_groups[2]["params"] == [c]
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})


def test_constructor_errors():
    p = [nn.Parameter(dt.ones(1))]
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.Adam(p, lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        optim.AdamW(p, betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Nesterov momentum requires"):
        optim.SGD(p, lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors"):
        optim.SGD(p[0], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([p[0] * 2], lr=0.1)


def _model():
    dt.manual_seed(3)
    return nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))


def _train(model, opt, steps, start=0):
    gen = np.random.default_rng(start)
    for _ in range(steps):
        x = dt.tensor(gen.standard_normal((6, 3)).astype(np.float32))
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()


@pytest.mark.parametrize("make", [lambda p: optim.Adam(p, lr=0.01, amsgrad=True),
                                  lambda p: optim.SGD(p, lr=0.1, momentum=0.9),
                                  lambda p: optim.RMSprop(p, momentum=0.5, centered=True),
                                  lambda p: optim.Adagrad(p, lr_decay=0.1),
                                  lambda p: optim.AdamW(p)])
def test_state_dict_round_trip_resumes_identically(make, tmp_path):
    ref = _model()
    ref_opt = make(ref.parameters())
    _train(ref, ref_opt, 3)
    saved_model = copy.deepcopy(ref.state_dict())
    dt.save({"model": ref.state_dict(), "opt": ref_opt.state_dict()}, tmp_path / "ck")
    _train(ref, ref_opt, 3, start=1)

    resumed = _model()
    opt = make(resumed.parameters())
    ck = dt.load(tmp_path / "ck")
    resumed.load_state_dict(ck["model"])
    opt.load_state_dict(ck["opt"])
    for k, v in saved_model.items():
        assert np.array_equal(to_np(resumed.state_dict()[k]), to_np(v))
    assert opt.state_dict()["param_groups"] == ref_opt.state_dict()["param_groups"]
    _train(resumed, opt, 3, start=1)
    for k, v in ref.state_dict().items():
        assert_close(resumed.state_dict()[k], v, 1e-6, 1e-7)


def test_state_dict_format_matches_pytorch(torch):
    m, tm = nn.Linear(2, 2), torch.nn.Linear(2, 2)
    opt, topt = optim.Adam(m.parameters()), torch.optim.Adam(tm.parameters())
    for mod, o, lib in ((m, opt, dt), (tm, topt, torch)):
        mod(lib.ones(1, 2)).sum().backward()
        o.step()
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert list(sd["state"]) == list(tsd["state"]) == [0, 1]
    assert sorted(sd["state"][0]) == sorted(tsd["state"][0])
    assert sd["param_groups"][0]["params"] == tsd["param_groups"][0]["params"]
    assert set(tsd["param_groups"][0]) <= set(sd["param_groups"][0])
    assert tuple(sd["state"][0]["step"].shape) == tuple(tsd["state"][0]["step"].shape) == ()


def test_load_state_dict_errors():
    a = [nn.Parameter(dt.ones(1)), nn.Parameter(dt.ones(1))]
    opt = optim.SGD(a, lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    other = optim.SGD([nn.Parameter(dt.ones(1))], lr=0.1)
    with pytest.raises(ValueError, match="doesn't match the size"):
        opt.load_state_dict(other.state_dict())
    with pytest.raises(ValueError, match="'state' and 'param_groups'"):
        opt.load_state_dict({"lr": 1})


def test_loaded_state_follows_parameter_dtype():
    p = nn.Parameter(dt.ones(2))
    opt = optim.Adam([p])
    p.sum().backward()
    opt.step()
    sd = opt.state_dict()
    q = nn.Parameter(dt.ones(2, dtype=dt.float64))
    opt2 = optim.Adam([q])
    opt2.load_state_dict(sd)
    assert opt2.state[q]["exp_avg"].dtype is dt.float64
    assert opt2.state[q]["step"].dtype is dt.float32
    assert opt2.state[q]["exp_avg"] is not sd["state"][0]["exp_avg"]


def test_step_with_closure_and_zero_grad():
    p = nn.Parameter(dt.tensor([2.0]))
    opt = optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    assert float(opt.step(closure)) == 4.0
    assert_close(p, [1.0])
    opt.zero_grad(set_to_none=False)
    assert to_np(p.grad).tolist() == [0.0]


@pytest.mark.parametrize("make", [
    lambda p: optim.SGD(p, lr=0.05, momentum=0.9), lambda p: optim.SGD(p, lr=0.3),
    lambda p: optim.Adam(p, lr=0.01), lambda p: optim.AdamW(p, lr=0.01),
    lambda p: optim.RMSprop(p, lr=0.005), lambda p: optim.Adagrad(p, lr=0.1)],
    ids=["SGD-momentum", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_each_optimizer_trains_a_small_network(make):
    """Identical initial weights for every optimizer; the classification loss falls."""
    gen = np.random.default_rng(0)
    x = gen.standard_normal((64, 4)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] * x[:, 2] > 0).astype(np.int64)
    dt.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    xs, ys = dt.tensor(x), dt.tensor(y)
    opt = make(model.parameters())
    losses = []
    for _ in range(60):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(xs), ys)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.6 * losses[0], losses[::10]
    assert all(math.isfinite(v) for v in losses)


def test_optimizers_from_identical_weights_agree_with_pytorch_on_a_network(torch):
    from conftest import copy_params
    dt.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    tmodel = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    copy_params(tmodel, model)
    opt = optim.AdamW(model.parameters(), lr=0.01)
    topt = torch.optim.AdamW(tmodel.parameters(), lr=0.01)
    gen = np.random.default_rng(2)
    for _ in range(10):
        x = gen.standard_normal((16, 4)).astype(np.float32)
        y = gen.integers(0, 3, 16)
        for m, o, lib in ((model, opt, dt), (tmodel, topt, torch)):
            o.zero_grad()
            lib.nn.functional.cross_entropy(m(lib.tensor(x)), lib.tensor(y)).backward()
            o.step()
    for (k, v), tv in zip(model.state_dict().items(), tmodel.state_dict().values()):
        assert_close(v, tv, 1e-4, 1e-6)


def test_clip_grad_norm_and_value():
    a, b = nn.Parameter(dt.ones(2)), nn.Parameter(dt.ones(3))
    a.grad, b.grad = dt.tensor([3.0, 0.0]), dt.tensor([0.0, 4.0, 0.0])
    total = nn.utils.clip_grad_norm_([a, b], 1.0)
    assert abs(float(total) - 5.0) < 1e-6
    assert_close(a.grad, [0.6, 0.0], 1e-5)
    assert_close(b.grad, [0.0, 0.8, 0.0], 1e-5)
    total = nn.utils.clip_grad_norm_([a, b], 10.0, norm_type=float("inf"))
    assert abs(float(total) - 0.8) < 1e-6
    assert_close(a.grad, [0.6, 0.0], 1e-5)
    nn.utils.clip_grad_value_([a, b], 0.7)
    assert_close(b.grad, [0.0, 0.7, 0.0])
    a.grad = dt.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_([a], 1.0, error_if_nonfinite=True)


def test_clip_grad_norm_matches_pytorch(torch):
    g = [rng.standard_normal(s).astype(np.float32) for s in ((3, 2), (4,))]
    ps = [nn.Parameter(dt.zeros(*x.shape)) for x in g]
    tps = [torch.nn.Parameter(torch.zeros(*x.shape)) for x in g]
    for p, tp, x in zip(ps, tps, g):
        p.grad, tp.grad = dt.tensor(x), torch.tensor(x)
    for norm in (2.0, 1.0, 3.0):
        t1 = nn.utils.clip_grad_norm_(ps, 0.5, norm)
        t2 = torch.nn.utils.clip_grad_norm_(tps, 0.5, norm)
        assert_close(t1, t2, 1e-5)
        for p, tp in zip(ps, tps):
            assert_close(p.grad, tp.grad, 1e-5, 1e-7)


def test_parameters_to_vector_round_trip():
    m = nn.Linear(3, 2)
    v = nn.utils.parameters_to_vector(m.parameters())
    assert v.shape == (8,)
    assert_close(v, np.concatenate([to_np(m.weight).ravel(), to_np(m.bias)]))
    nn.utils.vector_to_parameters(dt.arange(8.0), m.parameters())
    assert to_np(m.bias).tolist() == [6.0, 7.0]
    assert to_np(m.weight).tolist() == [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize("name,make,expected", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_flat_group_updates_equal_per_parameter_updates(name, make, expected):
    """A group's flat ("foreach") update gives the per-parameter update's numbers and
    per-parameter state that looks like PyTorch's."""
    def run(foreach):
        dt.manual_seed(5)
        model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
        opt = make(model.parameters())
        for g in opt.param_groups:
            g["foreach"] = foreach
        _train(model, opt, 4)
        return model, opt
    (m1, o1), (m2, o2) = run(None), run(False)
    # Adam/AdamW/SGD run fused rows (ops/optim_ops.py), the others flat buffers
    assert o1.__dict__.get("_flat") or type(o1)._fused_step is not None, \
        "no multi-tensor path was taken"
    for (k, v), v2 in zip(m1.state_dict().items(), m2.state_dict().values()):
        assert_close(v, v2, 1e-6, 1e-7)
    # an empty entry is no state (PyTorch's SGD without momentum keeps none at all)
    s1, s2 = ({k: v for k, v in o.state_dict()["state"].items() if v} for o in (o1, o2))
    assert list(s1) == list(s2)
    for i in s1:
        assert list(s1[i]) == list(s2[i])
        for k in s1[i]:
            assert tuple(s1[i][k].shape) == tuple(s2[i][k].shape)
            assert_close(s1[i][k], s2[i][k], 1e-6, 1e-7)


def test_flat_group_falls_back_when_a_parameter_has_no_gradient():
    a, b = nn.Parameter(dt.ones(2)), nn.Parameter(dt.ones(3))
    opt = optim.Adam([a, b], lr=0.1)
    (a.sum() + b.sum()).backward()
    opt.step()
    b.grad = None
    opt.step()                                     # only a has a gradient now
    assert float(opt.state[a]["step"]) == 2 and float(opt.state[b]["step"]) == 1
    a.grad, b.grad = dt.ones(2), dt.ones(3)
    opt.step()                                     # steps differ: per-parameter updates
    assert float(opt.state[a]["step"]) == 3 and float(opt.state[b]["step"]) == 2
