"""Index checks moved up to the earliest point they may run at.

A check reads its indices back to the host, which waits for every kernel queued before
it. Embedding's backward checks its indices at the end of the backward phase: the
host then waits for the whole backward before it can return and run the optimizer,
and the device idles while it does. Moved to the start of the phase, the read waits
for little, and nothing after it waits.

A check moves up past a node only when that cannot change what a failing check
leaves behind or what it reads: the node does not write the storage the check reads,
has no effect outside the replay (a write into an argument's, parameter's, buffer's,
constant's or saved value's storage; a random draw, which advances its generator)
and is not another check (checks keep eager's order, so the same error is raised
first). A view the check reads (`as_strided`: no data, no effect) moves with it.
"""
from __future__ import annotations

from .._capture.graph import CHECK, RANDOM


def hoist_checks(nodes, provided, root):
    """nodes with each CHECK moved as early as the rules above allow."""
    out = list(nodes)
    outside = {root(v) for v in provided}
    for i in range(len(out)):
        if out[i].kind != CHECK:
            continue
        moving, needed = [out[i]], {out[i].inputs[0]}
        at = i
        for k in range(i - 1, -1, -1):
            n = out[k]
            if n.kind in (CHECK, RANDOM):
                break
            if n.op == "as_strided" and n.outputs[0] in needed:
                moving.insert(0, n)                    # the view it reads comes along
                needed.add(n.inputs[0])
                at = k
                continue
            if n.op in ("as_strided", "empty"):
                at = k
                continue
            written = {root(o) for o in n.outputs}
            if set(n.outputs) & needed or written & {root(v) for v in needed} \
                    or written & outside:
                break
            at = k
        if at < i:
            ids = {id(n) for n in moving}
            rest = [n for n in out[at:i + 1] if id(n) not in ids]
            out[at:i + 1] = moving + rest
    return out
