"""A Program: one phase of a captured graph, optimised and lowered to a flat list of
backend calls that run without the frontend.

Lowering: DCE -> CSE -> DCE -> fusion grouping (each region becomes one kernel from
the backend's `fuse_elementwise` hook, or stays as its prims) -> buffer reuse (an
intermediate allocation takes a same-sized buffer whose last use has passed).
A step is (fn, argument slots, result slot); the environment is a list indexed by
value id, with literals in slots past the values.
"""
from __future__ import annotations

import threading

import numpy as np

from .. import _dtype as D
from .._capture.graph import (BUFFER, CHECK, COMPOSITE, CONSTANT, KERNEL, PARAMETER, RANDOM,
                              Node, Ref, Scalar)
from .._place import place_of
from ..backend.fusion import CONST, IN, TMP, FusedOp, FusedRegion
from ..dispatch import OPS
from .._run import kernel_for
from . import passes
from .draws import Draws
from .epilogue import fuse_epilogues
from .hoist import hoist_checks
from .reuse import reuse_forward

_FUSED: dict = {}        # (device, region key, shape) -> kernel or None: generated once


def _unwrap(fn):
    """The kernel itself, without the tracer's recorder or the profiler's timer (a replay
    runs kernels straight: docs/dropin.md, torch.profiler)."""
    fn = getattr(fn, "_dt_traced", fn)
    return getattr(fn, "_dt_profiled", fn)


def _method(bk, name):
    return getattr(type(bk), name).__get__(bk)


