"""`import dispatchtorch as torch` must not show modules that torch lacks: every module
bound on the freshly imported package is a torch submodule name, an underscore name,
or one of the documented packages `backend` / `dispatch` (the backend API and the
dispatcher). Checked in a fresh interpreter so other tests' imports do not count."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import types

import pytest

# PyTorch 2.13's public top-level submodules (pkgutil over torch.__path__) and torch.ops
TORCH_SUBMODULES = frozenset("""
accelerator amp ao autograd backends compiler contrib cpu cuda distributed distributions
export fft func functional futures fx hub jit library linalg masked monitor mps mtia
multiprocessing nativert nested nn numa onnx ops optim overrides package profiler
quantization quasirandom random return_types serialization signal sparse special storage
testing torch_version types utils version xpu
""".split())
DOCUMENTED = frozenset({"backend", "dispatch"})


def _module_names():
    code = ("import json, types, dispatchtorch as d; print(json.dumps(sorted("
            "k for k, v in vars(d).items() if isinstance(v, types.ModuleType))))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return [n for n in json.loads(r.stdout.splitlines()[-1]) if not n.startswith("_")]


@pytest.fixture(scope="module")
def module_names():
    return _module_names()


def test_only_torch_submodules_and_documented_packages(module_names):
    extra = [n for n in module_names if n not in TORCH_SUBMODULES | DOCUMENTED]
    assert not extra, f"dispatchtorch binds modules torch has not: {extra}"
    assert "nn" in module_names and "pointwise" not in module_names


def test_against_installed_torch(module_names):
    torch = pytest.importorskip("torch")

    def torch_has(name):
        return (isinstance(getattr(torch, name, None), types.ModuleType)
                or importlib.util.find_spec(f"torch.{name}") is not None)

    extra = [n for n in module_names if n not in DOCUMENTED and not torch_has(n)]
    assert not extra, f"dispatchtorch binds modules torch {torch.__version__} has not: {extra}"


def test_no_stray_helper_names():
    """The package's own imports (the __future__ feature, a builtins alias) are not names
    of torch's: a fresh dispatchtorch binds neither."""
    code = ("import dispatchtorch as d; "
            "print(hasattr(d, 'annotations'), hasattr(d, 'builtins_bool'))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-2:] == ["False", "False"]
