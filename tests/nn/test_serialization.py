"""save / load: round trips, map_location, damaged files, and files that try to run code."""
from __future__ import annotations

import io
import json
import math
import os
import pickle
import struct

import numpy as np
import pytest
from conftest import to_np

import dispatchtorch as dt
import dispatchtorch.nn as nn
from dispatchtorch.serialization import CheckpointError


def _round_trip(obj, save=dt.save, **kw):
    buf = io.BytesIO()
    save(obj, buf)
    return dt.load(io.BytesIO(buf.getvalue()), **kw)


# dispatchtorch's own code-free format, written only on request since save writes PyTorch's
_safetensors_save = dt.serialization.save_safetensors_checkpoint


@pytest.mark.parametrize("save", [dt.save, _safetensors_save])
def test_tensors_of_every_dtype_and_shape_round_trip(save):
    for dtype in (dt.float32, dt.float64, dt.float16, dt.bfloat16, dt.int64, dt.int32, dt.int16,
                  dt.int8, dt.uint8, dt.bool):
        for shape in ((), (0,), (3,), (2, 0, 3), (2, 3, 4)):
            t = (dt.arange(int(np.prod(shape))) % 3).reshape(shape).to(dtype)
            r = _round_trip(t, save)
            assert r.dtype is dtype and tuple(r.shape) == shape
            assert np.array_equal(to_np(r.float()), to_np(t.float()))


@pytest.mark.parametrize("save", [dt.save, _safetensors_save])
def test_non_contiguous_views_save_their_values(save):
    t = dt.arange(12.0).reshape(3, 4)
    assert to_np(_round_trip(t.T[1:], save)).tolist() == to_np(t.T[1:]).tolist()


@pytest.mark.parametrize("save", [dt.save, _safetensors_save])
def test_nested_structures_round_trip(save):
    obj = {"a": [1, 2.5, None, True, "text", (3, dt.float64)], 0: dt.ones(2),
           "inf": float("inf"), "nested": {"d": dt.device("cpu"), (): []}.get("d"),
           "t": (dt.zeros(1), [dt.tensor([1, 2])]), 1.5: "float key"}
    r = _round_trip(obj, save)
    assert list(r) == list(obj)
    assert r["a"] == [1, 2.5, None, True, "text", (3, dt.float64)]
    assert math.isinf(r["inf"]) and r["nested"] == dt.device("cpu") and r[1.5] == "float key"
    assert isinstance(r["t"], tuple) and to_np(r["t"][1][0]).tolist() == [1, 2]
    nan = _round_trip(float("nan"), save)
    assert math.isnan(nan)


def test_model_and_optimizer_state_round_trip(tmp_path):
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    opt = dt.optim.Adam(model.parameters())
    model(dt.randn(5, 3)).sum().backward()
    opt.step()
    path = tmp_path / "ck.pt"
    dt.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 7}, path)
    ck = dt.load(path)
    assert ck["epoch"] == 7
    fresh = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    fresh.load_state_dict(ck["model"])
    for k, v in model.state_dict().items():
        assert np.array_equal(to_np(fresh.state_dict()[k]), to_np(v))
    assert ck["opt"]["param_groups"] == opt.state_dict()["param_groups"]
    assert ck["opt"]["state"][0]["step"].shape == ()


@pytest.mark.parametrize("save", [dt.save, _safetensors_save])
def test_parameters_and_requires_grad_survive(save):
    p = nn.Parameter(dt.ones(2))
    r = _round_trip({"p": p, "t": dt.ones(1, requires_grad=True), "u": dt.ones(1)}, save)
    assert isinstance(r["p"], nn.Parameter) and r["p"].requires_grad
    assert r["t"].requires_grad and not isinstance(r["t"], nn.Parameter)
    assert not r["u"].requires_grad


def test_map_location_forms():
    t = dt.arange(3.0)
    assert str(_round_trip(t, map_location="cpu").device) == "cpu"
    assert str(_round_trip(t, map_location=dt.device("cpu")).device) == "cpu"
    assert str(_round_trip(t, map_location={"cpu": "cpu"}).device) == "cpu"
    seen = []       # PyTorch's format: fn(storage, location), as torch.load calls it
    r = _round_trip(t, map_location=lambda storage, loc: seen.append(loc) or storage)
    assert seen == ["cpu"] and to_np(r).tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(RuntimeError):
        _round_trip(t, map_location="nosuchdevice")
    seen = []       # the safetensors format: fn(tensor, saved device)
    r = _round_trip(t, _safetensors_save,
                    map_location=lambda tensor, loc: seen.append(loc) or tensor * 2)
    assert seen == ["cpu"] and to_np(r).tolist() == [0.0, 2.0, 4.0]
    with pytest.raises(RuntimeError):
        _round_trip(t, _safetensors_save, map_location="nosuchdevice")


