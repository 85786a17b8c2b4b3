"""Backends are found through entry points: a throwaway distribution, pip-installed into a
temp dir, is discovered, listed and used; a broken one is reported without breaking others."""
import json
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import dispatchtorch as torch
from dispatchtorch import dispatch

TOY = '''
import numpy as np
from dispatchtorch.backend import API_VERSION, Backend, DeviceInfo, hookimpl

NP = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "bool": np.bool_}


class Handle:
    """Not a numpy array on purpose: the frontend must treat handles as opaque."""
    def __init__(self, array):
        self.array = array


class ToyBackend(Backend):
    name = "toy"
    api_version = API_VERSION

    def __init__(self):
        self.kernels = {
            "add": lambda out, a, b: np.add(a.array, b.array, out=out.array),
            "mul": lambda out, a, b: np.multiply(a.array, b.array, out=out.array),
        }

    def devices(self):
        return [DeviceInfo(0, "toy device", frozenset(NP), {"kind": "test"})]

    def empty(self, shape, dtype, device):
        return Handle(np.empty(shape, NP[dtype]))

    def from_host(self, array, device, copy=True):
        return Handle(np.array(array, order="C"))

    def to_host(self, handle):
        return handle.array

    def as_strided(self, storage, shape, strides, offset):
        s = storage.array
        return Handle(np.ndarray(shape, s.dtype, s, offset * s.itemsize,
                                 tuple(x * s.itemsize for x in strides)))

    def copy_(self, dst, src):
        np.copyto(dst.array, src.array, casting="unsafe")

    def fill_(self, dst, value):
        dst.array.fill(value)


@hookimpl
def dispatchtorch_backend():
    return ToyBackend()
'''

BROKEN = '''
raise ImportError("this driver is not installed")
'''


def _package(root, name, module_source, entry_name):
    pkg = root / name
    (pkg / name).mkdir(parents=True)
    (pkg / name / "__init__.py").write_text(module_source)
    (pkg / "pyproject.toml").write_text(textwrap.dedent(f'''
        [build-system]
        requires = ["setuptools>=68"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "{name.replace('_', '-')}"
        version = "0.3.1"
        [project.entry-points."dispatchtorch.backends"]
        {entry_name} = "{name}"
        [tool.setuptools]
        packages = ["{name}"]
    '''))
    return pkg


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    root = tmp_path_factory.mktemp("backends")
    toy = _package(root, "toy_backend", TOY, "toy")
    broken = _package(root, "broken_backend", BROKEN, "broken")
    target = root / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--no-build-isolation", "--disable-pip-version-check", "--target", str(target),
                    str(toy), str(broken)], check=True)
    sys.path.insert(0, str(target))
    dispatch.reset_backends()
    yield target
    sys.path.remove(str(target))
    for mod in ("toy_backend", "broken_backend"):
        sys.modules.pop(mod, None)
    dispatch.reset_backends()


def test_discovered_and_listed(installed):
    by_name = {rt.name: rt for rt in dispatch.list_backends()}
    toy = by_name["toy"]
    assert toy.status == "ready" and toy.dist == "toy-backend" and toy.version == "0.3.1"
    assert toy.devices[0].name == "toy device"
    assert "exp" in toy.missing_prims and "add" not in toy.missing_prims
    broken = by_name["broken"]
    assert broken.status == "failed" and "this driver is not installed" in broken.error
    assert by_name["cpu"].status == "ready"


def test_used_by_device_string(installed):
    x = torch.tensor([1.0, 2.0, 3.0], device="toy")
    y = x * 2 + x
    assert str(y.device) == "toy:0" and y.dtype is torch.float32
    assert y.cpu().tolist() == [3.0, 6.0, 9.0]
    v = y[1:]                       # a view on the toy device aliases its memory
    v.fill_(0.0)
    assert y.cpu().tolist() == [3.0, 0.0, 0.0]


def test_missing_prim_falls_back_once_with_a_warning(installed):
    x = torch.tensor([0.0, 1.0], device="toy")
    with pytest.warns(RuntimeWarning, match="exp: backend 'toy' has no kernel"):
        y = torch.exp(x)
    np.testing.assert_allclose(y.cpu().numpy(), np.exp([0.0, 1.0]), rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.exp(x)                    # the second call does not warn again
    assert "exp" in dispatch.get_backend("toy").fallbacks


def test_strict_mode_refuses_fallback(installed):
    dispatch.set_fallback_mode("error")
    try:
        with pytest.raises(RuntimeError, match="sin: backend 'toy' has no kernel.*FALLBACK=error"):
            torch.sin(torch.ones(2, device="toy"))
    finally:
        dispatch.set_fallback_mode("warn")


def test_mixing_devices_names_op_and_devices(installed):
    a = torch.ones(2, device="toy")
    with pytest.raises(RuntimeError, match="same device.*toy:0.*cpu|same device.*cpu.*toy:0"):
        a + torch.ones(2)
    # a 0-d cpu tensor joins like a scalar, as in PyTorch
    assert (a + torch.tensor(1.0)).cpu().tolist() == [2.0, 2.0]


def test_unknown_device_and_missing_index(installed):
    with pytest.raises(RuntimeError, match="toy device type at start of device string: nosuch"):
        torch.zeros(1, device="nosuch")            # PyTorch's refusal, naming installed types
    with pytest.raises(RuntimeError, match="no backend is installed for device type 'nosuch'"):
        dispatch.get_backend("nosuch")
    with pytest.raises(RuntimeError, match="'toy:3' does not exist.*1 device"):
        torch.zeros(1, device="toy:3")
    with pytest.raises(RuntimeError, match="broken.*failed.*this driver is not installed"):
        torch.zeros(1, device="broken")
    with pytest.raises(TypeError, match="does not support dtype int8"):
        torch.zeros(1, dtype=torch.int8, device="toy")


def test_cli_lists_them(installed):
    env = {"PYTHONPATH": f"{installed}:" + ":".join(sys.path)}
    out = subprocess.run([sys.executable, "-m", "dispatchtorch.backends", "--json"], env=env,
                         capture_output=True, text=True, check=True).stdout
    entries = {e["name"]: e for e in json.loads(out)}
    assert entries["toy"]["status"] == "ready" and entries["broken"]["status"] == "failed"
    text = subprocess.run([sys.executable, "-m", "dispatchtorch.backends"], env=env,
                          capture_output=True, text=True, check=True).stdout
    assert "toy" in text and "READY" in text and "FAILED" in text


def test_env_var_limits_loaded_backends(installed, monkeypatch):
    monkeypatch.setenv("DISPATCHTORCH_BACKENDS", "cpu")
    dispatch.reset_backends()
    try:
        assert dispatch.available_names() == ["cpu"]
        with pytest.raises(RuntimeError, match="DISPATCHTORCH_BACKENDS excludes it"):
            torch.zeros(1, device="toy")
    finally:
        monkeypatch.delenv("DISPATCHTORCH_BACKENDS")
        dispatch.reset_backends()


def test_import_never_breaks(installed):
    code = "import dispatchtorch as t; print((t.ones(2) + 1).tolist())"
    env = {"PYTHONPATH": f"{installed}:" + ":".join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[2.0, 2.0]"
