"""The contract's `threads` check: it passes on the CPU reference and on OpenCL, and
fails a backend whose kernel races (publishes its arguments in shared state), naming
the thread, the round and the op."""
import threading
import time

import pytest

import dispatchtorch as torch
from dispatchtorch.dispatch import OPS
from dispatchtorch_conformance import contract
from dispatchtorch_conformance.runner import Target


def test_the_check_is_listed_once_per_backend():
    assert contract.names(Target("cpu").dtypes).count("threads") == 1


def test_cpu_passes():
    r = contract.run_one(Target("cpu"), "threads")
    assert r.outcome == "pass", r


@pytest.fixture
def opencl(opencl_target):
    return opencl_target


def test_opencl_passes(opencl):
    r = contract.run_one(opencl, "threads")
    assert r.outcome == "pass", r


def _racy(monkeypatch, target, op_name):
    """Replace a kernel with one that keeps its arguments in state shared by all
    threads while it yields: two threads at once compute with each other's inputs."""
    op = OPS[op_name]
    torch.add(torch.ones(2, device=target.device), 1.0)   # the real kernels resolved
    x = torch.ones(2, device=target.device)
    getattr(torch, op_name)(x, x) if op_name != "exp" else torch.exp(x)
    real = op.kernels[target.name]
    shared = {}
    lock = threading.Lock()

    def kernel(*args, **kwargs):
        with lock:
            shared["args"] = args
        time.sleep(0.001)
        return real(*shared["args"], **kwargs)
    monkeypatch.setitem(op.kernels, target.name, kernel)


@pytest.mark.parametrize("device", ["cpu", "opencl"])
def test_a_kernel_that_races_fails(device, monkeypatch):
    if device == "opencl" and not torch.opencl.is_available():
        pytest.skip("no OpenCL device")
    target = Target(device)
    _racy(monkeypatch, target, "mul")
    r = contract.run_one(target, "threads")
    assert r.outcome in ("fail", "error"), r
    assert "thread" in r.message and ("round" in r.message or "raised" in r.message), r
