"""Fixtures of the conformance suite's own tests: throwaway backends registered
through a dist-info directory on sys.path (no pip), found by importlib.metadata."""
import importlib
import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
FIXTURES = HERE / "fixture_backends"
REPO = HERE.parent.parent
BACKENDS = {"fixture": "dtc_fixture_wrong", "crashy": "dtc_fixture_crashy"}
# the broken copies of the CPU backend, one bug each (and a faithful one, and one with
# no kernels): name -> "module:attribute"
BROKEN = ("b_expm1", "b_ftz", "b_zerosign", "b_halfsum", "b_int32sum", "b_layout", "b_tile",
          "b_scatter", "faithful", "nokernels")
ENTRY_POINTS = {**BACKENDS, **{n: f"dtc_fixture_broken:plugin_{n}" for n in BROKEN}}
MODULES = tuple(BACKENDS.values()) + ("dtc_fixture_broken",)


def make_site(root: Path) -> Path:
    """A directory that, on sys.path, installs the fixture backends."""
    site = root / "site"
    dist = site / "dtc_fixture_backends-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: dtc-fixture-backends\n"
                                   "Version: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[dispatchtorch.backends]\n" + "".join(f"{n} = {m}\n" for n, m in ENTRY_POINTS.items()))
    for mod in MODULES:
        shutil.copy(FIXTURES / f"{mod}.py", site / f"{mod}.py")
    return site


@pytest.fixture(scope="session")
def fixture_site(tmp_path_factory):
    return make_site(tmp_path_factory.mktemp("dtc"))


@pytest.fixture
def fixture_backends(fixture_site):
    """The fixture backends registered in this process for the test's duration."""
    from dispatchtorch.dispatch import reset_backends, set_fallback_mode, get_fallback_mode
    mode = get_fallback_mode()
    sys.path.insert(0, str(fixture_site))
    importlib.invalidate_caches()
    reset_backends()
    try:
        yield fixture_site
    finally:
        sys.path.remove(str(fixture_site))
        for mod in MODULES:
            sys.modules.pop(mod, None)
        importlib.invalidate_caches()
        set_fallback_mode(mode)
        reset_backends()


@pytest.fixture
def subprocess_env(fixture_site):
    """The environment for running the suite's command in a subprocess."""
    env = dict(os.environ)
    paths = [str(fixture_site), str(REPO), str(REPO / "backends" / "cpu"), str(REPO / "conformance")]
    env["PYTHONPATH"] = os.pathsep.join(paths + [p for p in [env.get("PYTHONPATH")] if p])
    env.pop("DISPATCHTORCH_BACKENDS", None)
    return env


@pytest.fixture
def opencl_target():
    """The conformance Target of the OpenCL backend (skips without a device)."""
    import dispatchtorch as torch
    from dispatchtorch_conformance.runner import Target
    if not torch.opencl.is_available():
        pytest.skip("no OpenCL device")
    return Target("opencl")
