"""Intra-op threads for large arrays: numpy's loops release the GIL, so chunks of one
big elementwise op, reduction or matmul run on several cores at once.

Work sharing, not a static split: the caller takes chunks too, from the same counter
as the workers, so when a worker thread is descheduled (a machine shared with other
jobs) the caller simply does more chunks instead of waiting for it. Waiting threads
sleep on a lock; nothing spins (OpenBLAS's and OpenMP's spinning waits are what made
a 2-thread 128x512 @ 512x512 matmul 12x slower than one thread on a loaded 2-core
machine). BLAS runs single-threaded inside this pool; blas_threads.py chooses when
large GEMMs and sums run on BLAS's own threads instead.

Arrays under THRESHOLD elements never reach here: the per-op cost of small tensors
stays that of one numpy call.
"""
from __future__ import annotations

import itertools
import os
import threading

THRESHOLD = 1 << 18          # elements: below this one numpy call is cheaper than threads
CHUNK = 1 << 18              # elements per chunk (1 MiB of float32: few enough Python calls)


class Pool:
    """`threads - 1` daemon workers; `run(n, fn)` calls fn(0..n-1), the caller helping."""

    def __init__(self, threads):
        self.threads = max(1, int(threads))
        self._workers = []
        self._lock = threading.Lock()
        self._job = None
        self._wake = threading.Condition(self._lock)
        self._generation = 0

    def resize(self, threads):
        self.threads = max(1, int(threads))

    def _ensure_workers(self):
        while len(self._workers) < self.threads - 1:
            t = threading.Thread(target=self._work, name=f"dispatchtorch-cpu-{len(self._workers)}",
                                 daemon=True)
            self._workers.append(t)
            t.start()

    def run(self, n, fn):
        if self.threads == 1 or n == 1:
            for i in range(n):
                fn(i)
            return
        job = _Job(n, fn, min(self.threads, n) - 1)
        with self._lock:
            self._ensure_workers()
            self._job = job
            self._generation += 1
            self._wake.notify(job.helpers)
        job.take()
        job.wait()
        with self._lock:
            if self._job is job:
                self._job = None      # free the job's arrays now, not at the next run (_Job)
        if job.error is not None:
            raise job.error

    def _work(self):
        seen = 0
        while True:
            with self._lock:
                while self._generation == seen:
                    self._wake.wait()
                seen = self._generation
                job = self._job
            if job is not None and job.join():
                job.take()
                job.leave()
            job = None                # nor here, while this worker sleeps (_Job)


class _Job:
    """One run's chunks. Its fn's closure holds the op's arrays (a 4M-element add's 16 MB
    output): the pool and its workers drop the job as soon as it is done. Held until the
    next run, the output outlived its tensor, each call's output took fresh pages (glibc
    trimmed the heap between the two), and 2-thread adds page-faulted 150-200 times a call
    (1-2 ms of system time on 4M elements, against none on one thread)."""

    def __init__(self, n, fn, helpers):
        self.n, self.fn, self.helpers = n, fn, helpers
        self.next = itertools.count().__next__     # atomic under the GIL
        self.error = None
        self._lock = threading.Lock()
        self._active = 0
        self._joinable = True
        self._idle = threading.Event()
        self._idle.set()

    def join(self):
        with self._lock:
            if not self._joinable or self._active >= self.helpers:
                return False
            self._active += 1
            self._idle.clear()
            return True

    def leave(self):
        with self._lock:
            self._active -= 1
            if self._active == 0:
                self._idle.set()

    def take(self):
        while True:
            i = self.next()
            if i >= self.n:
                return
            try:
                self.fn(i)
            except BaseException as exc:          # noqa: BLE001 - re-raised by the caller
                self.error = exc

    def wait(self):
        with self._lock:
            self._joinable = False        # a worker that wakes late finds nothing to do
        self._idle.wait()


def default_threads():
    """OMP_NUM_THREADS where set to a positive count (as PyTorch's intra-op pool reads
    it), else the machine's CPUs."""
    try:
        n = int(os.environ.get("OMP_NUM_THREADS", "").split(",")[0])
    except ValueError:
        n = 0
    return n if n > 0 else os.cpu_count() or 1


POOL = Pool(default_threads())


def bounds(length, parts):
    """`parts` contiguous (start, stop) ranges covering range(length)."""
    step, extra = divmod(length, parts)
    out, start = [], 0
    for i in range(parts):
        stop = start + step + (i < extra)
        out.append((start, stop))
        start = stop
    return out


def split_axis(shape, size):
    """The axis to cut a `size`-element array of `shape` along, and into how many
    chunks; None when it is too small or has no axis long enough."""
    if POOL.threads == 1 or size < THRESHOLD:
        return None
    chunks = max(2, size // CHUNK)
    for axis, n in enumerate(shape):
        if n >= 2 * POOL.threads:
            return axis, min(n, chunks)
    return None


def blocks(axis, ranges):
    """Index tuples selecting each range along `axis`."""
    pre = (slice(None),) * axis
    return [pre + (slice(a, b),) for a, b in ranges]
