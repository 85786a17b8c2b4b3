"""`dispatchtorch-backends new NAME`: what it writes, what it refuses, and that what it
writes is a working backend."""
import ast
import json
from pathlib import Path

import numpy as np
import pytest

import dispatchtorch as torch
from dispatchtorch.backend import API_VERSION
from dispatchtorch.backends import __main__ as cli
from dispatchtorch.backends.new import render
from dispatchtorch.dispatch import get_backend

from backend_dists import installed

from template_gaps import NUMPY_LACKS

# the prims numpy has no function for (the template leaves them to the CPU fallback)


ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "third_party_backend"


def test_listing_stays_the_default(capsys):
    assert cli.main([]) == 0
    plain = capsys.readouterr().out
    assert cli.main(["list"]) == 0 and capsys.readouterr().out == plain
    assert cli.main(["--json"]) == 0
    assert "cpu" in {b["name"] for b in json.loads(capsys.readouterr().out)}
    assert plain.startswith("cpu  (")


def test_new_writes_a_package(tmp_path, capsys):
    assert cli.main(["new", "acme_npu", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    target = tmp_path / "dispatchtorch-acme-npu"
    files = sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file())
    assert files == [".github/workflows/conformance.yml", "README.md",
                     "dispatchtorch_acme_npu/__init__.py",
                     "dispatchtorch_acme_npu/backend.py", "dispatchtorch_acme_npu/kernels.py",
                     "pyproject.toml", "tests/test_conformance.py"]
    assert f"pip install -e {target}" in out
    for path in target.rglob("*"):
        if path.is_file():
            text = path.read_text()
            assert "__NAME__" not in text and "__PACKAGE__" not in text and "__CLASS__" not in text
            if path.suffix == ".py":
                compile(text, str(path), "exec")
    pyproject = (target / "pyproject.toml").read_text()
    assert '[project.entry-points."dispatchtorch.backends"]\nacme_npu = "dispatchtorch_acme_npu"' \
        in pyproject
    assert 'name = "dispatchtorch-acme-npu"' in pyproject
    backend = (target / "dispatchtorch_acme_npu" / "backend.py").read_text()
    assert f"api_version = ({API_VERSION[0]}, {API_VERSION[1]})" in backend
    assert "class AcmeNpuBackend(Backend)" in backend


def test_kernels_module_imports_numpy_only():
    tree = ast.parse(render("acme")["dispatchtorch_acme/kernels.py"])
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert imported == {"numpy", "re", "warnings"}


@pytest.mark.parametrize("name, why", [
    ("Acme", "lowercase Python identifier"), ("9lives", "lowercase Python identifier"),
    ("my-dev", "lowercase Python identifier"), ("class", "lowercase Python identifier"),
    ("cpu", "taken by a backend dispatchtorch ships"), ("meta", "taken"),
])
def test_bad_names_are_refused(tmp_path, capsys, name, why):
    assert cli.main(["new", name, "--dir", str(tmp_path)]) == 2
    assert why in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_an_existing_folder_is_not_overwritten(tmp_path, capsys):
    (tmp_path / "dispatchtorch-acme").mkdir()
    assert cli.main(["new", "acme", "--dir", str(tmp_path)]) == 2
    assert "already exists" in capsys.readouterr().err


def test_the_remote_example_runs_the_template_kernels_unchanged():
    generated = render("remote")["dispatchtorch_remote/kernels.py"]
    assert (EXAMPLE / "dispatchtorch_remote" / "kernels.py").read_text() == generated, \
        "regenerate examples/third_party_backend/dispatchtorch_remote/kernels.py from the template"


def test_generated_backend_works_in_process(tmp_path):
    pkg = render("acme")
    files = {rel: text for rel, text in pkg.items() if rel.startswith("dispatchtorch_acme/")}
    with installed(tmp_path, "dispatchtorch-acme", {"acme": "dispatchtorch_acme"}, files):
        rt = get_backend("acme")
        assert rt.status == "ready", rt.error
        assert rt.missing_prims == NUMPY_LACKS
        assert set(rt.devices[0].dtypes) == {"bool", "uint8", "int8", "int16", "int32", "int64",
                                             "float32", "float64"}
        x = np.arange(12.0).reshape(3, 4) - 5
        t = torch.tensor(x, device="acme")
        t[:, 1].mul_(2)                                      # a strided in-place kernel
        x[:, 1] *= 2
        r = (t.T @ t).relu().sum(dim=0) / 3
        np.testing.assert_allclose(r.cpu().numpy(), np.maximum(x.T @ x, 0).sum(axis=0) / 3)


def test_every_template_file_is_packaged():
    import fnmatch
    import tomllib
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["dispatchtorch.backends"]
    base = ROOT / "dispatchtorch" / "backends"
    files = [str(p.relative_to(base)) for p in (base / "template").rglob("*")
             if p.is_file() and "__pycache__" not in p.parts]
    assert files and all(any(fnmatch.fnmatch(f, g) and f.count("/") == g.count("/") for g in globs)
                         for f in files), files
