"""compile(dynamic=...): one capture whose sizes are symbols, replayed at new sizes.

A dynamic capture runs the program once, for real, with SymInt sizes on the
inputs' dynamic dims (symbolic.py): the graph it records says how every shape,
stride, offset and size-valued parameter follows from those dims, and its ShapeEnv
holds the guards (the comparisons the program made on them). A later call whose
inputs differ only in those dims (same rank, dtype, device, requires_grad,
contiguity, everything else of the signature) and satisfies the guards gets the
graph instantiated at its sizes (`instantiate`: every expression evaluated; the
prims' shapes follow) and lowered as any captured graph: no second capture.

Which dims: dynamic=True, every dim of a contiguous tensor argument whose size is
not 0 or 1 (those are specialised, as PyTorch's); dynamic=None, the dims that
changed between two captures (automatic dynamic); parameters and buffers never.

Correct first: a size that escaped the int world without being pinned (a numpy or
float computation the SymInt could not see) would leave a plain number where an
expression belongs. `lost_symbols` looks for those (a plain int, a float, a constant's
shape equal to a symbol's value or a product of symbols' values) and pins those
symbols, so such a graph is only replayed at the sizes it was captured at.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import re
import threading
from contextlib import contextmanager
from itertools import combinations

import numpy as np

from .._capture.capture import _input_name, flatten
from .._capture.graph import BUFFER, CONSTANT, PARAMETER, Graph, Scalar
from .._tensor import Tensor
from .symbolic import GuardedRange, ShapeEnv, SymInt, code_of, plain  # noqa: F401 (ShapeEnv: for compiled.py)


def _contiguous(t):
    return t._storage is None and t._stride is None and not t._offset


def input_leaves(args, kwargs):
    """[(placeholder name, tensor)] of the tensor arguments, named as the capture names them."""
    leaves, _, names = flatten((tuple(args), kwargs), "in")
    return [(_input_name(n), t) for t, n in zip(leaves, names)]


def dims_for(mode, leaves, auto):
    """{input name: dims made symbolic}: every dim of size >= 2 of a contiguous argument
    (mode True), or the dims automatic dynamic saw change (`auto`, mode None), and the
    dims torch._dynamo.mark_dynamic / maybe_mark_dynamic marked; never those
    mark_static marked."""
    from .._dynamo.marks import marks_of
    out = {}
    for name, t in leaves:
        if not _contiguous(t):
            continue
        strong, weak, static = marks_of(t)
        want = set(range(len(t._shape)) if mode is True else auto.get(name, ()))
        want = (want | set(strong) | set(weak)) - set(static)
        ds = tuple(sorted(d for d in want if d < len(t._shape) and t._shape[d] >= 2))
        if ds:
            out[name] = ds
    return out


def check_marks(de, leaves):
    """ConstraintViolationError when a dim mark_dynamic marked was pinned by the program."""
    from .._dynamo.marks import marks_of
    from .errors import ConstraintViolationError
    by_name = dict(leaves)
    bad = []
    for i, (name, d) in enumerate(de.env.sources):
        pinned = de.pinned.get(i) or (f"s[{i}] == {de.env.values[i]}"
                                      if f"s[{i}] == {de.env.values[i]}" in de.env.guards else None)
        if pinned and d in marks_of(by_name[name])[0]:
            bad.append(f"{name}.size()[{d}] ({pinned})")
    if bad:
        raise ConstraintViolationError(
            "Constraints violated (" + ", ".join(bad) + ")! The dims marked dynamic with "
            "torch._dynamo.mark_dynamic were specialised by the program; use "
            "maybe_mark_dynamic to allow it")


def masked_key(args, kwargs, leaves, dims, rest):
    """The signature with the dynamic dims' sizes left out (what a dynamic entry matches)."""
    key = [_struct(args), _struct(kwargs), rest]
    for name, t in leaves:
        ds = dims.get(name)
        shape = t._shape if not ds else tuple("*" if d in ds else n for d, n in enumerate(t._shape))
        key.append((shape, t._dtype, t._place, t._rg, t._stride, t._offset, t._storage is None))
    return tuple(key)


def _struct(x):
    if isinstance(x, Tensor):
        return "T"
    if isinstance(x, (int, float, bool, str, type(None))):
        return (type(x), x)
    if isinstance(x, (tuple, list)):
        return (type(x), tuple(_struct(v) for v in x))
    if isinstance(x, dict):
        return (dict, tuple((k, _struct(v)) for k, v in x.items()))
    return ("id", id(x))