class Program:
    """Run with `run(bindings)`: bindings [(value id, handle)] for every value in
    `provided`; returns the handles of `keep`, in order."""

    def __init__(self, graph, phase, keep, provided, options):
        self.graph = graph
        values = graph.values
        root = passes.Roots(values)
        nodes = _prim_nodes_and_checks(graph, phase)
        self.n_eager_kernels = sum(1 for n in nodes if n.kind == KERNEL or n.op in ("copy_", "fill_"))
        keep = list(keep)
        keep_roots = {root(v) for v in keep}
        if options.get("dce", True):
            nodes = passes.dce(nodes, keep, provided, root)
        rename = {}
        if options.get("cse", True):
            prior = graph.prim_nodes("forward") if phase == "backward" else ()
            nodes, rename = passes.cse(nodes, root, set(keep) | keep_roots, prior)
            for _ in range(3 if prior else 0):     # a reused buffer lets more calls match
                again = reuse_forward(prior, nodes, values, root)
                if again == nodes:
                    break
                nodes, rename = passes.cse(again, root, set(keep) | keep_roots, prior)
            nodes = passes.dce(nodes, keep, provided, root)
        nodes = hoist_checks(nodes, provided, root)
        self.epilogues = {}
        if options.get("fusion", True):
            constants = {p.value: p for p in graph.placeholders if p.kind == CONSTANT}
            made = {o: n for n in nodes for o in n.outputs}
            nodes, self.epilogues = fuse_epilogues(
                nodes, values, keep, root, _offer_epilogue,
                lambda v: passes.scalar_literal(v, values, made, constants))
            if self.epilogues:          # (the intermediate's allocation is unused now)
                nodes = passes.dce(nodes, keep, provided, root)
        self.constants = {p.value: p for p in graph.placeholders if p.kind == CONSTANT}
        self.written = {o for n in graph.nodes if n.op not in ("as_strided", "empty")
                        for o in n.outputs}
        self.producer = {o: n for n in nodes for o in n.outputs}
        # (producer names a buffer's last writer: a kernel's out is among its outputs)
        self.allocated = {n.outputs[0] for n in nodes if n.op == "empty"}
        fuse = options.get("fusion", True)
        items = passes.group(nodes, values, self._can_fuse) if fuse else list(nodes)
        self.sources = [text for _, text in self.epilogues.values()]
        self.n_regions = 0
        steps, step_refs = [], []
        self.literals = []
        users = self._users(items, keep)
        for it in items:
            if isinstance(it, passes.Region):
                lowered = self._region(it, users, keep)
                for st, rf in lowered:
                    steps.append(st)
                    step_refs.append(rf)
            else:
                steps.append(self._step(it))
                step_refs.append(passes.refs(it))
        steps, step_refs = _drop_unused(steps, step_refs, keep)
        if options.get("buffer_reuse", True):
            steps = self._reuse(steps, step_refs, keep, provided, values, root)
        self.steps = steps
        self.keep = keep
        self.n_kernels = sum(1 for st in steps if st[3])
        self.n_checks = sum(1 for it in items if not isinstance(it, passes.Region)
                            and it.kind == CHECK)
        self.template = [None] * len(values) + self.literals
        self.provided = provided
        self.written_roots = {root(v) for v in self.written}
        self._run = self._run_fresh = None
        self._busy = threading.Lock()

    # -- fusion ------------------------------------------------------------------------
    def _can_fuse(self, op, dtype, device):
        bk = place_of(device).bk
        return type(bk).can_fuse is not _base_can_fuse and bk.can_fuse(op, dtype)

    def _users(self, items, keep):
        users = {}
        for i, it in enumerate(items):
            ns = (it.pre + it.members) if isinstance(it, passes.Region) else [it]
            for n in ns:
                if n.op == "empty":
                    continue
                for v in passes.refs(n):
                    users.setdefault(v, set()).add((i, id(n)))
        return users

    def _region(self, r, users, keep):
        """Lower a region: its independent nodes, then one fused kernel (or its prims)."""
        out = [(self._step(n), passes.refs(n)) for n in r.pre]
        members = {id(n) for n in r.members}
        keep_set = set(keep)
        index = {}                 # produced value -> op index
        ins, in_index = [], {}
        ops = []
        for n in r.members:
            args = []
            data = [a for a in n.inputs if isinstance(a, int)]
            for a in data:
                if a in index:
                    args.append((TMP, index[a]))
                    continue
                lit = passes.scalar_literal(a, self.graph.values, self.producer, self.constants)
                if lit is not None and not self._written(a):
                    args.append((CONST, lit))
                    continue
                if a not in in_index:
                    in_index[a] = len(ins)
                    ins.append(a)
                args.append((IN, in_index[a]))
            o = n.outputs[0]
            params = ()
            if n.op == "copy_":
                op, in_dt = "cast", self.graph.values[data[0]].dtype
            else:
                op = n.op
                in_dt = self.graph.values[data[1 if op == "where" else 0]].dtype
                if op in passes.REDUCTIONS:
                    params = (("dims", tuple(n.params["dims"])),
                              ("keepdim", bool(n.params["keepdim"])))
            index[o] = len(ops)
            ops.append(FusedOp(op, tuple(args), self.graph.values[o].dtype, in_dt, params))
        # written to memory: what is kept or read outside, and every in-place write into
        # an outside buffer or view (its storage is observable)
        outs = [o for o in index
                if o in keep_set or o in r.reduced or o in r.external
                or any(m not in members for _, m in users.get(o, ()))]
        region = FusedRegion(r.shape, tuple(self.graph.values[v].dtype for v in ins), tuple(ops),
                             tuple(index[o] for o in outs))
        kernel = self._fused_kernel(r.device, region)
        if kernel is None:
            return out + [(self._step(n), passes.refs(n)) for n in r.members]
        self.n_regions += 1
        src = getattr(kernel, "source", None)
        if src:
            self.sources.append(src)
        step = (kernel, tuple(outs) + tuple(ins), -1,
                f"fused elementwise region ({', '.join(o.op for o in ops)})")
        return out + [(step, list(outs) + list(ins))]

    def _written(self, v):
        return v in self.written

    def _fused_kernel(self, device, region):
        key = (device, region.key(), region.shape)
        if key not in _FUSED:
            bk = place_of(device).bk
            try:
                _FUSED[key] = bk.fuse_elementwise(region)
            except NotImplementedError:
                _FUSED[key] = None
        return _FUSED[key]

    # -- steps -------------------------------------------------------------------------
    def _literal(self, value):
        self.literals.append(value)
        return len(self.graph.values) + len(self.literals) - 1

    def _step(self, n):
        """(fn, argument slots, result slot, is a kernel launch)."""
        values = self.graph.values
        if n.kind == CHECK:
            return (_check_step(n.params["check"], place_of(values[n.inputs[0]].device).bk),
                    n.inputs, -1, "")
        v0 = values[n.outputs[0]] if n.outputs else None
        place = place_of(v0.device if v0 is not None else "cpu")
        bk = place.bk
        if n.op == "empty":
            empty, shape, dt, idx = _method(bk, "empty"), n.params["shape"], n.params["dtype"], \
                place.index
            return (lambda: empty(shape, dt, idx), (), n.outputs[0], "")
        if n.op == "as_strided":
            st = _method(bk, "as_strided")
            return (_view_step(st, n.params["size"], n.params["stride"],
                               n.params["storage_offset"]), (n.inputs[0],), n.outputs[0], "")
        if n.op == "copy_":
            return (_method(bk, "copy_"), (n.outputs[0], n.inputs[0]), -1, "copy_")
        if n.op == "fill_":
            fill, value = _method(bk, "fill_"), n.params["value"]
            return (lambda d: fill(d, value), (n.outputs[0],), -1, "fill_")
        if n.kind == RANDOM:
            return (_random_step(bk, place, n.params["draw"], D.BY_NAME[n.params["dtype"]]),
                    (n.outputs[0],), -1, "random")
        k = self.epilogues[n.id][0] if n.id in self.epilogues else \
            _unwrap(kernel_for(OPS[n.op], place))
        # (a kernel updating its output, scatter_, has it among its recorded inputs)
        args = [] if n.op.endswith("_") else list(n.outputs)
        for a in n.inputs:
            args.append(self._literal(a.value) if isinstance(a, Scalar) else a)
        refs = {k2: v.value for k2, v in n.params.items() if isinstance(v, Ref)}
        if refs:
            plain = {k2: v for k2, v in n.params.items() if not isinstance(v, Ref)}
            names = list(refs)
            nargs = len(args)
            args += [refs[k2] for k2 in names]

            def call(*hs, k=k, plain=plain, names=names, nargs=nargs):
                k(*hs[:nargs], **plain, **dict(zip(names, hs[nargs:])))
            return (call, tuple(args), -1, n.op)
        if n.params:
            params = dict(n.params)
            return (lambda *hs: k(*hs, **params), tuple(args), -1, n.op)
        return (k, tuple(args), -1, n.op)

    def _reuse(self, steps, step_refs, keep, provided, values, root):
        """An allocation takes a buffer of the same shape, dtype and device whose
        every use has passed (per storage root; kept and provided roots never)."""
        fixed = {root(v) for v in keep} | {root(v) for v in provided}
        last = {}
        for i, rf in enumerate(step_refs):
            for v in rf:
                last[root(v)] = i
        frees = {}
        for r, i in last.items():
            frees.setdefault(i, []).append(r)
        pool = {}
        out = []
        made = set()          # roots allocated by a step (a view of a value CSE renamed
        for i, st in enumerate(steps):      # still names the first as its root)
            fn, args, res, is_k = st
            if res >= 0 and not args and res not in fixed and values[res].base is None:
                v = values[res]
                key = (v.shape, v.dtype, v.device)
                got = pool.get(key)
                if got:
                    st = (_same, (got.pop(),), res, "")
                made.add(res)
            out.append(st)
            for r in frees.get(i, ()):
                if r in made and r not in fixed and r in self.allocated:
                    v = values[r]
                    pool.setdefault((v.shape, v.dtype, v.device), []).append(r)
        return out

    # -- running -----------------------------------------------------------------------
    def _stable(self):
        """(arena steps, memoised view steps): the intermediate allocations that can be
        made once and kept between calls (nothing outside a run sees them: not kept, not
        provided), and the views whose source is the same handle call after call (an
        arena buffer, a parameter or buffer, an unwritten constant, a view of one)."""
        values, keep = self.graph.values, set(self.keep)
        root = passes.Roots(values)
        fixed = {root(v) for v in keep} | {root(v) for v in self.provided}
        stable = {p.value for p in self.graph.placeholders
                  if p.kind in (PARAMETER, BUFFER) or (p.kind == CONSTANT and p.value not in
                                                       self.written_roots)}
        arena, memo = set(), set()
        for i, (fn, args, res, _) in enumerate(self.steps):
            if res < 0:
                continue
            if not args and values[res].base is None and res not in fixed:
                arena.add(i)
                stable.add(res)
            elif fn is _same and args[0] in stable:
                stable.add(res)
            elif hasattr(fn, "memo") and args[0] in stable and res not in keep:
                memo.add(i)
                stable.add(res)
        return arena, memo

    def _generate(self, reuse):
        """run(bindings) as straight-line Python: one line per step, no per-step loop.
        reuse: intermediates live in buffers made once (the arena) and views of
        unchanging handles are made once; without it (a second thread running the
        same program) every call allocates its own."""
        env = {"template": self.template}
        lines = ["def run(bindings):", "    e = template.copy()",
                 "    for v, h in bindings:", "        e[v] = h"]
        arena, memo = self._stable() if reuse else ((), ())
        start, ahead = self._draws_ahead()
        if ahead:
            env["draws"] = Draws(self.steps[i][0].host for i in ahead)
        ahead = {i: k for k, i in enumerate(ahead)}
        pad = "    "
        self._line_step = {}                  # generated line -> step (errors name it)
        for i, (fn, args, res, _) in enumerate(self.steps):
            if i == start and ahead:
                lines += ["    P = draws.start()", "    try:"]
                pad = "        "
            self._line_step[len(lines) + 1] = i
            if i in arena:
                env[f"A{i}"] = fn()
                lines.append(f"{pad}e[{res}] = A{i}")
                continue
            if fn is _same:
                lines.append(f"{pad}e[{res}] = e[{args[0]}]")
                continue
            env[f"F{i}"] = fn.memo if i in memo else fn
            slots = [f"e[{a}]" for a in args] + ([f"P[{ahead[i]}]"] if i in ahead else [])
            call = f"F{i}({', '.join(slots)})"
            lines.append(f"{pad}e[{res}] = {call}" if res >= 0 else f"{pad}{call}")
        lines.append(f"{pad}return [" + ", ".join(f"e[{v}]" for v in self.keep) + "]")
        if ahead:
            lines += ["    finally:", "        draws.settle(P)"]
        exec(compile("\n".join(lines), "<compiled graph>", "exec"), env)   # noqa: S102
        return env["run"]

    def _draws_ahead(self):
        """(step to start them before, random steps whose host draws are made ahead on a
        worker, draws.py): every draw after the phase's last index check, started once
        that check has passed (a failing check leaves the generator as eager's)."""
        last = max((i for i, st in enumerate(self.steps) if getattr(st[0], "is_check", False)),
                   default=-1)
        return last + 1, [i for i, st in enumerate(self.steps)
                          if i > last and hasattr(st[0], "host")]

    def run(self, bindings):
        if self._busy.acquire(False):       # the usual case: no other thread runs it now
            try:
                run = self._run
                if run is None:
                    run = self._run = self._generate(True)
                return self._call(run, bindings)
            finally:
                self._busy.release()
        run = self._run_fresh
        if run is None:
            run = self._run_fresh = self._generate(False)
        return self._call(run, bindings)

    def _call(self, run, bindings):
        try:
            return run(bindings)
        except _CheckFailed as exc:
            raise exc.error from None         # the argument check's own error, as eager's
        except Exception as exc:
            # as the eager executor reports a failing kernel: op, backend, dtypes, cause
            tb, line = exc.__traceback__, None
            while tb is not None:
                if tb.tb_frame.f_code.co_filename == "<compiled graph>":
                    line = tb.tb_lineno
                tb = tb.tb_next
            if line not in self._line_step:
                raise
            fn, args, _, _ = self.steps[self._line_step[line]]
            raise self._error(fn, args, exc) from exc

    def _error(self, fn, args, exc):
        from .. import _dtype as D
        from ..dispatch import kernel_error
        for st in self.steps:
            if st[0] is fn and st[1] is args:
                name = st[3] or "a memory call"
                break
        else:
            name = "?"
        values = self.graph.values
        vs = [values[a] for a in args if a < len(values)]
        dts = tuple(dict.fromkeys(D.BY_NAME[v.dtype] for v in vs))
        where = vs[0].device.partition(":")[0] if vs else "?"
        return kernel_error(f"{name} (in a compiled graph)", where, dts, exc)

    def allocations(self):
        """(buffers made once and kept between calls, buffers allocated per call)."""
        arena, _ = self._stable()
        n = sum(1 for fn, args, res, _ in self.steps if res >= 0 and not args)
        return len(arena), n - len(arena)

    def describe(self):
        kept, fresh = self.allocations()
        checks = f", {self.n_checks} index checks" if self.n_checks else ""
        epi = f", {len(self.epilogues)} fused epilogues" if self.epilogues else ""
        return (f"{self.n_eager_kernels} kernel launches eager -> {self.n_kernels} compiled "
                f"({self.n_regions} fused regions{epi}{checks}); {fresh} buffers allocated per "
                f"call, {kept} kept between calls")


