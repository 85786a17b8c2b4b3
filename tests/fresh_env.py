"""A fresh virtual environment for a test, layered on the running one.

`python -m venv --without-pip` takes a tenth of a second; a `.pth` file makes the
running environment's site-packages (dispatchtorch, its dependencies, pip, setuptools)
visible *behind* the venv's own, so `pip install` puts new distributions into the venv
and nothing is downloaded. Console scripts the guide uses get small shims that run
the same entry points with the venv's interpreter; `pip` is the venv's.
"""
from __future__ import annotations

import os
import site
import subprocess
import sys
from pathlib import Path

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def make_venv(path: Path, scripts: dict[str, str]) -> dict:
    """Create the venv; scripts maps a command name to the module run by `python -m`.
    Returns the environment to run commands in (PATH starting with the venv's bin)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    bindir = path / "bin"
    venv_python = bindir / "python"
    purelib = subprocess.run([str(venv_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    parents = [p for p in site.getsitepackages() if Path(p).is_dir()]
    lines = [f"import site; site.addsitedir({p!r})" for p in parents]
    Path(purelib, "_parent_environment.pth").write_text("\n".join(lines) + "\n")
    for name, module in {"pip": "pip", **scripts}.items():
        shim = bindir / name
        shim.write_text(f'#!/bin/sh\nexec "{venv_python}" -m {module} "$@"\n')
        shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV"))}
    env.update(PATH=f"{bindir}{os.pathsep}{SYSTEM_PATH}", VIRTUAL_ENV=str(path),
               PIP_NO_INDEX="1", PIP_NO_BUILD_ISOLATION="0", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env
