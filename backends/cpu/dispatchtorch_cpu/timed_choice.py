"""Two ways of doing the same work (the same result, bit for bit), chosen per call
by their recent times: whichever was faster lately runs, the other every EXPLORE-th
call, so that a change of load is noticed. Used where neither way wins on this
2-vCPU VM in every state of its load (the full sum: one thread vs the pool,
threaded.py): a machine whose other jobs hold a core makes the single thread faster,
a quiet one the pool. One call's time is noisy (+-20% here), so a way is judged by
the median of its last KEPT calls; 4M sums, 3 runs each under load: KEPT 5 and
EXPLORE 32 came within 0.02-0.05 of the best fixed way's ratio to PyTorch, KEPT 3 and
EXPLORE 16 within 0.05-0.07.
"""
from __future__ import annotations

from time import perf_counter

EXPLORE = 32          # every EXPLORE-th call of a key runs the way not chosen
KEPT = 5              # recent times kept per way; their median is its estimate
_MAX_KEYS = 1024


class TimedChoice:
    """run(key, first, second, *args): first(*args) or second(*args), timed."""

    def __init__(self):
        self.state = {}          # key -> [calls, first's recent times, second's]

    def pick(self, key):
        """0 for first, 1 for second: each is tried until it has KEPT times, then the
        one with the smaller median, except every EXPLORE-th call."""
        s = self.state.get(key)
        if s is None:
            if len(self.state) >= _MAX_KEYS:
                self.state.clear()
            s = self.state[key] = [0, [], []]
        s[0] += 1
        a, b = s[1], s[2]
        if len(a) < KEPT or len(b) < KEPT:
            return 0 if len(a) <= len(b) else 1
        best = 0 if sorted(a)[KEPT // 2] <= sorted(b)[KEPT // 2] else 1
        return 1 - best if s[0] % EXPLORE == 0 else best

    def record(self, key, way, seconds):
        s = self.state.get(key)
        if s is None:
            return                # cleared meanwhile (another thread's new key)
        times = s[1 + way]
        times.append(seconds)
        if len(times) > KEPT:
            del times[0]

    def run(self, key, first, second, *args):
        way = self.pick(key)
        start = perf_counter()
        (second if way else first)(*args)
        self.record(key, way, perf_counter() - start)
