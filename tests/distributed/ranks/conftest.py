"""Fixtures of the tests that run inside an MPI job (`make test-distributed`:
mpiexec -n 2 and -n 3 python -m pytest tests/distributed/ranks/ranks_*.py). Every rank runs
the same tests in the same order, so the collectives meet; a rank whose test fails
moves on, and the next collective its peers wait in ends by the 60 s timeout.

Files are named ranks_*.py so the ordinary `pytest` run never collects them."""
from __future__ import annotations

import datetime

import pytest


@pytest.fixture(scope="session", autouse=True)
def process_group():
    import dispatchtorch.distributed as dist
    if not dist.is_available():
        pytest.skip(dist.unavailable_reason())
    dist.init_process_group(timeout=datetime.timedelta(seconds=60))
    yield
    dist.barrier()
    dist.destroy_process_group()


@pytest.fixture(scope="session")
def world():
    import dispatchtorch.distributed as dist
    return dist.get_rank(), dist.get_world_size()