def test_objects_beyond_the_code_free_format_are_pickled_as_pytorch_does():
    """Anything else is pickled (tests/serialization covers loading it back); what
    pickle cannot hold fails as in PyTorch. A numpy array loads only with
    weights_only=False or allowlisted, as in PyTorch 2.6+."""
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        dt.save({"x": [1, lambda: 0]}, io.BytesIO())
    buf = io.BytesIO()
    dt.save(np.zeros(2), buf)
    with pytest.raises(pickle.UnpicklingError, match="_reconstruct"):
        dt.load(io.BytesIO(buf.getvalue()))
    assert dt.load(io.BytesIO(buf.getvalue()), weights_only=False).tolist() == [0.0, 0.0]
    with pytest.raises(TypeError, match="dispatchtorch.save writes any picklable object"):
        _safetensors_save(nn.Linear(1, 1), io.BytesIO())


def _saved(obj):
    """A checkpoint in dispatchtorch's safetensors format (its damage checks below)."""
    buf = io.BytesIO()
    _safetensors_save(obj, buf)
    return buf.getvalue()


def test_truncated_files_raise_clear_errors():
    data = _saved({"w": dt.arange(100.0)})
    for cut in (0, 5, 20, len(data) // 2, len(data) - 1):
        with pytest.raises(CheckpointError, match="truncated|corrupted"):
            dt.load(io.BytesIO(data[:cut]))


def test_corrupted_bytes_raise_clear_errors():
    data = bytearray(_saved({"w": dt.arange(100.0)}))
    flipped = bytearray(data)
    flipped[-10] ^= 0xFF                       # a byte of tensor data
    with pytest.raises(CheckpointError, match="do not match their checksum"):
        dt.load(io.BytesIO(bytes(flipped)))
    header_len = struct.unpack("<Q", bytes(data[:8]))[0]
    for pos in range(8, 8 + header_len, 7):   # any byte of the JSON header
        broken = bytearray(data)
        broken[pos] = ord("}") if broken[pos] != ord("}") else ord("{")
        with pytest.raises(CheckpointError, match="corrupted|truncated"):
            dt.load(io.BytesIO(bytes(broken)))
    assert b'\\"w\\"' in data                        # the key "w", escaped inside the metadata
    renamed = bytes(data).replace(b'\\"w\\"', b'\\"v\\"')  # valid JSON, altered structure
    with pytest.raises(CheckpointError, match="checksum"):
        dt.load(io.BytesIO(renamed))
    with pytest.raises(CheckpointError, match="truncated or not a checkpoint"):
        dt.load(io.BytesIO(b"abc"))


def _with_structure(structure):
    """A valid safetensors file whose dispatchtorch metadata is `structure`."""
    import safetensors.numpy
    import zlib
    meta = json.dumps({"format": "dispatchtorch.checkpoint", "version": 1,
                       "structure": structure})
    return safetensors.numpy.save({"t0": np.zeros(1, np.float32)},
                                  metadata={"dispatchtorch": meta,
                                            "dispatchtorch.crc32": str(zlib.crc32(meta.encode()))})


class _Payload:
    def __reduce__(self):
        return (os.system, ("touch PWNED_BY_PICKLE",))


def test_a_malicious_file_cannot_run_code(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # a pickle whose loading would run a shell command
    evil = tmp_path / "evil.pt"
    evil.write_bytes(pickle.dumps({"w": _Payload()}))
    # (read as PyTorch's legacy format, whose restricted unpickler refuses the global)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL posix.system"):
        dt.load(evil)
    # the same payload in a zip, as torch.save writes
    import zipfile
    with zipfile.ZipFile(tmp_path / "evil.zip", "w") as z:
        z.writestr("archive/data.pkl", pickle.dumps(_Payload()))
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL posix.system"):
        dt.load(tmp_path / "evil.zip")
    # structures naming classes or callables are rejected, never resolved
    for node in ({"__reduce__": ["os.system", ["touch PWNED_BY_PICKLE"]]},
                 {"__class__": "os.system"}, {"__dtype__": "os.system"},
                 {"__tensor__": "missing"}, {"__dict__": "x"}):
        with pytest.raises(CheckpointError):
            dt.load(io.BytesIO(_with_structure(node)))
    assert not (tmp_path / "PWNED_BY_PICKLE").exists()


def test_pytorch_written_safetensors_load(torch, tmp_path):
    safetensors_torch = pytest.importorskip("safetensors.torch")
    path = tmp_path / "model.safetensors"
    sd = torch.nn.Linear(3, 2).state_dict()
    safetensors_torch.save_file(sd, path)
    ours = dt.serialization.load_safetensors(path)
    assert np.array_equal(to_np(ours["weight"]), sd["weight"].numpy())
    with pytest.raises(CheckpointError, match="without dispatchtorch's structure"):
        dt.load(path)
    m = nn.Linear(3, 2)
    m.load_state_dict(ours)


def test_header_length_lies_are_caught():
    data = bytearray(_saved(dt.ones(1)))
    data[:8] = struct.pack("<Q", 10 ** 12)
    with pytest.raises(CheckpointError, match="truncated"):
        dt.load(io.BytesIO(bytes(data)))


def test_tensors_pickle_for_copying():
    t = dt.tensor([1.0, 2.0], requires_grad=True)
    r = pickle.loads(pickle.dumps(t))
    assert r.requires_grad and to_np(r).tolist() == [1.0, 2.0]
    p = pickle.loads(pickle.dumps(nn.Parameter(dt.ones(1))))
    assert isinstance(p, nn.Parameter)
