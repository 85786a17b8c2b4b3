"""A truly fresh virtual environment for a test: nothing inherited from the running one.

A newcomer starts from an empty venv, so the doc tests do too: `python -m venv` (with
pip) and nothing else on its path. Whatever the docs' commands need, they must install
themselves; a missing step fails here as it would for the reader.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def make_venv(path: Path) -> dict:
    """Create the venv; returns the environment to run commands in (its bin first)."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"))}
    env.update(PATH=f"{path / 'bin'}{os.pathsep}{SYSTEM_PATH}", VIRTUAL_ENV=str(path),
               PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONWARNINGS="ignore")
    return env
