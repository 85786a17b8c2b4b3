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
from .passes import ELEMENTWISE, _renamed


class _Numbers:
    """Value numbers per storage root, current version."""

    def __init__(self, values, root):
        self.values, self.root = values, root
        self.now = {}                          # root -> current number
        self.src = {}                          # view -> the value it was made of
        self.fresh = 0

    def unique(self):
        self.fresh += 1
        return ("unique", self.fresh)

    def of(self, a):
        if isinstance(a, Scalar):
            return ("s", repr(a.value))
        v = self.values[a]
        if a in self.src:           # (a view of a value cse renamed names the old as base)
            return ("view", self.of(self.src[a]), v.shape, v.strides, v.offset)
        base = self.now.get(self.root(a), ("leaf", self.root(a)))
        return base if v.base is None else ("view", base, v.shape, v.strides, v.offset)

    def write(self, n):
        """The numbers n gives its outputs (unique unless an elementwise prim writes a
        whole buffer); a view records what it was made of."""
        if n.op == "as_strided":
            self.src[n.outputs[0]] = n.inputs[0]
            return
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
    buffer replaced: by nothing, the forward's buffer read in its place, where nothing
    writes the buffer afterwards (the kernels on it may then match the forward's too:
    the caller runs cse again); else by one copy of it."""
    num = _Numbers(values, root)
    for n in forward:
        if n.op != "empty" and (n.outputs or n.op == "as_strided"):
            num.write(n)
    written = {root(o) for n in nodes if n.op not in ("as_strided", "empty") for o in n.outputs}
    final = {}
    for r, vn in num.now.items():
        if vn[0] != "unique" and r not in written and values[r].base is None:
            final.setdefault(vn, r)
    last_write = {}
    for i, n in enumerate(nodes):
        if n.op not in ("as_strided", "empty"):
            for o in n.outputs:
                last_write[root(o)] = i
    out = list(nodes)
    chain, dirty, rename = {}, set(), {}   # fresh backward root -> its writers; read by others
    for i, n in enumerate(out):
        if rename:
            n = out[i] = _renamed(n, lambda v: rename.get(v, v))
        if n.op == "empty":
            chain[n.outputs[0]] = []
            continue
        if n.op == "as_strided":
            num.write(n)
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
            if last_write[r] == i:             # never written again: read the forward's
                out[i] = None
                rename[r] = f
                num.src[r] = f
                dirty.add(r)
            else:
                out[i] = replace(n, op="copy_", kind=MEMORY, inputs=(f,), outputs=(r,), params={},
                                 inplace=True)
                chain[r] = [i]
    return [n for n in out if n is not None]
