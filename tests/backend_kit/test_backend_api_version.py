"""The backend API version: compatible backends load, others are refused with a message
naming both versions, and the rest of dispatchtorch keeps working."""
import pytest

import dispatchtorch as torch
from dispatchtorch.backend import API_VERSION, compatible, contract
from dispatchtorch.backends import __main__ as cli
from dispatchtorch.backends import report
from dispatchtorch.dispatch import get_backend

from backend_dists import installed

# A backend for the tests: the reference's methods and kernels under another device type,
# on a class that declares its API version, or not, as the test asks.
SOURCE = """
from dispatchtorch.backend import MEMORY_METHODS, Backend, hookimpl
from dispatchtorch_cpu.backend import CPUBackend


class Versioned(Backend):
    name = {name!r}
    kernels = CPUBackend.kernels
    devices = CPUBackend.devices
    {declaration}


for method in MEMORY_METHODS:
    setattr(Versioned, method, getattr(CPUBackend, method))


@hookimpl
def dispatchtorch_backend():
    return Versioned()
"""


def backend_files(name, version="missing"):
    declaration = "pass" if version == "missing" else f"api_version = {version!r}"
    return {f"{name}_plugin.py": SOURCE.format(name=name, declaration=declaration)}


@pytest.fixture
def core_version(monkeypatch):
    """Pretend the running core provides another backend API version."""
    def provide(version):
        monkeypatch.setattr(contract, "API_VERSION", version)
    return provide


@pytest.mark.parametrize("backend, core, ok", [
    ((1, 0), (1, 0), True), ((1, 0), (1, 3), True), ((1, 3), (1, 3), True),
    ((1, 4), (1, 3), False), ((2, 0), (1, 3), False), ((0, 9), (1, 3), False),
    ([1, 0], (1, 0), True), ("1.0", (1, 0), False), (None, (1, 0), False), ((1,), (1, 0), False),
    ((1, 0.5), (1, 0), False), ((True, 0), (1, 0), False),
])
def test_compatible(backend, core, ok):
    assert compatible(backend, core) is ok


def test_core_provides_version_1_0_and_cpu_declares_it():
    assert API_VERSION == (1, 0)
    assert get_backend("cpu").api_version == (1, 0)


def test_older_minor_loads_and_runs(tmp_path, core_version):
    core_version((1, 2))
    with installed(tmp_path, "dispatchtorch-olderminor", {"olderminor": "olderminor_plugin"},
                   backend_files("olderminor", (1, 0))):
        rt = get_backend("olderminor")
        assert rt.status == "ready", rt.error
        x = torch.arange(4.0, device="olderminor")
        assert (x * 2).sum().item() == 12.0
        entry = next(b for b in report() if b["name"] == "olderminor")
        assert entry["api_version"] == "1.0"


@pytest.mark.parametrize("declared, core, expected", [
    ((2, 0), (1, 0), "built for backend API version 2.0, but this dispatchtorch provides 1.0"),
    ((0, 7), (1, 0), "built for backend API version 0.7, but this dispatchtorch provides 1.0"),
    ((1, 3), (1, 2), "built for backend API version 1.3, but this dispatchtorch provides 1.2; "
                     "upgrade dispatchtorch"),
    ("missing", (1, 0), "does not declare the backend API version it was built for; set "
                        "`api_version = (1, 0)`"),
    ("1.0", (1, 0), "declares api_version '1.0'; expected a (major, minor) pair of ints"),
])
def test_incompatible_backend_is_refused_and_the_rest_keeps_working(
        tmp_path, core_version, capsys, declared, core, expected):
    core_version(core)
    with installed(tmp_path / "bad", "dispatchtorch-badver", {"badver": "badver_plugin"},
                   backend_files("badver", declared)), \
            installed(tmp_path / "good", "dispatchtorch-goodver", {"goodver": "goodver_plugin"},
                      backend_files("goodver", core)):
        rt = get_backend("badver")
        assert rt.status == "failed" and expected in rt.error
        with pytest.raises(RuntimeError, match="device 'badver' is not usable") as info:
            torch.ones(2, device="badver")
        assert expected in str(info.value)
        # the listing reports it; everything else works, including another plugin
        assert cli.main([]) == 0
        listing = capsys.readouterr().out
        assert "badver" in listing and "FAILED" in listing and expected in listing
        assert "goodver" in listing and "READY" in listing
        y = torch.tensor([1.0, 2.0], device="goodver")
        assert (y + 1).tolist() == [2.0, 3.0]
        assert (torch.ones(3) * 2).sum().item() == 6.0
