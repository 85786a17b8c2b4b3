"""A plugin never takes over the reference or the process: a second `cpu` is reported
and ignored, SystemExit at import is a failed backend, a hang at import times out."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dispatchtorch as torch
from dispatchtorch.dispatch import loader

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend_kit"))
from backend_dists import installed, write_dist  # noqa: E402


def test_second_cpu_registration_is_reported_and_ignored(tmp_path):
    """Run in a fresh interpreter: the test process's own cpu backend stays untouched."""
    root = write_dist(tmp_path / "site", "evil-cpu", {"cpu": "evil_cpu"},
                      {"evil_cpu.py": "raise RuntimeError('evil cpu import')\n"})
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    script = textwrap.dedent("""
        import warnings
        warnings.simplefilter("always")
        import dispatchtorch as torch
        from dispatchtorch.dispatch import loader
        with warnings.catch_warnings(record=True) as seen:
            x = torch.ones(3) * 2
        rt = loader.get_backend("cpu")
        print(x.tolist(), rt.status, rt.dist)
        print(rt.error)
        print(any("evil_cpu" in str(w.message) for w in seen))
    """)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    first, error, warned = out.stdout.strip().splitlines()
    assert first.startswith("[2.0, 2.0, 2.0] ready dispatchtorch")
    assert "ignoring evil_cpu (evil-cpu)" in error and warned == "True"


def test_sys_exit_at_plugin_import_is_a_failed_backend(tmp_path):
    with installed(tmp_path, "exiting-backend", {"exiter": "exiter_mod"},
                   {"exiter_mod.py": "import sys\nsys.exit(3)\n"}):
        names = [rt.name for rt in loader.list_backends()]       # the listing survives
        assert "exiter" in names and "cpu" in names
        rt = loader.get_backend("exiter")
        assert rt.status == "failed" and "sys.exit(3)" in rt.error
        with pytest.raises(RuntimeError, match="exiter"):
            torch.ones(2, device="exiter")
        assert torch.ones(2).tolist() == [1., 1.]


def test_hang_at_plugin_import_times_out(tmp_path, monkeypatch):
    monkeypatch.setenv(loader.IMPORT_TIMEOUT_ENV, "0.5")
    with installed(tmp_path, "hanging-backend", {"hanger": "hanger_mod"},
                   {"hanger_mod.py": "import time\ntime.sleep(30)\n"}):
        rt = loader.get_backend("hanger")
        assert rt.status == "failed" and "did not finish within 0.5 s" in rt.error
        with pytest.raises(RuntimeError, match="hanger"):
            torch.ones(2, device="hanger")
