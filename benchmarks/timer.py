"""A robust wall-clock timer for callables that take microseconds or seconds.

Each measurement is a batch of `number` back-to-back calls followed by one device
synchronisation, timed with `time.perf_counter`; `number` is chosen once per case
so that a batch lasts at least `min_batch_s` (timer resolution and loop overhead
then vanish). Garbage collection stays on: a library that makes cyclic garbage
pays for it here as it would in a user's program.
"""
from __future__ import annotations

import gc
import statistics
import time
from dataclasses import dataclass, field


@dataclass
class Timing:
    """Seconds per call: the median over repeats and its spread."""

    number: int                         # calls per timed batch
    samples: list = field(default_factory=list)   # seconds per call, one per batch

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def spread(self) -> tuple[float, float]:
        """Interquartile range (min and max when there are fewer than 4 samples)."""
        s = sorted(self.samples)
        if len(s) < 4:
            return s[0], s[-1]
        q = statistics.quantiles(s, n=4, method="inclusive")
        return q[0], q[2]

    def as_dict(self) -> dict:
        lo, hi = self.spread
        return {"median_s": self.median, "q1_s": lo, "q3_s": hi, "min_s": min(self.samples),
                "max_s": max(self.samples), "number": self.number, "repeats": len(self.samples),
                "samples_s": list(self.samples)}


def _noop():
    pass


def time_batch(fn, number, sync=_noop) -> float:
    """Seconds per call of `number` calls of fn followed by one sync()."""
    perf = time.perf_counter
    t0 = perf()
    for _ in range(number):
        fn()
    sync()
    return (perf() - t0) / number


def calibrate(fn, sync=_noop, min_batch_s=0.1, max_number=1_000_000) -> tuple[int, float]:
    """The smallest of 1, 2, 5, 10, 20, 50, ... calls whose batch lasts min_batch_s
    (as timeit.Timer.autorange does), and that batch's expected duration. Judged by the
    fastest per-call time seen, so that one burst of load from another process does
    not leave the batches too short."""
    number = 1
    best = float("inf")
    while True:
        for step in (1, 2, 5):
            n = number * step
            best = min(best, time_batch(fn, n, sync))
            if n * best >= min_batch_s or n >= max_number:
                return n, n * best
        number *= 10


def warm_up(fn, sync=_noop, min_s=0.02, min_calls=1) -> None:
    """Run fn until caches, allocators and lazy compilation have settled. Each call is
    synchronised: an asynchronous device would otherwise queue calls for min_s of
    enqueueing (dozens of 7-second matmuls) and then wait for all of them."""
    t0 = time.perf_counter()
    calls = 0
    while calls < min_calls or time.perf_counter() - t0 < min_s:
        fn()
        sync()
        calls += 1


def collect() -> None:
    """Start each batch with an empty garbage backlog so one batch does not pay for
    the previous one's."""
    gc.collect()
