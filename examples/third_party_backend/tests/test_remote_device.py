"""What is particular to the remote device: tensors held by a worker process, views
made there, errors sent back, missing prims falling back, and its device count.
Needs dispatchtorch-remote installed (its entry point registered)."""
import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import dispatchtorch as torch
from dispatchtorch.backend import BackendError
from dispatchtorch.backends import report, set_fallback_mode
from dispatchtorch.dispatch import get_backend

from dispatchtorch.backend.prims import SPECIAL_BINARY, SPECIAL_UNARY

# the prims numpy has no function for (the template leaves them to the CPU fallback)
NUMPY_LACKS = sorted(["erf", "erfc", "erfinv", "special_airy_ai", *SPECIAL_UNARY,
                      *(n for n in SPECIAL_BINARY if n != "nextafter")])



def worker_stats(index=0):
    return get_backend("remote").backend.worker(index).call("stats")


def run(code, **env):
    """Run code in a fresh interpreter (device count and worker state are per process)."""
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                            text=True, timeout=120, env={**os.environ, **env})
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_listed_ready_with_what_it_lacks_and_overrides():
    entry = next(b for b in report() if b["name"] == "remote")
    assert entry["status"] == "ready", entry["error"]
    assert entry["api_version"] == "1.0"
    assert entry["missing_prims"] == NUMPY_LACKS
    assert entry["composite_kernels"] == ["sigmoid"]
    assert set(entry["devices"][0]["dtypes"]) == {
        "bool", "uint8", "int8", "int16", "int32", "int64", "float32", "float64"}


def test_tensors_live_in_the_worker_and_are_freed_there():
    def compute():
        x = torch.arange(12.0, device="remote").reshape(3, 4)
        return x, (x * 2 + 1).sum(dim=1)

    compute()           # the frontend keeps the constants 2 and 1 on the device, cached
    before = worker_stats()["arrays"]
    x, y = compute()
    assert y.tolist() == [16.0, 48.0, 80.0]
    assert worker_stats()["arrays"] == before + 3       # x's storage, x (a view) and y
    del x, y
    assert worker_stats()["arrays"] == before


def test_views_are_worker_side_views_of_one_storage():
    host = np.arange(12.0).reshape(3, 4)
    x = torch.tensor(host, device="remote")
    column, row, t = x[:, 1], x[2], x.T
    column.mul_(10)                  # in place through a strided view
    row.add_(t[:, 0])                # reading another view of the same storage
    expected = host.copy()
    expected[:, 1] *= 10
    expected[2] += expected[0]
    np.testing.assert_array_equal(x.cpu().numpy(), expected)
    np.testing.assert_array_equal(column.cpu().numpy(), expected[:, 1])
    e = torch.tensor([1.0, 2.0], device="remote").expand(3, 2)   # stride 0
    np.testing.assert_array_equal((e + x[:, :2]).cpu().numpy(), expected[:, :2] + [1.0, 2.0])


def test_a_kernel_error_in_the_worker_is_raised_by_the_call():
    backend = get_backend("remote").backend
    a, b = backend.from_host(np.array([5, 7]), 0), backend.from_host(np.array([1, 0]), 0)
    out = backend.empty((2,), "int64", 0)
    with pytest.raises(ZeroDivisionError, match="integer modulo by zero") as info:
        backend.kernels["fmod"](out, a, b)
    assert "raised by remote worker 0" in " ".join(getattr(info.value, "__notes__", ["worker"]))
    backend.kernels["add"](out, a, a)                # the worker carries on
    assert backend.to_host(out).tolist() == [10, 14]


def _failure(call, device):
    try:
        call(device)
    except Exception as exc:      # noqa: BLE001  (whatever the reference raises)
        return type(exc), str(exc).replace(f"'{device}'", "'<device>'")
    return None


@pytest.mark.parametrize("call", [
    lambda d: torch.full((2,), 300, dtype=torch.int8, device=d),
    lambda d: torch.tensor([5, 7], device=d).fmod(torch.tensor([1, 0], device=d)),
    lambda d: torch.tensor([2, 3], device=d) ** -1,
], ids=["fill-overflow", "int-modulo-by-zero", "int-negative-power"])
def test_errors_are_the_cpu_references(call):
    expected = _failure(call, "cpu")
    assert expected is not None and _failure(call, "remote") == expected
    assert (torch.ones(2, device="remote") + 1).tolist() == [2.0, 2.0]


def test_unclaimed_dtypes_are_refused():
    with pytest.raises(TypeError, match="does not support dtype float16"):
        torch.ones(2, dtype=torch.float16, device="remote")


