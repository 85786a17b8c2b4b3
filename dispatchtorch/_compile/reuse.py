"""The backward reads a value the forward computed through in-place steps.

passes.cse matches a backward kernel call to a forward one only when the result is
written once. GELU computes `(x * c).erf_()` in both phases: an in-place chain, whose
intermediate the forward overwrote. Here every write of a fresh buffer gets a value
number (the op, its params and its inputs' numbers), so the backward's buffer after
`mul` then `erf_` has the number of the forward's final one; the backward's steps that
made it are replaced by one copy of the forward's buffer (saved for it), and the
backward's later in-place steps (`add_(1).mul_(0.5)`) write its own copy. Fused, the
copy is a load: GELU's backward reads the forward's erf instead of computing it.

Only elementwise prims are numbered (deterministic, pure); a buffer's chain is replaced
only when every write to it since its allocation is in the chain and nothing else read
it meanwhile; a forward buffer the backward writes is never read instead.
"""
from __future__ import annotations

from dataclasses import replace

from .._capture.graph import KERNEL, MEMORY, Scalar
from .passes import ELEMENTWISE


class _Numbers:
    """Value numbers per storage root, current version."""

    def __init__(self, values, root):
        self.values, self.root = values, root
        self.now = {}                          # root -> current number
        self.fresh = 0

    def unique(self):
        self.fresh += 1
        return ("unique", self.fresh)

    def of(self, a):
        if isinstance(a, Scalar):
            return ("s", repr(a.value))
        v = self.values[a]
        r = self.root(a)
        base = self.now.get(r, ("leaf", r))
        if v.base is None:
            return base
        return ("view", base, v.shape, v.strides, v.offset)

    def write(self, n):
        """The numbers n gives its outputs (unique unless an elementwise prim writes a
        whole buffer)."""
        for o in n.outputs:
            r = self.root(o)
            if n.kind == KERNEL and n.op in ELEMENTWISE and len(n.outputs) == 1 \
                    and self.values[o].base is None:
                self.now[r] = (n.op, repr(sorted(n.params.items())),
                               tuple(self.of(a) for a in n.inputs))
            else:
                self.now[r] = self.unique()


def reuse_forward(forward, nodes, values, root):
    """nodes (the backward's, after cse) with in-place chains that recompute a forward
    buffer replaced by a copy of it."""
    num = _Numbers(values, root)
    for n in forward:
        if n.op not in ("as_strided", "empty") and n.outputs:
            num.write(n)
    written = {root(o) for n in nodes if n.op not in ("as_strided", "empty") for o in n.outputs}
    final = {}
    for r, vn in num.now.items():
        v = values[r]
        if vn[0] != "unique" and r not in written and v.base is None:
            final.setdefault(vn, r)
    out = list(nodes)
    chain, dirty = {}, set()          # fresh backward root -> its writers; read by others
    for i, n in enumerate(out):
        if n.op == "empty":
            chain[n.outputs[0]] = []
            continue
        if n.op == "as_strided":
            continue
        for a in n.inputs:
            if isinstance(a, int) and root(a) in chain and root(a) not in n.outputs:
                dirty.add(root(a))
        if not n.outputs:
            continue
        num.write(n)
        for o in n.outputs:
            r = root(o)
            if r not in chain or r in dirty:
                continue
            if len(n.outputs) != 1 or values[o].base is not None:
                dirty.add(r)                   # (a step that cannot be dropped)
                continue
            chain[r].append(i)
            f = final.get(num.now[r])
            if f is None or values[f].shape != values[r].shape \
                    or values[f].dtype != values[r].dtype or values[f].strides != values[r].strides:
                continue
            for j in chain[r][:-1]:
                out[j] = None
            out[i] = replace(n, op="copy_", kind=MEMORY, inputs=(f,), outputs=(r,), params={},
                             inplace=True)
            chain[r] = [i]
    return [n for n in out if n is not None]
