"""Checkpoints: a stored tensor loads once however often the structure names it, forged
structure raises CheckpointError, and a save that dies half way leaves the old file."""
import json
import os
import tracemalloc
import zlib

import numpy as np
import pytest
import safetensors.numpy

import dispatchtorch as torch
from dispatchtorch.serialization import _META_KEY, CheckpointError


def _forge(structure, arrays=None):
    """A file whose structure is `structure` (as an attacker would write it)."""
    meta = json.dumps({"format": "dispatchtorch.checkpoint", "version": 1,
                       "structure": structure})
    return safetensors.numpy.save(arrays or {"t0": np.zeros(4, np.float32)},
                                  metadata={_META_KEY: meta,
                                            _META_KEY + ".crc32": str(zlib.crc32(meta.encode()))})


def _node(arr, name="t0"):
    return {"__tensor__": name, "dtype": "float32", "shape": list(arr.shape), "device": "cpu",
            "crc32": zlib.crc32(arr.tobytes())}


def test_one_stored_tensor_referenced_2000_times_loads_once():
    """The issue's file: ~460 KiB naming one 256 KiB tensor 2,000 times grew memory by
    503 MiB; now memory stays a small multiple of the file size and it is one tensor."""
    arr = np.arange(65536, dtype=np.float32)             # 256 KiB
    data = _forge([_node(arr)] * 2000, {"t0": arr})
    tracemalloc.start()
    try:
        out = torch.load(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(out) == 2000 and all(t is out[0] for t in out)
    np.testing.assert_array_equal(out[0].numpy(), arr)
    assert peak < 8 * len(data), (peak, len(data))


def test_a_tensor_saved_twice_is_stored_once_and_loads_as_one(tmp_path):
    w = torch.arange(1000.).reshape(10, 100)          # 4,000 bytes
    state = {"a": w, "b": w, "nested": [w, (w,)]}
    path = tmp_path / "shared.ckpt"
    torch.save(state, path)
    one = tmp_path / "one.ckpt"
    torch.save({"a": w}, one)
    assert os.path.getsize(path) < os.path.getsize(one) + 1000     # not four copies
    back = torch.load(path)
    assert back["a"] is back["b"] is back["nested"][0] is back["nested"][1][0]
    assert back["a"].tolist() == w.tolist()


@pytest.mark.parametrize("structure", [
    {"__tensor__": ["t0"]},                         # an unhashable tensor name
    {"__tensor__": "t0", "dtype": "float32", "shape": 4, "crc32": 0},
    {"__tuple__": 5},                               # not a list
    {"__dict__": [[[1, 2], 3]]},                    # a list as a dict key
    {"__dict__": [[{"__tuple__": [[1]]}, 3]]},      # an unhashable tuple key
    {"__float__": [1]},
    {"__device__": "nonsense:x:y"},
    {"__dtype__": ["float32"]},
    {"__tuple__": [{"__dict__": 7}]},
])
def test_forged_structure_raises_the_checkpoint_error(structure):
    with pytest.raises(CheckpointError):
        torch.load(_forge(structure))


def test_structure_nested_past_the_recursion_limit():
    deep = "[" * 100000 + "]" * 100000
    meta = '{"format":"dispatchtorch.checkpoint","version":1,"structure":' + deep + "}"
    data = safetensors.numpy.save({"t0": np.zeros(1, np.float32)},
                                  metadata={_META_KEY: meta,
                                            _META_KEY + ".crc32": str(zlib.crc32(meta.encode()))})
    with pytest.raises(CheckpointError):
        torch.load(data)


def test_map_location_errors_are_the_callers():
    def bad(t, where):
        raise KeyError("mine")
    data = _forge(_node(np.zeros(4, np.float32)))
    with pytest.raises(KeyError, match="mine"):
        torch.load(data, map_location=bad)


def test_a_save_that_dies_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "model.ckpt"
    torch.save({"w": torch.ones(3)}, path)
    before = path.read_bytes()
    real_fsync = os.fsync

    def dies(fd):
        raise OSError("disk full")
    monkeypatch.setattr(os, "fsync", dies)
    with pytest.raises(OSError, match="disk full"):
        torch.save({"w": torch.zeros(1000)}, path)
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.ckpt"]     # no temp left
    assert torch.load(path)["w"].tolist() == [1., 1., 1.]
