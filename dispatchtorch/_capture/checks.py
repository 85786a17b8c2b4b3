"""The capture's side of the frontend's host-reading argument checks
(dispatchtorch/ops/_checks.py): while a thread traces, its range checks come here and
are recorded as a Check at their point of the graph instead of a graph break."""
from __future__ import annotations

from ..ops import _checks
from ..ops._checks import verdict
from .graph import Check
from .frames import _TLS, user_frame


def record_range_check(index, low, high, error, bounds, ignore=None):
    """ops._checks.range_check while this thread traces."""
    tr = getattr(_TLS, "tracer", None)
    if tr is None or tr.depth:           # a nested call: the check runs as eager's
        lo, hi = bounds(index)
        return verdict(lo, hi, low, high, error)
    c = Check(tr.value_of(index._h, str(index._place.device)), low, high,
              _wrapped(error, tuple(_checks.STATE.rewrap)), len(tr.graph.nodes), tr.phase,
              user_frame()[1], ignore)
    tr.depth += 1                        # the reads below are the check's, not breaks
    try:
        lo, hi = bounds(index)
    finally:
        tr.depth -= 1
    tr.graph.checks.append(c)
    return verdict(lo, hi, low, high, error)


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
