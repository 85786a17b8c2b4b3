"""Learning-rate schedulers: closed forms written here, and PyTorch step for step."""
from __future__ import annotations

import math

import pytest

import dispatchtorch as dt
import dispatchtorch.nn as nn
from dispatchtorch import optim
from dispatchtorch.optim import lr_scheduler as S


def _opt(lib, kind="SGD", lr=0.1):
    p = lib.nn.Parameter(lib.zeros(1))
    if kind == "Adam":
        return lib.optim.Adam([p], lr=lr)
    return lib.optim.SGD([{"params": [p]}, {"params": [lib.nn.Parameter(lib.zeros(1))],
                                            "lr": lr * 3}], lr=lr, momentum=0.9)


def _lrs(lib, make_sched, steps, kind="SGD", metrics=None):
    opt = _opt(lib, kind)
    sched = make_sched(lib.optim.lr_scheduler, opt)
    out = []
    for i in range(steps):
        opt.step()
        if metrics is None:
            sched.step()
        else:
            sched.step(metrics[i])
        out += [g["lr"] for g in opt.param_groups]
        out += [g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups]
    return out


def test_closed_forms():
    def run(make, steps):
        return _lrs(dt, make, steps)[::4]          # group 0's lr, step by step
    assert run(lambda s, o: s.StepLR(o, 3, gamma=0.5), 7) == pytest.approx(
        [0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025])
    assert run(lambda s, o: s.MultiStepLR(o, [2, 5], 0.1), 6) == pytest.approx(
        [0.1, 0.01, 0.01, 0.01, 0.001, 0.001])
    assert run(lambda s, o: s.ExponentialLR(o, 0.9), 3) == pytest.approx([0.09, 0.081, 0.0729])
    cos = run(lambda s, o: s.CosineAnnealingLR(o, T_max=10, eta_min=0.01), 10)
    assert cos == pytest.approx([0.01 + 0.09 * (1 + math.cos(math.pi * t / 10)) / 2
                                 for t in range(1, 11)])
    assert run(lambda s, o: s.LambdaLR(o, lambda e: 1 / (e + 1)), 3) == pytest.approx(
        [0.05, 0.1 / 3, 0.025])
    lin = run(lambda s, o: s.LinearLR(o, start_factor=0.25, total_iters=4), 5)
    assert lin == pytest.approx([0.1 * (0.25 + 0.75 * min(t, 4) / 4) for t in range(1, 6)])


SCHEDULERS = [
    ("StepLR", lambda s, o: s.StepLR(o, 2, gamma=0.3)),
    ("MultiStepLR", lambda s, o: s.MultiStepLR(o, [1, 3, 3, 6], gamma=0.5)),
    ("ExponentialLR", lambda s, o: s.ExponentialLR(o, 0.8)),
    ("CosineAnnealingLR", lambda s, o: s.CosineAnnealingLR(o, T_max=4, eta_min=0.001)),
    ("LambdaLR", lambda s, o: s.LambdaLR(o, [lambda e: 0.9 ** e, lambda e: 1 + e])),
    ("LinearLR", lambda s, o: s.LinearLR(o, start_factor=0.5, end_factor=0.9, total_iters=3)),
    ("OneCycleLR-cos", lambda s, o: s.OneCycleLR(o, max_lr=[1.0, 2.0], total_steps=12)),
    ("OneCycleLR-linear-three-phase", lambda s, o: s.OneCycleLR(
        o, max_lr=0.5, epochs=3, steps_per_epoch=4, anneal_strategy="linear", three_phase=True,
        pct_start=0.25)),
]


@pytest.mark.parametrize("name,make", SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
def test_scheduler_matches_pytorch(torch, name, make):
    assert _lrs(dt, make, 12) == pytest.approx(_lrs(torch, make, 12), rel=1e-12)


def test_one_cycle_cycles_adam_beta1_like_pytorch(torch):
    def make(s, o):
        return s.OneCycleLR(o, max_lr=0.01, total_steps=10)
    assert _lrs(dt, make, 10, "Adam") == pytest.approx(_lrs(torch, make, 10, "Adam"), rel=1e-12)


def test_reduce_on_plateau_matches_pytorch(torch):
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.8, 0.85, 0.9, 0.9, 0.9, 0.9, 0.9]

    def make(s, o):
        return s.ReduceLROnPlateau(o, patience=1, factor=0.5, cooldown=1, min_lr=[0.02, 0.0])
    assert _lrs(dt, make, 12, metrics=metrics) == \
        pytest.approx(_lrs(torch, make, 12, metrics=metrics))

    def make_max(s, o):
        return s.ReduceLROnPlateau(o, mode="max", threshold_mode="abs", threshold=0.05,
                                   patience=0)
    assert _lrs(dt, make_max, 12, metrics=metrics) == \
        pytest.approx(_lrs(torch, make_max, 12, metrics=metrics))


def test_scheduler_state_dict_round_trip():
    opt = _opt(dt)
    sched = S.CosineAnnealingLR(opt, T_max=8)
    for _ in range(3):
        opt.step()
        sched.step()
    state = sched.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 3
    opt2 = _opt(dt)
    opt2.load_state_dict(opt.state_dict())
    sched2 = S.CosineAnnealingLR(opt2, T_max=8)
    sched2.load_state_dict(state)
    for _ in range(3):
        for o, s in ((opt, sched), (opt2, sched2)):
            o.step()
            s.step()
    assert sched2.get_last_lr() == pytest.approx(sched.get_last_lr())


def test_scheduler_errors():
    opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        S.StepLR(object(), 1)
    with pytest.raises(KeyError, match="initial_lr"):
        S.StepLR(opt, 1, last_epoch=3)
    with pytest.raises(ValueError, match="total_steps OR"):
        S.OneCycleLR(opt, 0.1)
    sched = S.OneCycleLR(opt, 0.1, total_steps=2)
    sched.step()
    sched.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        sched.step()
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        S.ReduceLROnPlateau(opt, factor=1.5)
