"""torch.optim.swa_utils against PyTorch: averaged weights (SWA and EMA), SWALR's
learning rates, update_bn's recomputed BatchNorm statistics."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")


def _models():
    rng = np.random.default_rng(0)
    mods = []
    for lib in (dt, torch):
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))
        mods.append(m)
    state = {k: rng.standard_normal(tuple(v.shape)).astype(np.float32) if v.dtype.is_floating_point
             else v.numpy() for k, v in mods[1].state_dict().items()}
    mods[0].load_state_dict({k: dt.tensor(v) for k, v in state.items()})
    mods[1].load_state_dict({k: torch.tensor(v) for k, v in state.items()})
    return mods


def _nudge(models, k):
    rng = np.random.default_rng(10 + k)
    deltas = [rng.standard_normal(tuple(p.shape)).astype(np.float32) for p in models[1].parameters()]
    for lib, m in zip((dt, torch), models):
        with lib.no_grad():
            for p, d in zip(m.parameters(), deltas):
                p.add_(lib.tensor(d))


@pytest.mark.parametrize("kind", ["swa", "ema", "ema-multi", "swa-buffers"])
def test_averaged_model_matches_pytorch(kind):
    models = _models()
    averaged = []
    for lib, m in zip((dt, torch), models):
        su = lib.optim.swa_utils
        kwargs = {"swa": {}, "ema": dict(avg_fn=su.get_ema_avg_fn(0.9)),
                  "ema-multi": dict(multi_avg_fn=su.get_ema_multi_avg_fn(0.8)),
                  "swa-buffers": dict(use_buffers=True)}[kind]
        averaged.append(su.AveragedModel(m, **kwargs))
    for k in range(4):
        _nudge(models, k)
        for a, m in zip(averaged, models):
            a.update_parameters(m)
    ours, theirs = averaged[0].state_dict(), averaged[1].state_dict()
    assert list(ours) == list(theirs)
    for key in theirs:
        np.testing.assert_allclose(ours[key].numpy(), theirs[key].numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=key)
    x = np.random.default_rng(5).standard_normal((6, 3)).astype(np.float32)
    averaged[0].eval()
    averaged[1].eval()
    np.testing.assert_allclose(averaged[0](dt.tensor(x)).detach().numpy(),
                               averaged[1](torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)


def test_update_bn_matches_pytorch():
    models = _models()
    rng = np.random.default_rng(1)
    batches = [rng.standard_normal((5, 3)).astype(np.float32) for _ in range(3)]
    for lib, m in zip((dt, torch), models):
        m.eval()
        lib.optim.swa_utils.update_bn([(lib.tensor(b), 0) for b in batches], m)
        assert not m.training and m[1].momentum == 0.1
    for key in ("1.running_mean", "1.running_var", "1.num_batches_tracked"):
        np.testing.assert_allclose(models[0].state_dict()[key].numpy(),
                                   models[1].state_dict()[key].numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("strategy,epochs", [("cos", 3), ("linear", 4), ("cos", 0)])
def test_swalr_matches_pytorch(strategy, epochs):
    def run(lib):
        p = lib.nn.Parameter(lib.zeros(1))
        opt = lib.optim.SGD([{"params": [p]}, {"params": [lib.nn.Parameter(lib.zeros(1))],
                                               "lr": 0.5}], lr=0.1)
        s = lib.optim.swa_utils.SWALR(opt, swa_lr=[0.05, 0.01], anneal_epochs=epochs,
                                      anneal_strategy=strategy)
        out = []
        for _ in range(7):
            opt.step()
            s.step()
            out += [g["lr"] for g in opt.param_groups]
        return out
    assert run(dt) == pytest.approx(run(torch), rel=1e-12)


def test_errors():
    with pytest.raises(ValueError, match="Invalid decay value 1.5"):
        dt.optim.swa_utils.get_ema_multi_avg_fn(1.5)
    opt = dt.optim.SGD([dt.nn.Parameter(dt.zeros(1))], lr=0.1)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
        dt.optim.swa_utils.SWALR(opt, 0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
        dt.optim.swa_utils.SWALR(opt, 0.1, anneal_epochs=-1)
