"""Fixtures that tests in more than one directory use."""
import pytest


@pytest.fixture(params=[1, 2])
def threads(request):
    """The CPU backend's pool at 1 and 2 threads for the test, restored after: a chunked
    kernel must give the same bits at every count. (tests/core/test_threaded_kernels.py
    overrides it with 2 and 3.)"""
    from dispatchtorch_cpu import parallel as P
    old = P.POOL.threads
    P.POOL.resize(request.param)
    yield request.param
    P.POOL.resize(old)