def _same(h):
    return h


def _offer_epilogue(op, epilogue, dtype, device):
    """The backend's fused kernel for `op` followed by `epilogue`, or None."""
    hook = getattr(place_of(device).bk, "fuse_epilogue", None)    # (a duck-typed backend)
    return hook(op, epilogue, dtype) if hook is not None else None


def _prim_nodes_and_checks(graph, phase):
    """graph.prim_nodes(phase) with a CHECK pseudo-node for each of the phase's
    graph.checks, at the point where it ran."""
    checks = [c for c in graph.checks if c.phase == phase]
    if not checks:
        return graph.prim_nodes(phase)
    at = {}
    for k, c in enumerate(checks):
        at.setdefault(c.at_node, []).append(
            Node(-1 - k, "check", CHECK, (c.value,), (), {"check": c}, phase, None, c.source))
    out = []
    for i, n in enumerate(graph.nodes + [None]):
        out.extend(at.get(i, ()))
        if n is not None and n.kind != COMPOSITE and n.phase == phase:
            out.append(n)
    return out


class _CheckFailed(Exception):
    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


def _check_step(c, bk):
    """step(index): read it back (one sync, as the eager check's) and raise its error."""
    from ..ops._checks import host_bounds, verdict
    to_host = _method(bk, "to_host")

    def check(index):
        try:
            verdict(*host_bounds(to_host(index), c.ignore), c.low, c.high, c.error)
        except Exception as exc:
            raise _CheckFailed(exc) from None
    check.is_check = True
    return check


