"""CI: the whole suite against the CPU backend, which is the reference and so must be
100% conformant (this checks the harness), and against every other installed
backend that has a device here."""
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _other_ready_backends():
    from dispatchtorch.dispatch import list_backends
    return [rt.name for rt in list_backends() if rt.status == "ready" and rt.name != "cpu"]


def _run(env, backend, report, extra=()):
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "dispatchtorch_conformance", "--backend", backend,
                        "--report", str(report), "--no-progress", "-q", *extra], env=env,
                       capture_output=True, text=True, timeout=1800)
    return p, time.perf_counter() - t0


def test_cpu_reference_is_fully_conformant(subprocess_env, tmp_path):
    p, seconds = _run(subprocess_env, "cpu", tmp_path / "cpu.json")
    rep = json.loads((tmp_path / "cpu.json").read_text())
    bad = [r["id"] + ": " + r.get("message", "") for r in rep["results"]
           if r["outcome"] not in ("pass",)]
    assert p.returncode == 0 and not bad, "\n".join(bad[:50]) + p.stderr[-2000:]
    s = rep["summary"]
    assert s["pass"] > 20000 and s["failed"] == 0 and s["skip"] == 0
    assert all(c["status"] == "ok" for row in rep["cells"].values() for c in row.values())
    print(f"\nCPU conformance: {s['line']} (wall {seconds:.1f}s)")


@pytest.mark.parametrize("backend", _other_ready_backends())
def test_other_backends_with_a_device(subprocess_env, tmp_path, backend):
    """Each backend's known issues live in backends/<name>/conformance-xfails.txt."""
    extra = ["--isolate", "--jobs", "2"]
    xfails = REPO / "backends" / backend / "conformance-xfails.txt"
    if xfails.exists():
        extra += ["--xfails", str(xfails)]
    p, seconds = _run(subprocess_env, backend, tmp_path / f"{backend}.json", extra)
    assert p.returncode == 0, p.stdout[-5000:] + p.stderr[-2000:]
