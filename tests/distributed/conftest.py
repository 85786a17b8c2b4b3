"""Fixtures of the tests that compare against PyTorch: stores, and single-rank runs
beside PyTorch's own process group."""
from __future__ import annotations

import tempfile

import pytest


def _outcome(fn):
    """fn()'s value, or ("raised", class name, message) (no message for TypeErrors, whose
    wording pybind writes and we do not copy), so both libraries' runs compare equal."""
    try:
        return fn()
    except Exception as exc:
        return ("raised", type(exc).__name__, "" if isinstance(exc, TypeError) else str(exc))


@pytest.fixture
def outcome():
    return _outcome


@pytest.fixture(scope="module")
def beside_pytorch_groups():
    """dispatchtorch's world of one rank and PyTorch's, a gloo group of one, for a module
    that runs PyTorch's DDP or FSDP beside ours."""
    import torch.distributed as tdist

    import dispatchtorch.distributed as dist
    dist.init_process_group()
    with tempfile.TemporaryDirectory() as d:
        tdist.init_process_group("gloo", init_method=f"file://{d}/store", world_size=1, rank=0)
        yield
        tdist.destroy_process_group()
    dist.destroy_process_group()