def _view_step(st, size, stride, off):
    """view(storage) -> st(storage, size, stride, off); view.memo makes it once per
    source handle (kept with the source: identity cannot be reused while held)."""
    def view(s):
        return st(s, size, stride, off)
    cell = [(None, None)]

    def memo(s):
        m = cell[0]                       # one read, one write: safe under threads
        if m[0] is s:
            return m[1]
        v = st(s, size, stride, off)
        cell[0] = (s, v)
        return v
    view.memo = memo
    return view


def _drop_unused(steps, step_refs, keep):
    """Allocations and views nothing reads (a fused region's intermediates)."""
    while True:
        used = set(keep)
        for st in steps:
            used.update(st[1])
        keepers = [i for i, st in enumerate(steps) if st[3] or st[2] < 0 or st[2] in used]
        if len(keepers) == len(steps):
            return steps, step_refs
        steps = [steps[i] for i in keepers]
        step_refs = [step_refs[i] for i in keepers]


def _random_step(bk, place, draw, dt):
    from ..ops.creation import _cast_host
    copy, from_host, index = _method(bk, "copy_"), _method(bk, "from_host"), place.index

    def host():
        return _cast_host(np.asarray(draw()), dt)

    # the drawn array is fresh and read once: the CPU reference may hold it as it is
    # (from_host's copy=False) instead of copying a 512K-element mask before the copy
    share = place.type == "cpu"

    def step(out, drawn=None):
        """drawn: the values made ahead (draws.py), a future."""
        values = host() if drawn is None else drawn.result()
        copy(out, from_host(values, index, copy=False) if share else from_host(values, index))
    if place.type != "cpu":
        # made ahead where the calling thread only enqueues kernels (OpenCL, CUDA); the
        # CPU's kernels run in the calling thread and its pool, which a drawing thread
        # would compete with for the cores
        step.host = host
    return step


from ..backend.contract import Backend as _Backend  # noqa: E402
_base_can_fuse = _Backend.can_fuse
