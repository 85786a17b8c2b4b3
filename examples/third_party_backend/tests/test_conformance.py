"""The conformance suite against the remote device: zero failures for what it claims
(dtypes it does not declare are skipped, prims it lacks run on the CPU; the report
says which)."""
import json
import os
import shutil
import subprocess
import sys

import pytest

# the suite's command, next to this interpreter first (a virtual environment's bin)
CONFORMANCE = (shutil.which("dispatchtorch-conformance", path=os.path.dirname(sys.executable))
               or shutil.which("dispatchtorch-conformance"))


@pytest.mark.skipif(CONFORMANCE is None, reason="the conformance suite is not installed: "
                                                "pip install dispatchtorch-conformance")
def test_conformance(tmp_path):
    report = tmp_path / "remote-report.json"
    result = subprocess.run([CONFORMANCE, "--backend", "remote", "--allow-fallback",
                             "--report", str(report)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-5000:]
    assert json.loads(report.read_text()), "the conformance report is empty"
