"""torch.device parses and refuses device strings and (type, index) pairs as PyTorch's
c10::Device does, and also takes the device types installed backends register."""
import pickle
import warnings

import pytest
import torch

import dispatchtorch as dt
from dispatchtorch import _device
from dispatchtorch.dispatch import loader


def _outcome(lib, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # PyTorch deprecates 'mkldnn'
        try:
            d = lib.device(*args, **kwargs)
        except Exception as e:                   # noqa: BLE001 - the class is compared
            return type(e).__name__, str(e)
    return repr(d), d.type, d.index, str(d)


GOOD = ["cpu", "cuda", "cuda:0", "cuda:1", "cuda:12", "cpu:0", "cpu:1", "meta", "meta:0",
        "opencl", "opencl:2", "mps", "xpu", "xla:0", "hpu", "mtia", "privateuseone", "mkldnn"]
BAD = ["foo", "foo:0", "CUDA", "cuda_x", "_", "cuda:-1", "cpu:-1", "cpu:x", "cuda:", "cuda:01",
       "cuda:00", "cuda:+1", "cuda:1.0", "cuda:0:1", "cuda:1:", " cuda", "cuda ", "cuda: 1",
       "cuda1", "1cuda", "foo:-1", "mkl-dnn", "", "cuda:\uff19"]


@pytest.mark.parametrize("spec", GOOD + BAD)
def test_strings(spec):
    assert _outcome(dt, spec) == _outcome(torch, spec)


@pytest.mark.parametrize("args", [("cuda", 1), ("cuda", 0), ("cpu", 0), ("cpu", 1), ("cpu", None),
                                  ("meta", 3), ("cuda", -1), ("cpu", -2), ("foo", 0), ("cuda", "1"),
                                  ("cuda", 1.0), ("cuda", True), ("cuda:0", 1), ("cuda:0", None),
                                  (-1,), (None,), (b"cuda",)])
def test_type_and_index(args):
    want, got = _outcome(torch, *args), _outcome(dt, *args)
    if args == (None,):                 # PyTorch's parser lists its overloads here
        assert got[0] == want[0] == "TypeError"
    else:
        assert got == want


def test_keywords_and_copies():
    for kw in (dict(type="cuda", index=1), dict(type="cuda")):
        assert _outcome(dt, **kw) == _outcome(torch, **kw)
    d = dt.device("cuda", 1)
    assert dt.device(d) == d and dt.device(d) is not d
    with pytest.raises(TypeError, match="must be str, not"):
        dt.device(d, 1)
    assert pickle.loads(pickle.dumps(d)) == d
    assert pickle.loads(pickle.dumps(dt.device("cpu"))) == dt.device("cpu")


def test_a_bare_index_is_refused_as_runtime_error():
    with pytest.raises(RuntimeError, match="Device index must not be negative"):
        dt.device(-1)
    with pytest.raises(RuntimeError, match=r"device\(0\).*device type"):
        dt.device(0)


def test_any_cpu_index_makes_tensors_on_the_cpu():
    for spec in ("cpu:0", "cpu:1", "meta:1"):
        assert str(dt.empty(1, device=spec).device) == str(torch.empty(1, device=spec).device)


def test_a_registered_backend_type_is_a_device_type(monkeypatch):
    loader._discover()
    monkeypatch.setattr(loader, "_installed_types", ["cpu", "opencl", "remote"])
    assert dt.device("remote:1") == dt.device("remote", 1)
    with pytest.raises(RuntimeError) as e:
        dt.device("remot")
    assert str(e.value).endswith("privateuseone, remote device type at start of device string: remot")
    assert _device.TORCH_TYPES[0] == "cpu"


@pytest.mark.parametrize("other", ["cpu", "cpu:0", "cuda", 0, None, ("cpu", None)])
def test_a_device_equals_devices_only(other):
    """device("cpu") == "cpu" is False in PyTorch: == compares with devices, never parses."""
    for a in ("cpu", "cpu:0", "cuda"):
        ours, theirs = dt.device(a), torch.device(a)
        assert (ours == other, other == ours, ours != other) == \
               (theirs == other, other == theirs, theirs != other), (a, other)
        assert (ours == dt.device(a), ours == dt.device("meta")) == \
               (theirs == torch.device(a), theirs == torch.device("meta"))
