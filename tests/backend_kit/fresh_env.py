"""A fresh virtual environment for a test, layered on the running one.

`python -m venv --without-pip` takes a tenth of a second; a `.pth` file makes the
running environment's site-packages (dispatchtorch, its dependencies, pip, setuptools)
visible *behind* the venv's own, so `pip install` puts new distributions into the venv
and nothing is downloaded. Console scripts the guide uses get small shims that run
the same entry points with the venv's interpreter; `pip` is the venv's.
"""
from __future__ import annotations

import os
import shlex
import site
import subprocess
import sys
from pathlib import Path

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


# runs console script NAME (argv[1]) as pip's generated scripts do: its entry point's main()
_CONSOLE_SCRIPT = """import sys
from importlib.metadata import entry_points
found = entry_points(group="console_scripts", name=sys.argv[1])
if not found:
    sys.exit(f"{sys.argv[1]}: not installed")
sys.argv = sys.argv[1:]
sys.exit(next(iter(found)).load()())"""


def make_venv(path: Path, scripts=(), extra_args=None) -> dict:
    """Create the venv, with shims for the named console scripts of installed
    distributions (extra_args: {script: arguments the shim appends}). Returns the
    environment to run commands in (PATH starting with the venv's bin)."""
    extra_args = extra_args or {}
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    bindir = path / "bin"
    venv_python = bindir / "python"
    purelib = subprocess.run([str(venv_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    parents = [p for p in site.getsitepackages() if Path(p).is_dir()]
    lines = [f"import site; site.addsitedir({p!r})" for p in parents]
    Path(purelib, "_parent_environment.pth").write_text("\n".join(lines) + "\n")
    shims = {"pip": f'exec "{venv_python}" -m pip "$@"'}
    for name in scripts:
        extra = "".join(f" {shlex.quote(a)}" for a in extra_args.get(name, ()))
        shims[name] = f"exec \"{venv_python}\" -c '{_CONSOLE_SCRIPT}' {name} \"$@\"{extra}"
    for name, line in shims.items():
        (bindir / name).write_text(f"#!/bin/sh\n{line}\n")
        (bindir / name).chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV"))}
    env.update(PATH=f"{bindir}{os.pathsep}{SYSTEM_PATH}", VIRTUAL_ENV=str(path),
               PIP_NO_INDEX="1", PIP_NO_BUILD_ISOLATION="0", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env
