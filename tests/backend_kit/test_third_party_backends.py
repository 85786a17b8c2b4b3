"""Two third-party backends, each built from its own folder by pip and installed side by
side, used in one program: the remote example and a backend made by the template."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dispatchtorch.backends.new import create

from template_gaps import NUMPY_LACKS

# the prims numpy has no function for (the template leaves them to the CPU fallback)


ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "third_party_backend"


def pip_install_target(target: Path, *folders: Path) -> None:
    """Build wheels from the folders and install them into target (no index, no deps:
    dispatchtorch and numpy come from the running environment)."""
    env = {**os.environ, "PIP_NO_BUILD_ISOLATION": "0"}
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "-q", "--no-deps",
         "--no-index", "--target", str(target), *map(str, folders)],
        capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("third_party")
    acme = create("acme", root)
    pip_install_target(root / "site", acme, EXAMPLE)
    return root / "site"


def run_with(site: Path, code: str) -> dict:
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(site)]))}
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                            text=True, env=env, timeout=300, cwd=site.parent)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def test_both_install_and_are_listed_ready(site):
    r = run_with(site, """
        import json
        from importlib import metadata
        from dispatchtorch.backends import report
        entries = {b["name"]: b for b in report()}
        print(json.dumps({
            "status": {n: entries[n]["status"] for n in ("acme", "remote")},
            "dists": {n: entries[n]["distribution"] for n in ("acme", "remote")},
            "files": [str(metadata.distribution(d).locate_file(""))
                      for d in ("dispatchtorch-acme", "dispatchtorch-remote")],
            "missing": {n: entries[n]["missing_prims"] for n in ("acme", "remote")}}))
    """)
    assert r["status"] == {"acme": "ready", "remote": "ready"}
    assert r["dists"] == {"acme": "dispatchtorch-acme", "remote": "dispatchtorch-remote"}
    assert all(Path(f) == site for f in r["files"])       # the built wheels, not the folders
    assert r["missing"] == {"acme": NUMPY_LACKS, "remote": NUMPY_LACKS}


def test_one_program_uses_both_moving_tensors_through_the_cpu(site):
    r = run_with(site, """
        import json
        import numpy as np
        import dispatchtorch as torch

        torch.manual_seed(0)
        x = torch.randn(3, 4)
        on_remote = x.to("remote")
        a = (on_remote.T @ on_remote).sigmoid()            # computed in the worker process
        on_acme = a.to("cpu").to("acme")                    # remote -> cpu -> acme
        b = (on_acme * 2 - 1).sum(dim=0)                    # computed by acme's kernels
        direct = a.to("acme")                               # remote -> acme (through the host)
        back = b.to("remote").to("cpu")

        xn = x.numpy().astype(np.float64)
        expected = (2 / (1 + np.exp(-(xn.T @ xn))) - 1).sum(axis=0)
        mixed = "no error"
        try:
            on_remote[0] + on_acme[0]
        except RuntimeError as exc:
            mixed = str(exc)

        # gradients flow back across both devices
        w = torch.ones(4, device="remote", requires_grad=True)
        loss = ((w * 3).to("acme") ** 2).sum()
        loss.backward()
        print(json.dumps({
            "devices": [str(t.device) for t in (a, on_acme, b, direct, back)],
            "err": float(np.abs(back.numpy() - expected).max()),
            "same": bool((direct.to("cpu") == on_acme.to("cpu")).all().item()),
            "mixed": mixed, "grad": w.grad.tolist(), "grad_device": str(w.grad.device)}))
    """)
    assert r["devices"] == ["remote:0", "acme:0", "acme:0", "acme:0", "cpu"]
    assert r["err"] < 1e-5 and r["same"]
    assert "Expected all tensors to be on the same device" in r["mixed"]
    assert r["grad"] == [18.0] * 4 and r["grad_device"] == "remote:0"


def test_set_device_routes_index_less_devices_on_a_two_device_backend(site, monkeypatch):
    """torch.<type>.set_device / device() / streams on a backend with two devices (the
    remote example with two worker processes), as torch.cuda behaves with two GPUs."""
    monkeypatch.setenv("DISPATCHTORCH_REMOTE_WORKERS", "2")
    r = run_with(site, """
        import json
        import dispatchtorch as torch
        from dispatchtorch._accelerator import DeviceModule

        m = DeviceModule("remote")
        seen = [m.device_count(), m.current_device(), str(torch.zeros(2, device="remote").device)]
        m.set_device(1)
        t = torch.ones(3, device="remote")
        seen += [m.current_device(), str(t.device), str(torch.ones(1).to("remote").device),
                 str(m.current_stream().device), (t * 2).sum().item()]
        with m.device(0):
            seen += [m.current_device(), str(torch.zeros(1, device="remote").device)]
        seen += [m.current_device(), str(torch.zeros(1, device="remote:0").device)]
        try:
            m.set_device(2)
        except RuntimeError as exc:
            seen.append(str(exc))
        e0, e1 = m.Event(enable_timing=True), m.Event(enable_timing=True)
        e0.record()
        (t @ t).item()
        e1.record()
        seen.append(e0.elapsed_time(e1) >= 0)
        print(json.dumps(seen))
    """)
    assert r[:3] == [2, 0, "remote:0"]
    assert r[3:8] == [1, "remote:1", "remote:1", "remote:1", 6.0]
    assert r[8:12] == [0, "remote:0", 1, "remote:0"]
    assert "invalid device ordinal 2" in r[12] and r[13] is True
