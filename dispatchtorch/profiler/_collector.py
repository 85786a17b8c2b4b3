"""Recording ops while a profiler is active: the kernel caches (op.kernels), the
backends' kernel tables and the decompositions get timing wrappers for the session, as
the compile tracer swaps in its recorders (_capture/tracer.py), so no per-op check runs
when nothing profiles. Each kernel launch is an `aten::<op>` range; a composite that
runs its decomposition is a range around its children; record_function adds user
ranges; a backward node's evaluation is an `autograd::engine::evaluate_function: <Node>`
range around the ops its rule runs. Times are host (perf_counter_ns) times: on a backend that enqueues its kernels
(OpenCL, CUDA) a range measures the launch, not the device's work."""
from __future__ import annotations

import os
import sys
import threading
import traceback
from time import perf_counter_ns

from ..dispatch import DECOMPOSE, OPS, resolve_everywhere
from ..dispatch.loader import loaded_backends

ACTIVE = [None]         # the recording Collector, or None
_lock = threading.Lock()
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

OP, USER = "cpu_op", "user_annotation"


class Range:
    """One recorded range; parent / children link the nesting on its thread."""
    __slots__ = ("name", "kind", "start", "end", "tid", "shapes", "stack", "parent",
                 "children")

    def __init__(self, name, kind, start, tid, shapes, stack, parent):
        self.name, self.kind, self.start, self.tid = name, kind, start, tid
        self.shapes, self.stack, self.parent = shapes, stack, parent
        self.end = None
        self.children = []


class Collector:
    """The ranges of one recording (a profile's trace between start and stop)."""

    def __init__(self, record_shapes=False, with_stack=False):
        self.record_shapes, self.with_stack = record_shapes, with_stack
        self.ranges = []
        self._tls = threading.local()
        self.closed = False

    def begin(self, name, kind, shapes=None):
        stack = getattr(self._tls, "stack", None)
        if stack is None:
            stack = self._tls.stack = []
        r = Range(name, kind, 0, threading.get_ident(), shapes,
                  _user_stack() if self.with_stack else None, stack[-1] if stack else None)
        if r.parent is not None:
            r.parent.children.append(r)
        self.ranges.append(r)
        stack.append(r)
        r.start = perf_counter_ns()
        return r

    def end(self, r):
        t = perf_counter_ns()
        if r.end is not None:
            return
        r.end = t
        stack = self._tls.stack
        while stack:               # ranges a raise skipped close with their parent
            top = stack.pop()
            if top is r:
                break
            if top.end is None:
                top.end = t

    def activate(self):
        with _lock:
            if ACTIVE[0] is not None:
                raise RuntimeError("Can't enable the profiler: another profiler is already "
                                   "recording")
            _install()
            ACTIVE[0] = self

    def deactivate(self):
        with _lock:
            if ACTIVE[0] is self:
                ACTIVE[0] = None
                _uninstall()
        self.closed = True
        self.ranges = [r for r in self.ranges if r.end is not None]   # still open: dropped


def _user_stack():
    """The caller's Python frames outside dispatchtorch, innermost first."""
    frames = traceback.extract_stack(sys._getframe(2))
    return [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(frames)
            if not f.filename.startswith(_PKG)]


def _shapes(values):
    return [list(getattr(v, "shape", ())) for v in values]


def _kernel_wrapper(name, fn, n_out):
    label = "aten::" + name

    def profiled(*handles, **params):
        c = ACTIVE[0]
        if c is None:
            return fn(*handles, **params)
        r = c.begin(label, OP, _shapes(handles[n_out:]) if c.record_shapes else None)
        try:
            return fn(*handles, **params)
        finally:
            c.end(r)
    profiled._dt_profiled = fn
    return profiled


def _decomp_wrapper(name, fn):
    label = "aten::" + name

    def profiled(*inputs, **params):
        c = ACTIVE[0]
        if c is None:
            return fn(*inputs, **params)
        r = c.begin(label, OP, _shapes(inputs) if c.record_shapes else None)
        try:
            return fn(*inputs, **params)
        finally:
            c.end(r)
    profiled._dt_profiled = fn
    return profiled


_MEMORY = ("copy_", "fill_")        # the backend memory calls recorded (not empty, views)
_saved_memory: list = []            # (backend, method, its instance attribute or None)


def _memory_wrapper(name, fn):
    label = "aten::" + name

    def profiled(dst, src):
        c = ACTIVE[0]
        if c is None:
            return fn(dst, src)
        r = c.begin(label, OP, [list(getattr(dst, "shape", ())), list(getattr(src, "shape", ()))]
                    if c.record_shapes else None)
        try:
            return fn(dst, src)
        finally:
            c.end(r)
    profiled._dt_profiled = fn
    return profiled


def _engine_wrapper(apply):
    """A backward node's evaluation as PyTorch names it, around the ops its rule runs."""
    def profiled(run, node, outs):
        c = ACTIVE[0]
        if c is None:
            return apply(run, node, outs)
        r = c.begin("autograd::engine::evaluate_function: " + node.name(), OP)
        try:
            return apply(run, node, outs)
        finally:
            c.end(r)
    profiled._dt_profiled = apply
    return profiled


def _n_out(name):
    op = OPS.get(name)
    return op.n_out if op is not None else 1


def _install():
    runtimes = resolve_everywhere()
    from ..autograd import engine
    if not hasattr(engine._Run._apply, "_dt_profiled"):
        engine._Run._apply = _engine_wrapper(engine._Run._apply)
    for rt in runtimes:
        for k, fn in list(rt.kernels.items()):
            if not hasattr(fn, "_dt_profiled"):
                rt.kernels[k] = _kernel_wrapper(k, fn, _n_out(k))
        bk = rt.backend
        for m in _MEMORY:
            _saved_memory.append((bk, m, vars(bk).get(m)))
            setattr(bk, m, _memory_wrapper(m, getattr(bk, m)))
    for op in OPS.values():
        for b, fn in list(op.kernels.items()):
            if fn is not DECOMPOSE and not hasattr(fn, "_dt_profiled"):
                op.kernels[b] = _kernel_wrapper(op.name, fn, op.n_out)
        if op.decomp is not None and not hasattr(op.decomp, "_dt_profiled"):
            op.decomp = _decomp_wrapper(op.name, op.decomp)


def _uninstall():
    from ..autograd import engine
    inner = getattr(engine._Run._apply, "_dt_profiled", None)
    if inner is not None:
        engine._Run._apply = inner
    while _saved_memory:        # the instance attribute before ours (a tracer's), or none
        bk, m, prev = _saved_memory.pop()
        if prev is None:
            vars(bk).pop(m, None)
        else:
            setattr(bk, m, prev)
    for rt in loaded_backends():
        for k, fn in list(rt.kernels.items()):
            inner = getattr(fn, "_dt_profiled", None)
            if inner is not None:
                rt.kernels[k] = inner
    for op in OPS.values():
        for b, fn in list(op.kernels.items()):
            inner = getattr(fn, "_dt_profiled", None)
            if inner is not None:
                op.kernels[b] = inner
        inner = getattr(op.decomp, "_dt_profiled", None)
        if inner is not None:
            op.decomp = inner
