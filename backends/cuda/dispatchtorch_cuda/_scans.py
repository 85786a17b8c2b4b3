"""Running scans cupy lacks (its ufunc.accumulate covers only add and multiply).

Both use doubling (Hillis-Steele): ceil(log2 n) passes, each one vectorised op over
the whole array, so they run unchanged on numpy and cupy, in parallel and without a
synchronisation.
"""
from __future__ import annotations


def inclusive_scan(xp, op, x, axis):
    """op-running values of x along axis (op associative: maximum, minimum, ...)."""
    v = xp.moveaxis(x, axis, -1).copy()        # C-contiguous, ours to replace
    n = v.shape[-1]
    k = 1
    while k < n:
        nxt = xp.empty_like(v)
        nxt[..., :k] = v[..., :k]              # the first k are final
        op(v[..., k:], v[..., :-k], out=nxt[..., k:])
        v = nxt
        k *= 2
    return xp.moveaxis(v, -1, axis)


def segmented_scan(xp, op, values, keys):
    """op-running values within each run of equal consecutive keys (1-D arrays)."""
    n = values.shape[0]
    k = 1
    while k < n:
        same_run = keys[k:] == keys[:-k]     # runs are contiguous: equal keys k apart
        nxt = values.copy()
        nxt[k:] = xp.where(same_run, op(values[k:], values[:-k]), values[k:])
        values = nxt
        k *= 2
    return values
