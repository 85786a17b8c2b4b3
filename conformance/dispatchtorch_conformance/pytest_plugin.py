"""The pytest plugin (entry point `pytest11`): options for the conformance tests in
this package, which run with

    pytest --pyargs dispatchtorch_conformance --dispatchtorch-backend opencl -n 2

Loaded in every pytest session of an environment where the suite is installed, so
it only adds options: it imports nothing of dispatchtorch.
"""
from __future__ import annotations

import os


def pytest_addoption(parser):
    g = parser.getgroup("dispatchtorch-conformance", "dispatchtorch conformance suite")
    g.addoption("--dispatchtorch-backend", default=None, metavar="NAME",
                help="device type of the backend under test (default: $DISPATCHTORCH_CONFORMANCE"
                     "_BACKEND or cpu)")
    g.addoption("--dispatchtorch-device", type=int, default=0, metavar="INDEX",
                help="device index (default 0)")
    g.addoption("--dispatchtorch-ops", default=None, metavar="NAMES",
                help="comma-separated op or case names (fnmatch patterns)")
    g.addoption("--dispatchtorch-dtypes", default=None, metavar="NAMES",
                help="comma-separated dtypes (default: all the device claims)")
    g.addoption("--dispatchtorch-xfails", default=None, metavar="FILE",
                help="expected failures of this backend (see the suite's README)")
    g.addoption("--dispatchtorch-skips", default=None, metavar="FILE",
                help="cells or samples not to run (same format)")
    g.addoption("--dispatchtorch-no-fallback", action="store_true",
                help="a prim the backend lacks is an error, not a CPU fallback")


def backend_name(config):
    return (config.getoption("--dispatchtorch-backend")
            or os.environ.get("DISPATCHTORCH_CONFORMANCE_BACKEND") or "cpu")


def pytest_report_header(config):
    if config.getoption("--dispatchtorch-backend"):
        return (f"dispatchtorch-conformance: backend {backend_name(config)}, device "
                f"{config.getoption('--dispatchtorch-device')}")
    return None
