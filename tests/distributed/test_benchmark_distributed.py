"""benchmarks/distributed.py end to end on tiny sizes: both rows measured, the ratios
printed, the JSON written (no timed assertions)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import dispatchtorch.distributed as dist
from dispatchtorch.distributed import run

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.skipif(not dist.is_available() or run.find_mpiexec() is None,
                    reason=dist.unavailable_reason() or "mpiexec not found")
def test_distributed_benchmark_rows(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-m", "benchmarks.distributed", "--repeats", "1",
                          "--elements", "4096", "--batch", "4", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "ratio" in out.stdout and "DDP 2 ranks" in out.stdout
    res = json.loads((tmp_path / "distributed.json").read_text())
    assert set(res["all_reduce"]) == {"mpi4py", "dispatchtorch"}
    assert res["ddp_step_s"] > 0 and res["single_step_s"] > 0 and res["ranks"] == 2