def sizes_of(leaves, sources):
    by_name = dict(leaves)
    return [by_name[name]._shape[d] for name, d in sources]


# A dynamic capture swaps process-wide names (torch.arange, builtins.range, the scalar
# handle, the tracer's lowering) for the length of the capture; two threads capturing at
# once would restore each other's swaps in the wrong order and leave one behind. Calls
# from other threads into the swapped names see the originals' behaviour (every wrapper
# falls through unless its argument is this capture's SymInt).
_ONE_CAPTURE_AT_A_TIME = threading.RLock()


@contextmanager
def symbolic_inputs(env, leaves, dims):
    """The arguments' dynamic dims as env's symbols while the capture runs (the same
    tensor objects, so autograd and in-place writes are the caller's), restored after."""
    with _ONE_CAPTURE_AT_A_TIME, _symbolic_inputs(env, leaves, dims):
        yield


@contextmanager
def _symbolic_inputs(env, leaves, dims):
    saved = []
    for name, t in leaves:
        ds = dims.get(name)
        if not ds or any(t is s for s, _ in saved):
            continue
        saved.append((t, t._shape))
        t._shape = tuple(env.symbol(n, (name, d)) if d in ds else n for d, n in enumerate(t._shape))
    from .. import _run
    from ..ops import pointwise
    orig = _run.scalar_handle

    def scalar_handle(value, dt, place):      # a size made a tensor scalar (x / n): keep its code
        if type(value) is not SymInt or value.env is not env:
            return orig(value, dt, place)
        # its own handle (not the cache's, which a plain number equal to it may share)
        h = place.bk.from_host(np.asarray(int.__int__(value)).astype(dt.np).reshape(()),
                               place.index)
        from .._capture.tracer import current
        tr = current()
        if tr is not None and id(h) in tr.ids:
            env.const_codes[tr.ids[id(h)]] = value.code
        return h
    from .._capture import tracer
    from .._root import ROOT
    from .. import ops
    from ..ops import creation
    orig_arange = creation.arange
    arange = functools.wraps(orig_arange)(functools.partial(_arange, orig_arange, env))
    _run.scalar_handle = pointwise.scalar_handle = scalar_handle
    for ns in (*ROOT, ops, creation):
        ns.arange = arange
    lower, tracer.LOWER[0] = tracer.LOWER[0], plain
    import builtins
    real_range, builtins.range = builtins.range, GuardedRange
    try:
        with env:
            yield
    finally:
        builtins.range = real_range
        tracer.LOWER[0] = lower
        _run.scalar_handle = pointwise.scalar_handle = orig
        for ns in (*ROOT, ops, creation):
            ns.arange = orig_arange
        for t, shape in saved:
            t._shape = shape


def _arange(orig, env, start=0, end=None, step=1, **kw):
    """torch.arange over symbolic integer bounds (pos = arange(T)): its values are host
    data, so the constant it makes is remade at each size (env.const_codes) and its
    length is symbolic."""
    if end is None:
        start, end = 0, start
    bounds = (start, end, step)
    mine = [type(v) is SymInt and v.env is env for v in bounds]
    if not any(mine) or not all(isinstance(v, int) for v in bounds):
        return orig(start, end, step, **kw)
    t = orig(*plain(bounds), **kw)
    from .._capture.tracer import current
    tr = current()
    vid = tr.ids.get(id(t._h)) if tr is not None else None
    if vid is None or int.__int__(step) <= 0:
        for v, m in zip(bounds, mine):
            if m:
                env.specialise(v)
        return t
    sc, ec, stc = (code_of(v, env) for v in bounds)
    size = SymInt(t._shape[0], f"(-((({sc})-({ec}))//({stc})))", env)
    dt = t._dtype

    def remake(ev):
        return orig(ev(sc), ev(ec), ev(stc), dtype=dt).numpy()
    env.const_codes[vid] = remake
    t._shape = (size,)
    tr.graph.values[vid].shape = (size,)
    return t


def concretize(out):
    """The capture's results with plain-int shapes (the caller's tensors stay as eager's)."""
    for t in flatten(out)[0]:
        t._shape = plain(t._shape)
        if t._stride is not None:
            t._stride = plain(t._stride)
        t._offset = plain(t._offset)


