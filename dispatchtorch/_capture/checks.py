"""Argument checks that read values on the host, kept by a capture instead of
breaking the graph there.

    range_check(index, 0, n, lambda bad: IndexError(...), bounds)

runs the check as eager code does (bounds(index) -> (min, max), read on the host;
raise on a bad value). While the calling thread traces, that read is not a graph
break: the trace records a Check (the value, the range, the error) at this point of
the graph, and a compiled replay reads the value back at the same point and raises
the same error before any later step runs. Eager pays one thread-local lookup.
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from .graph import Check
from .tracer import _TLS, user_frame


def range_check(index, low, high, error, bounds):
    """Raise error(bad) unless every element of integer tensor `index` is in
    [low, high); bounds(index) gives (min, max) as the caller computes them eagerly.
    A bad max is reported before a bad min, as the eager checks do."""
    tr = getattr(_TLS, "tracer", None)
    if tr is None or tr.depth:
        lo, hi = bounds(index)
        return verdict(lo, hi, low, high, error)
    c = Check(tr.value_of(index._h, str(index._place.device)), low, high,
              _wrapped(error, tuple(tr.rewrap)), len(tr.graph.nodes), tr.phase,
              user_frame()[1])
    tr.depth += 1                        # the reads below are the check's, not breaks
    try:
        lo, hi = bounds(index)
    finally:
        tr.depth -= 1
    tr.graph.checks.append(c)
    return verdict(lo, hi, low, high, error)


def host_bounds(values):
    """(min, max) of a non-empty host array (what a replay's check computes)."""
    a = np.asarray(values)
    return int(a.min()), int(a.max())


def verdict(lo, hi, low, high, error):
    bad = hi if hi >= high else lo if lo < low else None
    if bad is not None:
        raise error(bad)


@contextmanager
def reraise(kind, wrap):
    """An error of class `kind` raised inside becomes wrap(error) (a module naming
    itself in its argument errors); a check recorded inside raises it so wrapped in a
    compiled replay too."""
    tr = getattr(_TLS, "tracer", None)
    if tr is not None:
        tr.rewrap.append((kind, wrap))
    try:
        yield
    except kind as exc:
        raise wrap(exc) from None
    finally:
        if tr is not None:
            tr.rewrap.pop()


def _wrapped(error, rewrap):
    if not rewrap:
        return error

    def make(bad):
        exc = error(bad)
        for kind, wrap in reversed(rewrap):
            if isinstance(exc, kind):
                exc = wrap(exc)
        return exc
    return make
