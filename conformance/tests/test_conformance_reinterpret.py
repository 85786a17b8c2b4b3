"""The contract's view(dtype) check (the optional `reinterpret` hook): it passes on the
CPU reference and on OpenCL, is a skip with its reason where the hook is absent, and
fails a backend whose views of the bytes are copies or of the wrong bytes."""
import numpy as np
import pytest

import dispatchtorch as torch
from dispatchtorch_conformance import contract
from dispatchtorch_conformance.runner import Target


def _ids(target):
    return [c for c in contract.names(target.dtypes) if c.startswith("reinterpret/")]


def test_cpu_passes_for_every_dtype():
    target = Target("cpu")
    ids = _ids(target)
    assert "reinterpret/float32" in ids and "reinterpret/bool" in ids
    assert all(contract.run_one(target, c).outcome == "pass" for c in ids)


@pytest.fixture
def opencl(opencl_target):
    return opencl_target


def test_opencl_passes(opencl):
    results = [contract.run_one(opencl, c) for c in _ids(opencl)]
    assert results and all(r.outcome == "pass" for r in results), results


def test_an_absent_hook_is_a_skip_with_its_reason(opencl, monkeypatch):
    monkeypatch.setattr(type(opencl.rt.backend), "reinterpret", lambda self, s, d: None)
    r = contract.run_one(opencl, "reinterpret/float32")
    assert r.outcome == "skip" and "has no reinterpret" in r.message


def test_a_view_that_is_a_copy_fails(opencl, monkeypatch):
    bk = type(opencl.rt.backend)
    real = bk.reinterpret

    def copied(self, storage, dtype):          # the right bytes, but not the same memory
        flat = real(self, storage, dtype)
        fresh = self.empty(flat.shape, dtype, storage.dev.index)
        self.copy_(fresh, flat)
        return fresh
    monkeypatch.setattr(bk, "reinterpret", copied)
    r = contract.run_one(opencl, "reinterpret/float32")
    assert r.outcome == "fail" and "after a write through x.view(uint8)" in r.message, r


def test_a_view_of_the_wrong_bytes_fails(opencl, monkeypatch):
    bk = type(opencl.rt.backend)
    real = bk.reinterpret

    def zeroed(self, storage, dtype):          # the bytes lost (a fresh zero buffer)
        flat = real(self, storage, dtype)
        fresh = self.empty(flat.shape, dtype, storage.dev.index)
        self.fill_(fresh, 0)
        return fresh
    monkeypatch.setattr(bk, "reinterpret", zeroed)
    r = contract.run_one(opencl, "reinterpret/int32")
    assert r.outcome == "fail" and "x.view(uint8): " in r.message, r