# -- the graph at new sizes ---------------------------------------------------------------

def _subst(x, ev):
    t = type(x)
    if t is SymInt:
        return ev(x.code)
    if t is tuple:
        return tuple(_subst(v, ev) for v in x)
    if t is list:
        return [_subst(v, ev) for v in x]
    if t is dict:
        return {k: _subst(v, ev) for k, v in x.items()}
    if t is Scalar:
        return Scalar(_subst(x.value, ev))
    if t is functools.partial:
        return functools.partial(x.func, *_subst(x.args, ev), **_subst(x.keywords, ev))
    return x


def _has_sym(x):
    t = type(x)
    if t is SymInt:
        return True
    if t in (tuple, list):
        return any(_has_sym(v) for v in x)
    if t is dict:
        return any(_has_sym(v) for v in x.values())
    if t is Scalar:
        return _has_sym(x.value)
    if t is functools.partial:
        return _has_sym(x.args) or _has_sym(x.keywords)
    return False


def instantiate(g, env, s):
    """A copy of symbolic graph g with every expression evaluated at sizes s."""
    memo = {}

    def ev(code):
        v = memo.get(code)
        if v is None:
            v = memo[code] = int(eval(code, {}, {"s": s}))     # noqa: S307 - our own code
        return v
    out = Graph()
    out.values = {k: dataclasses.replace(v, shape=_subst(v.shape, ev), strides=_subst(v.strides, ev),
                                         offset=_subst(v.offset, ev))
                  for k, v in g.values.items()}
    out.placeholders = []
    for p in g.placeholders:
        code = env.const_codes.get(p.value) if p.kind == CONSTANT else None
        if callable(code):                    # an arange over symbolic bounds
            p = dataclasses.replace(p, data=np.asarray(code(ev)), handle=None)
        elif code is not None:
            data = np.asarray(ev(code)).astype(p.data.dtype).reshape(p.data.shape)
            p = dataclasses.replace(p, data=data, handle=None)
        out.placeholders.append(p)
    out.nodes = [dataclasses.replace(n, inputs=_subst(n.inputs, ev), params=_subst(n.params, ev))
                 if _has_sym(n.inputs) or _has_sym(n.params) else n for n in g.nodes]
    out.outputs = list(g.outputs)
    out.output_spec = _subst(g.output_spec, ev)
    out.grad_inputs = list(g.grad_inputs)
    out.breaks, out.shared_arrays, out.grad_mode = g.breaks, g.shared_arrays, g.grad_mode
    out.checks = [dataclasses.replace(c, low=_subst(c.low, ev), high=_subst(c.high, ev))
                  for c in g.checks]
    if hasattr(g, "grad_targets"):
        out.grad_targets = g.grad_targets
    return out


def fresh_constants(graph):
    """Handles for the constants instantiate() gave new values (a size as a scalar)."""
    from .._place import place_of
    for p in graph.placeholders:
        if p.kind == CONSTANT and p.handle is None:
            place = place_of(graph.values[p.value].device)
            p.handle = place.bk.from_host(np.array(p.data, order="C"), place.index)


# -- sizes that escaped ---------------------------------------------------------------------

_NOT_SIZES = frozenset({"dims", "dim", "keepdim", "dtype", "axis", "dim0", "dim1"})


