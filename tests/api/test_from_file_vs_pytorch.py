"""torch.from_file against PyTorch's: the values read, shared=True writing through (and
growing or creating the file), private mappings leaving the file alone, the errors."""
from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import dispatchtorch as dt  # noqa: E402


@pytest.fixture
def path(tmp_path):
    def make(name="f.bin", data=np.arange(6, dtype=np.float32)):
        p = str(tmp_path / name)
        if data is not None:
            data.tofile(p)
        return p
    return make


@pytest.mark.parametrize("kw", [dict(size=6), dict(size=0), dict(size=3, dtype="float64"),
                                dict(size=4, shared=False), dict(size=2, dtype="int8"),
                                dict(size=5, dtype="int16"), dict(size=6, shared=True)])
def test_from_file_values(path, kw):
    p = path()
    got = []
    for lib in (torch, dt):
        k = dict(kw)
        if "dtype" in k:
            k["dtype"] = getattr(lib, k["dtype"])
        got.append(lib.from_file(p, **k))
    assert tuple(got[1].shape) == tuple(got[0].shape)
    assert str(got[1].dtype).split(".")[-1] == str(got[0].dtype).split(".")[-1]
    np.testing.assert_array_equal(got[1].numpy(), got[0].numpy())


@pytest.mark.parametrize("shared", [True, False, None])
def test_from_file_writes_through_only_when_shared(path, shared):
    for lib in (torch, dt):
        p = path(f"{lib.__name__}-{shared}.bin")
        t = lib.from_file(p, shared=shared, size=6)
        t[1] = 100.0
        t.add_(1.0)
        assert t[1].item() == 101.0
        del t
        want = [1.0, 101.0, 3.0, 4.0, 5.0, 6.0] if shared else [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
        assert np.fromfile(p, dtype=np.float32).tolist() == want


def test_from_file_shared_grows_and_creates(path):
    for lib in (torch, dt):
        p = path(f"{lib.__name__}.bin")
        t = lib.from_file(p, shared=True, size=10)
        assert t[6:].tolist() == [0.0] * 4 and os.path.getsize(p) == 40
        q = path(f"{lib.__name__}-new.bin", data=None)
        t = lib.from_file(q, shared=True, size=4, dtype=lib.float64)
        assert t.tolist() == [0.0] * 4 and os.path.getsize(q) == 32


def test_from_file_requires_grad(path):
    t = dt.from_file(path(), size=3, requires_grad=True)
    assert t.requires_grad and t.is_leaf


@pytest.mark.parametrize("case", ["too_small", "negative", "missing", "not_str"])
def test_from_file_errors(path, case):
    p = path()
    missing = p + ".missing"
    calls = {"too_small": lambda lib: lib.from_file(p, size=10),
             "negative": lambda lib: lib.from_file(p, size=-1),
             "missing": lambda lib: lib.from_file(missing, size=2),
             "not_str": lambda lib: lib.from_file(3, size=2)}
    caught = []
    for lib in (torch, dt):
        with pytest.raises(Exception) as info:
            calls[case](lib)
        caught.append(info.value)
    assert type(caught[1]) is type(caught[0]) and str(caught[1]) == str(caught[0])
    assert not os.path.exists(missing)
