"""A running scan cupy lacks (its ufunc.accumulate covers only add and multiply).

Doubling (Hillis-Steele): ceil(log2 n) passes, each one vectorised op over the whole
array, so it runs unchanged on numpy and cupy, in parallel and without a
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
