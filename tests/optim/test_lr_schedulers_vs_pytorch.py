"""The schedulers beyond the basic ones, step for step against PyTorch (learning rates
and momenta of two param groups), and their state dicts resuming identically."""
from __future__ import annotations

import math

import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")


def _opt(lib, kind):
    p, q = lib.nn.Parameter(lib.zeros(1)), lib.nn.Parameter(lib.zeros(1))
    if kind == "Adam":
        return lib.optim.Adam([{"params": [p]}, {"params": [q], "lr": 0.3}], lr=0.1)
    return lib.optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.3}], lr=0.1, momentum=0.9)


def _trace(lib, make, steps, kind="SGD", resume_at=None):
    opt = _opt(lib, kind)
    sched = make(lib.optim.lr_scheduler, opt)
    out = []
    for i in range(steps):
        if i == resume_at:                  # a fresh scheduler from the state dict
            state = sched.state_dict()
            sched = make(lib.optim.lr_scheduler, opt)
            sched.load_state_dict(state)
        opt.step()
        sched.step()
        out += [g["lr"] for g in opt.param_groups] + list(sched.get_last_lr())
        out += [g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups]
    return out


SCHEDULERS = {
    "MultiplicativeLR": lambda s, o: s.MultiplicativeLR(o, lambda e: 0.9),
    "ConstantLR": lambda s, o: s.ConstantLR(o, factor=0.5, total_iters=3),
    "PolynomialLR": lambda s, o: s.PolynomialLR(o, total_iters=6, power=2.0),
    "CosineAnnealingWarmRestarts": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2,
                                                                               eta_min=0.01),
    "CyclicLR": lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=3),
    "CyclicLR-triangular2": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=2, step_size_down=3,
                                                    mode="triangular2"),
    "CyclicLR-exp_range": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=2, mode="exp_range",
                                                  gamma=0.9, cycle_momentum=False),
    "SequentialLR": lambda s, o: s.SequentialLR(
        o, [s.LinearLR(o, start_factor=0.1, total_iters=3), s.ExponentialLR(o, 0.9)],
        milestones=[3]),
    "SequentialLR-three": lambda s, o: s.SequentialLR(
        o, [s.ConstantLR(o, factor=0.2, total_iters=2), s.StepLR(o, 2, 0.5),
            s.CosineAnnealingLR(o, T_max=4)], milestones=[2, 6]),
    "ChainedScheduler": lambda s, o: s.ChainedScheduler(
        [s.ConstantLR(o, factor=0.5, total_iters=4), s.ExponentialLR(o, 0.9)]),
}


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_scheduler_matches_pytorch(name):
    make = SCHEDULERS[name]
    assert _trace(dt, make, 14) == pytest.approx(_trace(torch, make, 14), rel=1e-12)


def test_cyclic_lr_cycles_adam_beta1_like_pytorch():
    make = SCHEDULERS["CyclicLR"]
    assert _trace(dt, make, 8, "Adam") == pytest.approx(_trace(torch, make, 8, "Adam"), rel=1e-12)


@pytest.mark.parametrize("name", ["CyclicLR", "SequentialLR", "ChainedScheduler",
                                  "CosineAnnealingWarmRestarts", "MultiplicativeLR"])
def test_state_dict_resumes_like_pytorch(name):
    """A scheduler rebuilt mid-run on the same optimizer and given the state dict. (A
    composite's members, rebuilt, first step the optimizer's lr again, in PyTorch too.)"""
    make = SCHEDULERS[name]
    resumed = _trace(dt, make, 10, resume_at=5)
    assert resumed == pytest.approx(_trace(torch, make, 10, resume_at=5), rel=1e-12)
    if name not in ("SequentialLR", "ChainedScheduler"):
        assert resumed == pytest.approx(_trace(dt, make, 10), rel=1e-12)


def test_warm_restarts_with_explicit_epochs_match_pytorch():
    def run(lib):
        opt = _opt(lib, "SGD")
        s = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=3)
        out = []
        for e in [0.5, 1, 2.5, 7, 9.25, 20]:
            s.step(e)
            out.append(opt.param_groups[0]["lr"])
        return out
    assert run(dt) == pytest.approx(run(torch), rel=1e-12)
    assert run(dt)[0] == pytest.approx(0.1 * (1 + math.cos(math.pi * 0.5 / 2)) / 2)


def test_errors_match_pytorch():
    for make in [lambda s, o: s.ConstantLR(o, factor=1.5),
                 lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=0),
                 lambda s, o: s.CyclicLR(o, 0.1, 1.0, mode="bogus"),
                 lambda s, o: s.SequentialLR(o, [s.ExponentialLR(o, 0.9)], milestones=[3]),
                 lambda s, o: s.ChainedScheduler([s.ReduceLROnPlateau(o)])]:
        with pytest.raises(ValueError) as theirs:
            make(torch.optim.lr_scheduler, _opt(torch, "SGD"))
        with pytest.raises(ValueError) as mine:
            make(dt.optim.lr_scheduler, _opt(dt, "SGD"))
        assert str(mine.value) == str(theirs.value)
