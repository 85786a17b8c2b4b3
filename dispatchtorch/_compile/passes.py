"""Graph passes over one phase's prim nodes: dead-code removal, common-subexpression
elimination and the grouping of elementwise chains into fused regions.

Values alias through views, so liveness and hazards are tracked per storage root
(Value.base, or the value itself): conservative where views overlap, never wrong.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from .._capture.graph import CHECK, KERNEL, RANDOM, Ref
from ..backend.prims import PRIMS

ELEMENTWISE = frozenset(n for n, p in PRIMS.items() if p.kind == "elementwise") | {"relu"}
REDUCTIONS = frozenset({"sum", "amax", "amin"})


def refs(n):
    """Every value id a node names (inputs, Ref params, outputs)."""
    out = [a for a in n.inputs if isinstance(a, int)]
    out += [v.value for v in n.params.values() if isinstance(v, Ref)]
    out += list(n.outputs)
    return out


def reads(n):
    """The values whose data a node reads (as_strided only takes a handle)."""
    if n.op in ("as_strided", "empty"):
        return []
    r = [a for a in n.inputs if isinstance(a, int)]
    r += [v.value for v in n.params.values() if isinstance(v, Ref)]
    if n.inplace and n.op not in ("copy_", "fill_", "random"):
        r += list(n.outputs)
    return r


class Roots:
    def __init__(self, values):
        self.values = values

    def __call__(self, v):
        b = self.values[v].base
        return v if b is None else b


def dce(nodes, keep, external, root):
    """Drop nodes nothing observable depends on. keep: values that must hold their
    final data; external: values that exist outside (writes into them are effects)."""
    live_roots = {root(v) for v in keep} | {root(v) for v in external}
    needed = set(keep)
    kept = []
    for n in reversed(nodes):
        if n.op in ("as_strided", "empty"):
            live = n.outputs[0] in needed or (n.op == "empty" and n.outputs[0] in live_roots)
        else:
            # a random draw advances its generator: kept even when its values are unused;
            # a check may raise
            live = n.kind in (RANDOM, CHECK) or any(root(o) in live_roots for o in n.outputs)
        if not live:
            continue
        kept.append(n)
        needed.update(refs(n))
        for v in reads(n):
            live_roots.add(root(v))
        for o in n.outputs:
            needed.add(root(o))
    kept.reverse()
    return kept


def cse(nodes, root, keep, prior=()):
    """Reuse the first of two identical kernel calls on unchanged inputs, and the first
    of two identical views. Returns (nodes, rename).

    prior: the nodes that ran before these (the forward, for the backward): a kernel
    call here identical to one of theirs on the same unchanged inputs reads its result
    instead (the backward's recomputation of a forward value: layer_norm's statistics,
    GELU's erf); the caller keeps those results for it. Only kernel results are reused
    across phases: each phase makes its own index checks and views."""
    writes = {}
    for n in (*prior, *nodes):
        if n.op not in ("as_strided", "empty"):
            for o in n.outputs:
                writes[root(o)] = writes.get(root(o), 0) + 1
    version = {}
    seen = {}
    rename = {}
    out = []

    def rn(v):
        return rename.get(v, v)

    for n in prior:
        if n.kind == KERNEL and not n.inplace and all(writes.get(root(o)) == 1 for o in n.outputs):
            seen.setdefault(_call_key(n, version, root), n)
        if n.op not in ("as_strided", "empty"):
            for o in n.outputs:
                version[root(o)] = version.get(root(o), 0) + 1
    for n in nodes:
        n = _renamed(n, rn)
        if n.op == "copy_" and n.inputs[0] == n.outputs[0]:
            continue            # a view copied onto itself (x[i] += y writes x[i] back)
        if n.kind == CHECK:     # the same range check of the same unchanged elements again
            c, v = n.params["check"], n.inputs[0]
            key = ("check", _elements(root.values, v, root), version.get(root(v), 0), c.low,
                   c.high, c.ignore)
            if key in seen:
                continue
            seen[key] = n
            out.append(n)
            continue
        key = None
        if n.op == "as_strided" and n.outputs[0] not in keep:   # (a kept view is bound by id)
            key = ("view", n.inputs[0], n.params["size"], n.params["stride"],
                   n.params["storage_offset"])
        elif n.kind == KERNEL and not n.inplace and all(writes.get(root(o)) == 1 for o in n.outputs) \
                and not any(o in keep for o in n.outputs):
            key = _call_key(n, version, root)
        if key is not None:
            prev = seen.get(key)
            if prev is not None and len(prev.outputs) == len(n.outputs):
                for a, b in zip(n.outputs, prev.outputs):
                    rename[a] = b
                continue
            seen[key] = n
        if n.op not in ("as_strided", "empty"):
            for o in n.outputs:
                version[root(o)] = version.get(root(o), 0) + 1
        out.append(n)
    return out, rename


def _call_key(n, version, root):
    """What makes two kernel calls identical: op, inputs at their versions, params."""
    ins = tuple((a, version.get(root(a), 0)) if isinstance(a, int) else ("s", repr(a.value))
                for a in n.inputs)
    return (n.op, ins, repr(sorted(n.params.items(), key=lambda kv: kv[0])))


def _elements(values, v, root):
    """What identifies the elements a value holds: a contiguous view by its storage,
    offset and size (a reshape of a tensor holds its elements), any other by its id."""
    x = values[v]
    st, acc = [], 1
    for d in reversed(x.shape):
        st.append(acc)
        acc *= d
    if all(a == b or d == 1 for a, b, d in zip(x.strides, reversed(st), x.shape)):
        return (root(v), x.offset, x.numel)
    return v


def _renamed(n, rn):
    ins = tuple(rn(a) if isinstance(a, int) else a for a in n.inputs)
    params = {k: (Ref(rn(v.value)) if isinstance(v, Ref) else v) for k, v in n.params.items()}
    outs = tuple(rn(o) for o in n.outputs)
    if ins == n.inputs and outs == n.outputs and params == n.params:
        return n
    return replace(n, inputs=ins, outputs=outs, params=params)


@dataclass
class Region:
    """A group of elementwise nodes over one shape, run as one kernel; `pre` are the
    independent nodes that ran between them and now run before.

    A member may write in place: into a value the region produced (a new version of
    it: `x = mm(...); x.add_(b); relu(x)`), or into a buffer or view from outside
    (`pad[..., 1:-1].copy_(y)`, BatchNorm's running statistics). Such an outside
    storage is then read and written inside the region only through views that are
    the same or provably disjoint (may_overlap): element i of a view is read and
    written by one lane, so no lane sees another's write."""
    shape: tuple
    device: str
    members: list = field(default_factory=list)
    produced: set = field(default_factory=set)
    pre: list = field(default_factory=list)
    reduced: set = field(default_factory=set)      # outputs of reductions ending a chain
    external: set = field(default_factory=set)     # outside values written in place
    reads: dict = field(default_factory=dict)      # outside storage root -> {value ids read}
    writes: dict = field(default_factory=dict)     # outside storage root -> {value ids written}


def group(nodes, values, can_fuse):
    """[Node | Region] in a valid execution order. can_fuse(op, dtype, device)."""
    root = Roots(values)
    items = []
    cur = None

    def fusible(n):
        if len(n.outputs) != 1:
            return None
        if n.kind == KERNEL and n.op in ELEMENTWISE:
            op, data = n.op, [a for a in n.inputs if isinstance(a, int)]
            if len(data) != len(n.inputs):
                return None
            dt = values[data[1 if op == "where" else 0]].dtype
        elif n.op == "copy_":
            op, data, dt = "cast", [n.inputs[0]], values[n.inputs[0]].dtype
        else:
            return None
        out = values[n.outputs[0]]
        if out.base is not None and not n.inplace:
            return None
        if n.inplace and any(st == 0 and d > 1 for st, d in zip(out.strides, out.shape)):
            return None             # a write through a broadcast view: lanes collide
        if any(values[a].shape != out.shape for a in data) or not can_fuse(op, dt, out.device):
            return None
        return out

    def data_of(n):
        """The values member n reads (an in-place op other than copy_ reads its output)."""
        d = [a for a in n.inputs if isinstance(a, int)]
        return d + list(n.outputs) if n.inplace and n.op != "copy_" else d

    def clash(a, others):
        return any(b != a and may_overlap(values[a], values[b]) for b in others)

    def conflicts(n):
        """Whether member n would reach an outside storage through two values whose
        elements may overlap (lanes could see each other's writes), or read a view of
        a value the region has not written to memory."""
        for a in data_of(n):
            if a not in cur.produced:
                r = root(a)
                if r in cur.produced or clash(a, cur.writes.get(r, ())):
                    return True
        o = n.outputs[0]
        if n.inplace and o not in cur.produced:
            r = root(o)
            if r in cur.produced or clash(o, cur.writes.get(r, ())) \
                    or clash(o, cur.reads.get(r, ())):
                return True
        return False

    def add(n):
        for a in data_of(n):
            if a not in cur.produced:
                cur.reads.setdefault(root(a), set()).add(a)
        o = n.outputs[0]
        if n.inplace and o not in cur.produced:
            cur.external.add(o)
            cur.writes.setdefault(root(o), set()).add(o)
        else:
            cur.produced.add(o)
        cur.members.append(n)

    def flush():
        if cur is not None:
            if len(cur.members) > 1:
                items.append(cur)
            else:
                items.extend(cur.pre)
                items.extend(cur.members)

    def reduction(n):
        """A reduction of a value the open region produced (a chain's epilogue)."""
        if cur is None or n.kind != KERNEL or n.op not in REDUCTIONS or n.inplace:
            return False
        x = n.inputs[0] if n.inputs and isinstance(n.inputs[0], int) else None
        if x is None or x not in cur.produced or values[n.outputs[0]].base is not None:
            return False
        return can_fuse(n.op, values[x].dtype, cur.device)

    def touches(n):
        # (a view of an outside storage the region writes only names it: no data read)
        return any(v in cur.produced or v in cur.reduced
                   or (n.op != "as_strided" and root(v) in cur.writes) for v in refs(n))

    for n in nodes:
        if n.kind == CHECK:           # a barrier: what ran before it in eager runs before it
            flush()
            cur = None
            items.append(n)
            continue
        if reduction(n):
            cur.members.append(n)
            cur.reduced.add(n.outputs[0])
            continue
        out = fusible(n)
        if out is not None and cur is not None and (
                any(a in cur.reduced for a in data_of(n)) or cur.shape != out.shape
                or cur.device != out.device or conflicts(n)):
            flush()
            cur = None
        if out is not None:
            if cur is None:
                cur = Region(out.shape, out.device)
            add(n)
            continue
        if cur is not None:
            # an independent node moves before the region (a random draw too: no
            # member draws, so the order of draws is kept)
            if not touches(n) and (n.op in ("empty", "as_strided") or not n.inplace):
                cur.pre.append(n)
                continue
            flush()
            cur = None
        items.append(n)
    flush()
    return items


def may_overlap(a, b):
    """Whether two views of one storage may share an element (False: provably
    disjoint or the same view). Exact for views of one shape and strides (is the
    offset difference a reachable step?); any other pair may overlap."""
    if (a.shape, a.strides, a.offset) == (b.shape, b.strides, b.offset):
        return False
    if a.shape != b.shape or a.strides != b.strides or 0 in a.shape:
        return True
    dims = sorted(((abs(st), n - 1) for st, n in zip(a.strides, a.shape) if n > 1 and st),
                  reverse=True)
    if len(dims) > 8:
        return True
    reach = [0] * (len(dims) + 1)              # the span the smaller strides cover
    for i in range(len(dims) - 1, -1, -1):
        reach[i] = reach[i + 1] + dims[i][0] * dims[i][1]

    def reachable(rest, i):
        if i == len(dims):
            return rest == 0
        st, top = dims[i]
        r = reach[i + 1]
        lo, hi = max(-top, -((r - rest) // st)), min(top, (rest + r) // st)
        return any(reachable(rest - j * st, i + 1) for j in range(lo, hi + 1))
    return reachable(b.offset - a.offset, 0)


def scalar_literal(v, values, producer, constants):
    """The Python number a value always holds (a 0-d constant, or a broadcast view of
    one), or None."""
    p = constants.get(v)
    if p is None:
        n = producer.get(v)
        if n is None or n.op != "as_strided" or any(n.params["stride"]):
            return None
        p = constants.get(n.inputs[0])
        if p is None:
            return None
    if p.data is None or p.data.size != 1:
        return None
    return p.data.reshape(()).item()