def lost_symbols(g, env):
    """{symbol index: why}: the symbols some plain number of g may have been computed
    from (the first such number found, and where)."""
    vals = env.values
    cands = {}                 # value -> symbols it could come from
    idx = range(len(vals))
    for k in (1, 2, 3):
        for combo in combinations(idx, k):
            p = math.prod(vals[i] for i in combo)
            cands.setdefault(p, set()).update(combo)
    floats = {}        # the floats a size becomes (a mean's 1/n, an attention's 1/sqrt(d));
    for c, syms in cands.items():   # not from 2..4: 0.5, 2.0, 1/sqrt(2) are everyone's constants
        if c >= 5:
            for f in (float(c), 1.0 / c, 1.0 / math.sqrt(c)):
                floats.setdefault(f, set()).update(syms)
    lost = {i: f"a bound tested at the captured size only: {b}" for i, b in _tight_bounds(env)}

    def found(x, syms, where):
        for i in syms:
            lost.setdefault(i, f"a plain {x!r} in {where}")

    def look(x, where):
        t = type(x)
        if t is SymInt or t is bool:
            return
        if t is int:
            found(x, cands.get(x, ()), where)
        elif t is float:
            for f, syms in floats.items():
                if abs(x - f) <= 1e-6 * abs(f):
                    found(x, syms, where)
        elif t in (tuple, list):
            for v in x:
                look(v, where)
        elif t is dict:
            for k, v in x.items():
                if k not in _NOT_SIZES:
                    look(v, f"{where} {k}")
        elif t is Scalar:
            look(x.value, where)
        elif t is functools.partial:       # random_values(shape, memory order, ...)
            look(x.args[:1] if x.func.__name__ == "random_values" else x.args, where)

    if not cands:
        return lost
    static = {p.value for p in g.placeholders if p.kind in (PARAMETER, BUFFER)}
    for v in g.values.values():
        if v.id in static or v.base in static:
            continue
        look((v.shape, v.strides, v.offset), f"%{v.id}'s geometry")
    for n in g.nodes:
        where = f"{n.op} (node {n.id}, {n.source})"
        look([a for a in n.inputs if type(a) is Scalar], where)   # (the others are value ids)
        look(n.params, where)
    for p in g.placeholders:
        if p.kind == CONSTANT and p.value not in env.const_codes and p.data is not None:
            where = f"constant {p.name} ({p.source})"
            look(tuple(int(n) for n in p.data.shape), where + "'s shape")
            if p.data.size and (p.splat or p.data.size == 1) and p.data.dtype.kind in "iuf":
                look(p.data.flat[0].item(), where)
    look(g.output_spec, "the outputs")
    for c in g.checks:
        look((c.low, c.high), f"a check ({c.source})")
    return lost


def _tight_bounds(env):
    """The symbols a bound the program tested holds for at the captured value but not one
    off it (`t < n` for t = n - 1): what indexing the last element with a plain index
    leaves, as `for t in range(n): x[t]` does (Python's range reads a SymInt as a plain
    int, so the loop is unrolled at the captured n without a guard of its own)."""
    lost = []
    vals = env.values
    for cond in env.bounds:
        check = eval(f"lambda s: {cond}")           # noqa: S307 - our own expression
        now = check(vals)
        for i in {int(k) for k in re.findall(r"s\[(\d+)\]", cond)}:
            for d in (-1, 1):
                if vals[i] + d < 2:            # a size the `s >= 2` guard turns away anyway
                    continue
                s = list(vals)
                s[i] += d
                if check(s) != now:
                    lost.append((i, cond))
    return lost


class DynamicEntry:
    """One dynamic capture: its symbolic graph, guards, and an Entry per size met."""

    def __init__(self, graph, env, dims, key, make_entry, limit=16):
        self.graph, self.env, self.dims, self.key = graph, env, dims, key
        self.pinned = lost_symbols(graph, env)     # {symbol: why it is pinned}
        for i in sorted(self.pinned):
            env.guard(f"s[{i}] == {env.values[i]}", True)
        for i in range(len(env.values)):          # PyTorch's 0/1 specialisation
            env.guard(f"s[{i}] >= 2", True)
        self.check = env.checker()
        self.make_entry = make_entry
        self.entries = {}
        self.limit = limit
        self.failed = []          # [(sizes, guards they failed)]: why a capture came again

    def failing(self, s):
        """The guards sizes s fail (what a recompile reports)."""
        return [g for g in self.env.guards if not eval(g, {}, {"s": s})]   # noqa: S307

    def entry_for(self, s):
        """The Entry for sizes s, or None when a guard fails (a new capture is needed)."""
        t = tuple(s)
        e = self.entries.get(t)
        if e is not None:
            return e
        if not self.check(s):
            self.failed.append((t, self.failing(s)))
            return None
        g = instantiate(self.graph, self.env, t)
        fresh_constants(g)
        e = self.make_entry(g)
        if len(self.entries) >= self.limit:
            self.entries.pop(next(iter(self.entries)))
        self.entries[t] = e
        return e

    def describe(self):
        syms = ", ".join(f"s[{i}]={name}.size({d})" for i, (name, d) in enumerate(self.env.sources))
        pins = "".join(f"\npinned s[{i}] = {self.env.values[i]}: {why}"
                       for i, why in sorted(self.pinned.items()))
        return (f"dynamic: {syms}{pins}\nguards: " + "; ".join(self.env.guards)
                + f"\ninstantiated at sizes: {sorted(self.entries)}")