def test_missing_prim_falls_back_once_with_a_warning_or_is_refused_in_strict_mode():
    x = torch.linspace(-2, 2, 7, device="remote")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = torch.erf(x)
        second = torch.erfc(x)
        torch.erf(x)
    messages = [str(w.message) for w in caught if "no kernel for this prim" in str(w.message)]
    assert any(m.startswith("erf:") for m in messages) and any(m.startswith("erfc:") for m in messages)
    assert len(messages) == 2                  # once per prim
    assert first.device == torch.device("remote:0")
    np.testing.assert_allclose(first.cpu().numpy(), torch.erf(x.cpu()).numpy())
    np.testing.assert_allclose(second.cpu().numpy(), torch.erfc(x.cpu()).numpy())
    set_fallback_mode("error")
    try:
        with pytest.raises(BackendError, match="erf: backend 'remote' has no kernel"):
            torch.erf(x)
    finally:
        set_fallback_mode("warn")


def test_sigmoid_runs_as_one_kernel_in_the_worker():
    x = torch.linspace(-5, 5, 11, device="remote")
    before = worker_stats()["launches"]
    y = torch.sigmoid(x)
    after = worker_stats()["launches"]
    assert after.get("sigmoid", 0) == before.get("sigmoid", 0) + 1
    assert after.get("exp", 0) == before.get("exp", 0)
    np.testing.assert_array_equal(y.cpu().numpy(), torch.sigmoid(x.cpu()).numpy())


def test_autograd_runs_on_the_device():
    w = torch.tensor([[1.0, -2.0], [0.5, 3.0]], device="remote", requires_grad=True)
    x = torch.tensor([[2.0, 1.0]], device="remote")
    (x @ w).sigmoid().sum().backward()
    wc = w.detach().cpu().requires_grad_(True)
    (x.cpu() @ wc).sigmoid().sum().backward()
    assert w.grad.device == torch.device("remote:0")
    np.testing.assert_allclose(w.grad.cpu().numpy(), wc.grad.numpy(), rtol=1e-6)


def test_zero_workers_means_no_device_and_says_why():
    out = run("""
        import dispatchtorch as torch
        from dispatchtorch.backends import report
        entry = next(b for b in report() if b["name"] == "remote")
        print(entry["status"], "|", entry["error"])
        try:
            torch.ones(1, device="remote")
        except RuntimeError as exc:
            print(exc)
    """, DISPATCHTORCH_REMOTE_WORKERS="0")
    status, reason = out.splitlines()[0].split(" | ")
    assert status == "unavailable" and "DISPATCHTORCH_REMOTE_WORKERS=0" in reason
    assert "device 'remote' is not usable" in out and "no worker processes" in out.splitlines()[1]


def test_two_workers_are_two_devices():
    out = run("""
        import json
        import dispatchtorch as torch
        from dispatchtorch.dispatch import get_backend
        a = torch.arange(4.0, device="remote:0")
        b = a.to("remote:1") * 10
        pids = [get_backend("remote").backend.worker(i).info["pid"] for i in (0, 1)]
        try:
            a + b
            mixed = "no error"
        except RuntimeError as exc:
            mixed = str(exc)
        print(json.dumps({"b": b.tolist(), "device": str(b.device), "pids": pids,
                          "mixed": mixed, "n": torch.tensor(0).to("remote:1").device.index}))
    """, DISPATCHTORCH_REMOTE_WORKERS="2")
    r = json.loads(out)
    assert r["b"] == [0.0, 10.0, 20.0, 30.0] and r["device"] == "remote:1" and r["n"] == 1
    assert len(set(r["pids"])) == 2
    assert "Expected all tensors to be on the same device" in r["mixed"]


def test_a_dead_worker_is_reported_not_hung_on():
    out = run("""
        import os, signal
        import dispatchtorch as torch
        from dispatchtorch.dispatch import get_backend
        x = torch.ones(3, device="remote")
        os.kill(get_backend("remote").backend.worker(0).process.pid, signal.SIGKILL)
        try:
            (x + 1).tolist()
        except Exception as exc:
            print(type(exc).__name__, exc)
    """)
    assert "remote worker 0" in out and "exited with status -9" in out


def test_a_forked_child_gets_a_clear_error_and_the_parent_keeps_its_device():
    x = torch.arange(3.0, device="remote")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:                                     # the child
        try:
            (x + 1).tolist()
            message = "no error"
        except Exception as exc:                     # noqa: BLE001
            message = f"{type(exc).__name__}: {exc}"
        os.write(write, message.encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    message = os.read(read, 4096).decode()
    os.close(read)
    assert "belongs to the parent process" in message
    assert (x + 1).tolist() == [1.0, 2.0, 3.0]
