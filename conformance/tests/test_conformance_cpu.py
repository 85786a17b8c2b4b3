"""CI: the whole suite against the CPU backend, which is the reference and so must be
100% conformant (this checks the harness). The other backends with a device on the
CI machine are run by `make conformance` (see docs/conformance.md)."""
import json
import subprocess
import sys
import time


def test_cpu_reference_is_fully_conformant(subprocess_env, tmp_path):
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "dispatchtorch_conformance", "--backend", "cpu",
                        "--report", str(tmp_path / "cpu.json"), "--no-progress", "-q"],
                       env=subprocess_env, capture_output=True, text=True, timeout=1800)
    seconds = time.perf_counter() - t0
    rep = json.loads((tmp_path / "cpu.json").read_text())
    bad = [r["id"] + ": " + r.get("message", "") for r in rep["results"]
           if r["outcome"] not in ("pass",)]
    assert p.returncode == 0 and not bad, "\n".join(bad[:50]) + p.stderr[-2000:]
    s = rep["summary"]
    assert s["pass"] > 20000 and s["failed"] == 0 and s["skip"] == 0
    assert all(c["status"] == "ok" for row in rep["cells"].values() for c in row.values())
    # every prim has cases of its own and ran on the device (here: the CPU itself)
    from dispatchtorch.backend.prims import PRIMS
    assert (s["prims_on_device"], s["prims_fell_back"], s["conformant"]) == (len(PRIMS), 0, True)
    assert s["partial"] == [] and s["verdict"] == "CONFORMANT"
    print(f"\nCPU conformance: {s['line']} (wall {seconds:.1f}s)")
