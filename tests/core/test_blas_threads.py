"""Who threads BLAS-shaped work (blas_threads.py): large matmuls and linears run on
BLAS's own threads or on the pool's single-threaded chunks, with the same results; a
stalled threaded call moves that work to the pool for a back-off period once the stalls
cost more than the threaded calls saved lately; one thread means BLAS on one thread. (Large full sums stay on the pool: test_threaded_kernels.)"""
import math

import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch_cpu import blas_threads as BT
from dispatchtorch_cpu import parallel as P
from dispatchtorch_cpu import threaded as T
from dispatchtorch_cpu.kernels import KERNELS
from dispatchtorch_cpu.composites import KERNELS as COMPOSITES

rng = np.random.default_rng(21)


class Recorder:
    """A BLAS controller that records the thread counts it is set to."""

    def __init__(self, real=None):
        self.real, self.seen = real, []

    def set_num_threads(self, n):
        self.seen.append(n)
        if self.real is not None:
            self.real.set_num_threads(n)


@pytest.fixture
def path(monkeypatch):
    """path('blas') / path('pool') forces the BLAS-threaded or the pool path."""
    def force(which):
        monkeypatch.setattr(BT.BLAS, "threaded", lambda key: which == "blas")
    return force


def _threads(n):
    old = P.POOL.threads
    P.POOL.resize(n)
    return old


@pytest.mark.parametrize("which", ["blas", "pool"])
def test_matmul_and_linear_above_the_threshold_on_both_paths(which, path):
    path(which)
    a = rng.standard_normal((256, 384), dtype=np.float32)
    b = rng.standard_normal((384, 320), dtype=np.float32)
    bias = rng.standard_normal(320, dtype=np.float32)
    want = a.astype(np.float64) @ b
    old = _threads(2)
    try:
        out = np.empty((256, 320), np.float32)
        T.matmul(KERNELS["matmul"])(out, a, b)
        np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-3)
        T.linear(COMPOSITES["linear"])(out, a, np.ascontiguousarray(b.T), bias)
        np.testing.assert_allclose(out, want + bias, rtol=1e-4, atol=1e-3)
    finally:
        P.POOL.resize(old)


def test_blas_runs_on_the_pools_thread_count_only_around_the_call(monkeypatch):
    """set_num_threads(n) governs BLAS's threads: n during a chosen call, one after
    (even when the call raises); at one thread BLAS is never raised above one."""
    rec = Recorder()
    blas = BT.BlasThreads([rec])
    for _ in range(BT.REFERENCE_CALLS):
        blas.run_pool("k", lambda: None)
    old = _threads(3)
    try:
        assert blas.threaded(("k"))
        blas.run_threaded("k", lambda: None)
        assert rec.seen == [3, 1]
        with pytest.raises(ZeroDivisionError):
            blas.run_threaded("k", lambda: 1 / 0)
        assert rec.seen[-1] == 1
        P.POOL.resize(1)
        assert not blas.threaded("k")
    finally:
        P.POOL.resize(old)
    # and through the backend's kernels, at the setting the benchmark's '1 thread' rows use
    rec = Recorder(BT.BLAS.libs[0] if BT.BLAS.libs else None)
    monkeypatch.setattr(BT.BLAS, "libs", [rec])
    monkeypatch.setattr(BT.BLAS, "until", 0.0)          # no back-off from earlier calls
    monkeypatch.setattr(BT, "SLOW", math.inf)           # nor from this machine's load
    x = dt.tensor(rng.standard_normal((512, 512), dtype=np.float32))
    old = dt.get_num_threads()
    try:
        dt.set_num_threads(1)
        for _ in range(3):
            (x @ x).sum()
        assert set(rec.seen) <= {1}
        dt.set_num_threads(2)
        for _ in range(BT.REFERENCE_CALLS + 2):
            (x @ x).sum()
        assert 2 in rec.seen and rec.seen[-1] == 1
    finally:
        dt.set_num_threads(old)


def test_a_stalled_threaded_call_sends_that_work_to_the_pool_for_a_back_off(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(BT, "monotonic", lambda: clock[0])
    times = iter([0.0, 0.001] * BT.REFERENCE_CALLS + [   # run_pool: 1 ms on the pool
                  1.0, 1.0015,           # threaded 1.5 ms: no stall
                  2.0, 2.010,            # threaded 10 ms: stalled
                  3.0, 3.010,            # the probe after the back-off stalls again
                  4.0, 4.0005])                      # a good call
    monkeypatch.setattr(BT, "perf_counter", lambda: next(times))
    old = _threads(2)
    try:
        blas = BT.BlasThreads([Recorder()])
        for _ in range(BT.REFERENCE_CALLS):
            assert not blas.threaded("k")      # the pool path is timed first
            blas.run_pool("k", lambda: None)
        assert blas.threaded("k")
        blas.run_threaded("k", lambda: None)
        assert blas.stalls == 0 and blas.threaded("k")
        blas.run_threaded("k", lambda: None)
        assert blas.stalls == 1 and not blas.threaded("k")
        clock[0] += BT.BACKOFF_MIN
        assert blas.threaded("k")
        blas.run_threaded("k", lambda: None)
        assert blas.stalls == 2 and blas.backoff == 4 * BT.BACKOFF_MIN
        clock[0] += BT.BACKOFF_MIN
        assert not blas.threaded("k")          # the back-off doubled
        clock[0] += BT.BACKOFF_MIN
        assert blas.threaded("k")
        blas.run_threaded("k", lambda: None)
        assert blas.stalls == 2 and blas.backoff == 2 * BT.BACKOFF_MIN    # halved
    finally:
        P.POOL.resize(old)
    assert math.isfinite(BT.SLOW) and BT.SLOW > 1


def test_short_stalls_are_paid_from_the_credit_before_a_back_off(monkeypatch):
    """A stall that costs less than the credit left (a hiccup of a few ms on a quiet
    machine) keeps the threaded path; the savings of calls that keep up refill the
    credit; stalls that together cost more than it start a back-off, with a full credit
    after it."""
    clock = [100.0]
    monkeypatch.setattr(BT, "monotonic", lambda: clock[0])
    monkeypatch.setattr(BT, "CREDIT", 0.005)
    durations = [0.001] * BT.REFERENCE_CALLS + [0.004, 0.0005, 0.003, 0.004]
    ticks = []
    for d in durations:
        ticks += [0.0, d]
    times = iter(ticks)
    monkeypatch.setattr(BT, "perf_counter", lambda: next(times))
    old = _threads(2)
    try:
        blas = BT.BlasThreads([Recorder()])
        for _ in range(BT.REFERENCE_CALLS):
            blas.run_pool("k", lambda: None)
        blas.run_threaded("k", lambda: None)          # 4 ms: 3 ms of the 5 ms credit
        assert blas.stalls == 1 and blas.backoffs == 0 and blas.threaded("k")
        assert math.isclose(blas.credit, 0.002)
        blas.run_threaded("k", lambda: None)          # 0.5 ms: saved 0.5 ms
        assert math.isclose(blas.credit, 0.0025)
        blas.run_threaded("k", lambda: None)          # 3 ms: costs 2 ms, 0.5 ms left
        assert blas.stalls == 2 and blas.backoffs == 0 and blas.threaded("k")
        blas.run_threaded("k", lambda: None)          # 4 ms: costs 3 ms, a back-off
        assert blas.stalls == 3 and blas.backoffs == 1 and not blas.threaded("k")
        assert blas.credit == BT.CREDIT
        clock[0] += BT.BACKOFF_MIN
        assert blas.threaded("k")
    finally:
        P.POOL.resize(old)
