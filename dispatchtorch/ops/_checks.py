"""Argument checks that read values on the host, written so a capture can keep them.

    range_check(index, 0, n, lambda bad: IndexError(...), bounds)

runs the check as eager code does (bounds(index) -> (min, max), read on the host;
raise on a bad value). While the calling thread traces (dispatchtorch._capture installs
STATE.recorder for it), the call goes to the recorder instead: the trace keeps the
check in its graph rather than breaking there, and a compiled replay checks again at
the same point. Eager pays one thread-local lookup.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy as np


class _State(threading.local):
    recorder = None        # fn(index, low, high, error, bounds) while this thread traces

    def __init__(self):
        self.rewrap = []   # (error class, wrap) of the enclosing reraise blocks, while tracing


STATE = _State()


def range_check(index, low, high, error, bounds, ignore=None):
    """Raise error(bad) unless every element of integer tensor `index` is in
    [low, high); bounds(index) gives (min, max) as the caller computes them eagerly.
    A bad max is reported before a bad min, as the eager checks do. ignore: a value
    whose elements are exempt (nll_loss's ignore_index); bounds then leaves them out."""
    rec = STATE.recorder
    if rec is not None:
        return rec(index, low, high, error, bounds, ignore)
    lo, hi = bounds(index)
    return verdict(lo, hi, low, high, error)


@contextmanager
def reraise(kind, wrap):
    """An error of class `kind` raised inside becomes wrap(error) (a module naming
    itself in its argument errors); a check recorded inside raises it so wrapped in a
    compiled replay too."""
    tracing = STATE.recorder is not None
    if tracing:
        STATE.rewrap.append((kind, wrap))
    try:
        yield
    except kind as exc:
        raise wrap(exc) from None
    finally:
        if tracing:
            STATE.rewrap.pop()


def host_bounds(values, ignore=None):
    """(min, max) of a host array (what a replay's check computes), leaving out the
    elements equal to `ignore`; (0, -1), which passes every range, when none is left."""
    a = np.asarray(values)
    if ignore is not None:
        a = a[a != ignore]
    if not a.size:
        return 0, -1
    return int(a.min()), int(a.max())


def verdict(lo, hi, low, high, error):
    bad = hi if hi >= high else lo if lo < low else None
    if bad is not None:
        raise error(bad)
