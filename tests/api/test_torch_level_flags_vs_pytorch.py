"""The process-wide switches of _torch_level/flags.py called wrongly, against PyTorch:
the same exception class and message for each call (bad types, keywords where PyTorch's
C functions take none, wrong arity, a bool or numpy integer as debug mode), and the
state a call that PyTorch accepts leaves behind."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import dispatchtorch as dt  # noqa: E402

BAD_CALLS = [
    ("use_deterministic_algorithms", (1,), {}),
    ("use_deterministic_algorithms", (True,), {"warn_only": None}),
    ("set_deterministic_debug_mode", (np.int64(2),), {}),
    ("set_deterministic_debug_mode", (1.0,), {}),
    ("set_deterministic_debug_mode", ("bad",), {}),
    ("set_deterministic_debug_mode", (3,), {}),
    ("set_warn_always", (1,), {}),
    ("set_flush_denormal", (None,), {}),
    ("set_flush_denormal", (), {"mode": False}),
    ("set_flush_denormal", (), {}),
    ("set_flush_denormal", (True, True), {}),
    ("set_anomaly_enabled", (1,), {}),
    ("set_anomaly_enabled", (True, 1), {}),
    ("set_anomaly_enabled", (), {"enabled": 1}),
    ("set_anomaly_enabled", (True,), {"check_nan": None}),
    ("set_anomaly_enabled", (), {}),
    ("set_anomaly_enabled", (True, True, True), {}),
    ("set_anomaly_enabled", (True,), {"foo": 1}),
    ("set_anomaly_enabled", (True,), {"enabled": True}),
    ("set_num_interop_threads", (), {"n": 2}),
    ("set_num_interop_threads", (), {}),
    ("set_num_interop_threads", (1.5,), {}),
    ("set_num_interop_threads", (0,), {}),
]


def _raised(fn, args, kwargs):
    with pytest.raises(Exception) as info:
        fn(*args, **kwargs)
    return type(info.value), str(info.value)


@pytest.mark.parametrize("name,args,kwargs", BAD_CALLS,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(BAD_CALLS)])
def test_bad_call_raises_as_pytorch(name, args, kwargs):
    assert _raised(getattr(dt, name), args, kwargs) == _raised(getattr(torch, name), args, kwargs)


@pytest.mark.parametrize("mode,expected", [(True, 1), (False, 0), (2, 2)])
def test_debug_mode_takes_a_bool_as_an_int(mode, expected):
    for lib in (torch, dt):
        try:
            lib.set_deterministic_debug_mode(mode)
            assert lib.get_deterministic_debug_mode() == expected
            assert lib.are_deterministic_algorithms_enabled() is (expected != 0)
        finally:
            lib.set_deterministic_debug_mode(0)


def test_anomaly_by_keyword():
    for lib in (torch, dt):
        try:
            lib.set_anomaly_enabled(check_nan=False, enabled=True)
            assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
        finally:
            lib.set_anomaly_enabled(False)
    assert list(inspect.signature(dt.set_anomaly_enabled).parameters) == ["enabled", "check_nan"]


def test_flush_denormal_is_unsupported_here():
    """PyTorch's answer on a CPU without FTZ/DAZ: False, and denormals stay."""
    assert dt.set_flush_denormal(True) is False
    tiny = dt.tensor([1e-320], dtype=dt.float64)
    assert (tiny * 1.0).item() == 1e-320
