"""Who threads BLAS-shaped work (large GEMMs and linears): OpenBLAS's own threads while
they keep up, this backend's pool (parallel.py) when they do not. (Full sums as gemv
row sums on these threads were measured and not kept: threaded.py's full sum.)

OpenBLAS's workers spin between calls, so a threaded call starts them at once: on an
idle 2-core machine a 128x512 @ 512x512 float32 matmul took 389-515 us on 2 OpenBLAS
threads against 543-568 us on the pool's single-threaded chunks, and a 4M float32 sum
as gemv row sums 131-174 us against the pool's 231-353 us (whose sleeping workers take
~60-70 us to wake). But OpenBLAS splits work statically and spin-waits for every part:
when another process holds a core its descheduled thread stalls the call for a
scheduler slice, 8-40 ms instead of 0.4 ms. So BLAS rests on one thread (numpy calls
of the user's own, small GEMMs and blas_sums.py's gemvs stay single-threaded and give
the same bits at any thread count), is set to the pool's thread count only around the
calls chosen here, and each such call is timed: one that takes over SLOW times the
pool path's best time for the same shapes is a stall, and stalls are paid from a
credit: the time the threaded calls saved lately against the pool path's best (capped
at CREDIT, full at the start and after a back-off). A stall that costs more than the
credit left (a descheduled BLAS thread: 8-40 ms) moves those calls to the pool path
(whose waits sleep and whose caller takes a late worker's chunks) for a back-off period
that doubles with each stalled probe (up to 32 s) and halves with each call that keeps
up. A hiccup of 1-4 ms on a quiet machine so costs a few calls' savings, not a second
of the slower pool path: judged call by call, such hiccups (3-7 in 2000 calls here)
sent the MLP step to the pool for most of a run. Figures: docs/performance.md, "Who
threads BLAS-shaped work" and "mlpstep".
"""
from __future__ import annotations

import os
from time import monotonic, perf_counter

from . import parallel as P

SLOW = 2.0            # threaded time over SLOW x the pool path's best: a BLAS thread stalled
MIN_EXCESS = 1e-4     # seconds: an overrun below this is noise, never a stall
CREDIT = 5e-3         # seconds: the most a run of stalls may cost before a back-off (under
                      # a scheduler slice; refilled by the threaded calls' savings)
BACKOFF_MIN, BACKOFF_MAX = 1.0, 32.0     # seconds on the pool path after a stalled call
REFERENCE_CALLS = 3   # pool-path calls per key before its best time is trusted (a cold
                      # first call on a busy machine would make the reference lenient)
_MAX_KEYS = 4096


def _controllers():
    """threadpoolctl's controllers of the BLAS libraries numpy uses (not PyTorch's)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return []
    import numpy
    root = os.path.dirname(os.path.dirname(numpy.__file__))
    return [c for c in ThreadpoolController().lib_controllers
            if c.user_api == "blas" and c.filepath.startswith(root) and "torch" not in c.filepath]


class BlasThreads:
    """The BLAS thread count around chosen calls, and the stall detector above."""

    def __init__(self, controllers):
        self.libs = list(controllers)
        self.best_pool = {}         # call key -> best seconds on the pool path
        self.pool_calls = {}        # call key -> pool-path calls timed
        self.until = 0.0            # monotonic time before which the pool path serves
        self.backoff = BACKOFF_MIN
        self.stalls = 0             # stalled threaded calls seen (for tests and reports)
        self.backoffs = 0           # back-offs started (for tests and reports)
        self.credit = CREDIT        # seconds the threaded calls saved lately (above)

    def rest(self):
        """BLAS on one thread between the chosen calls (the backend's setting)."""
        for lib in self.libs:
            lib.set_num_threads(1)

    def threaded(self, key):
        """True when `key`'s call should run on BLAS's own threads now: the pool has
        several threads, the pool path has been timed REFERENCE_CALLS times for these
        shapes (the reference a stall is judged by) and no back-off is running."""
        return (P.POOL.threads > 1 and bool(self.libs)
                and self.pool_calls.get(key, 0) >= REFERENCE_CALLS
                and monotonic() >= self.until)

    def run_threaded(self, key, fn, *args):
        """fn(*args) with BLAS on the pool's thread count, timed against the pool path."""
        n = P.POOL.threads
        libs = self.libs
        for lib in libs:
            lib.set_num_threads(n)
        start = perf_counter()
        try:
            fn(*args)
        finally:
            took = perf_counter() - start
            for lib in libs:
                lib.set_num_threads(1)
        best = self.best_pool.get(key)
        if best is None:
            return
        if took > SLOW * best and took - best > MIN_EXCESS:
            self.stalls += 1
            self.credit -= took - best
            if self.credit < 0:
                self.backoffs += 1
                self.credit = CREDIT
                self.until = monotonic() + self.backoff
                self.backoff = min(2 * self.backoff, BACKOFF_MAX)
            return
        if took < best:
            self.credit = min(CREDIT, self.credit + best - took)
        self.backoff = max(BACKOFF_MIN, self.backoff / 2)       # load that comes and goes

    def run_pool(self, key, fn, *args):
        """fn(*args) on the pool path (single-threaded BLAS chunks), timed: its best
        time per key is the reference of run_threaded."""
        start = perf_counter()
        fn(*args)
        took = perf_counter() - start
        best = self.best_pool.get(key)
        if best is None:
            if len(self.best_pool) < _MAX_KEYS:
                self.best_pool[key] = took
                self.pool_calls[key] = 1
        else:
            self.pool_calls[key] += 1
            if took < best:
                self.best_pool[key] = took

    def call(self, key, threaded, pooled, *args):
        """threaded(*args) on BLAS's threads or pooled(*args) on the pool, as above
        (`key`: the call's shapes and dtype; the thread count is added here)."""
        key = (key, P.POOL.threads)
        if self.threaded(key):
            self.run_threaded(key, threaded, *args)
        else:
            self.run_pool(key, pooled, *args)


BLAS = BlasThreads(_controllers())
