"""torch.save of whole objects (modules, optimizers, anything picklable) and torch.load's
weights_only rule (PyTorch 2.6+): refused by default, naming the global; loaded with
weights_only=False or with the globals allowlisted; state dicts stay code-free."""
from __future__ import annotations

import io
import os
import pickle

import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch import nn, serialization


def _model():
    dt.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))


def _bytes(obj):
    buf = io.BytesIO()
    dt.save(obj, buf)
    return buf.getvalue()


def test_whole_module_is_refused_by_default_and_loads_with_weights_only_false():
    m = _model()
    data = _bytes(m)
    with pytest.raises(pickle.UnpicklingError) as info:
        dt.load(io.BytesIO(data))
    msg = str(info.value)
    assert "Weights only load failed" in msg and "weights_only" in msg
    assert "dispatchtorch.nn.modules.container.Sequential" in msg
    back = dt.load(io.BytesIO(data), weights_only=False)
    assert type(back) is nn.Sequential and repr(back) == repr(m)
    x = dt.randn(5, 3)
    np.testing.assert_array_equal(back(x).detach().numpy(), m(x).detach().numpy())
    assert isinstance(back[0].weight, nn.Parameter) and back[0].weight.requires_grad


def test_optimizer_and_arbitrary_objects(tmp_path):
    m = _model()
    opt = dt.optim.Adam(m.parameters(), lr=0.01)
    m(dt.randn(2, 3)).sum().backward()
    opt.step()
    path = tmp_path / "opt.pt"
    dt.save(opt, path)
    back = dt.load(path, weights_only=False)
    assert type(back) is dt.optim.Adam and back.param_groups[0]["lr"] == 0.01
    s0, s1 = opt.state_dict()["state"][0], back.state_dict()["state"][0]
    np.testing.assert_array_equal(s0["exp_avg"].numpy(), s1["exp_avg"].numpy())
    obj = {"config": {1, 2, 3}, "when": (3, "x"), "tensor": dt.arange(3)}
    got = dt.load(io.BytesIO(_bytes(obj)))        # sets and tuples: allowed by default
    assert got["config"] == {1, 2, 3} and got["tensor"].tolist() == [0, 1, 2]


def test_state_dicts_name_only_allowlisted_globals():
    """A state dict is saved in PyTorch's zip format naming only what a weights-only load
    allows, so it loads by default (here and in PyTorch)."""
    data = _bytes(_model().state_dict())
    assert data.startswith(b"PK\x03\x04")
    assert serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data)) == []
    sd = dt.load(io.BytesIO(data))
    assert sorted(sd) == ["0.bias", "0.weight", "2.bias", "2.weight"]


def test_safe_globals_allowlist_the_classes():
    data = _bytes(_model())
    unsafe = serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data))
    assert "dispatchtorch.nn.modules.container.Sequential" in unsafe
    assert "dispatchtorch.nn.modules.linear.Linear" in unsafe
    import importlib
    classes = []
    for name in unsafe:
        module, _, attr = name.rpartition(".")
        classes.append(getattr(importlib.import_module(module), attr))
    assert serialization.get_safe_globals() == []
    with serialization.safe_globals(classes):
        assert len(serialization.get_safe_globals()) == len(classes)
        back = dt.load(io.BytesIO(data))
        assert type(back) is nn.Sequential
    assert serialization.get_safe_globals() == []
    serialization.add_safe_globals(classes)
    try:
        assert type(dt.load(io.BytesIO(data))) is nn.Sequential
    finally:
        serialization.clear_safe_globals()
    with pytest.raises(ValueError, match="safe_globals must be a list of globals"):
        serialization.add_safe_globals(nn.Linear)


class _Evil:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_weights_only_load_never_runs_code(tmp_path):
    target = tmp_path / "pwned"
    data = _bytes({"x": _Evil(str(target))})
    with pytest.raises(pickle.UnpicklingError, match=r"Unsupported global: GLOBAL (builtins|io)\.open"):
        dt.load(io.BytesIO(data))
    assert not os.path.exists(target)


def test_map_location_applies_to_pickled_tensors():
    data = _bytes({"m": _model(), "t": dt.ones(2)})
    seen = []

    def where(t, saved):
        seen.append(saved)
        return t
    back = dt.load(io.BytesIO(data), weights_only=False, map_location=where)
    assert back["t"].tolist() == [1.0, 1.0] and set(seen) == {"cpu"}
    back = dt.load(io.BytesIO(data), weights_only=False, map_location="cpu")
    assert back["m"][0].weight.device.type == "cpu"


def test_older_whole_object_files_still_load():
    """Files of the DISPATCHTORCH-PICKLE-1 format earlier versions wrote (a magic line,
    then a pickle whose tensors rebuild through dispatchtorch.serialization)."""
    from dispatchtorch import _pickle_checkpoint
    m = _model()
    data = _pickle_checkpoint.MAGIC + pickle.dumps({"m": m, "t": dt.arange(3)})
    with pytest.raises(pickle.UnpicklingError, match="dispatchtorch.nn.modules.container"):
        dt.load(io.BytesIO(data))
    back = dt.load(io.BytesIO(data), weights_only=False)
    x = dt.randn(2, 3)
    np.testing.assert_array_equal(back["m"](x).detach().numpy(), m(x).detach().numpy())
    plain = _pickle_checkpoint.MAGIC + pickle.dumps({"t": dt.arange(3), "s": {1, 2}})
    assert dt.load(io.BytesIO(plain))["t"].tolist() == [0, 1, 2]
