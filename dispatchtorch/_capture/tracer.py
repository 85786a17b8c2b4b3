"""The tracer: records every kernel launch and memory call of one thread into a Graph.

Zero cost when off: nothing on the per-op path checks for tracing. While at least
one thread traces, the kernel tables, the backends' memory methods, composite
decompositions and the host random draw are swapped for wrappers (`install`);
each wrapper looks up the calling thread's tracer (a threading.local) and passes
straight through when it has none. The last tracer to finish swaps the originals
back. Calls made inside a recorded call (a backend's own helpers, the CPU fallback
of a missing prim) are not recorded: `depth` counts the nesting.
"""
from __future__ import annotations

import functools

import os
import sys
import threading

import numpy as np

from .._shape import contiguous_strides
from .._tensor import Tensor
from ..dispatch import DECOMPOSE, OPS
from .checks import record_range_check
from .frames import _PKG, _TLS, current, user_frame  # noqa: F401  (current: _capture's API)
from .graph import (COMPOSITE, CONSTANT, KERNEL, MEMORY, RANDOM, Graph, GraphBreak, Node,
                    Placeholder, Ref, Scalar, Value)

_lock = threading.Lock()
_active = [0]              # threads tracing now; wrappers are installed while > 0
_restore: list = []        # undo actions of install()
_SCALARS = (type(None), bool, int, float, str, complex, np.generic)


def _package_frames():
    """'path:function' of the package's frames below the user's line, innermost first
    (which frontend code asked the host for a value: an argument check or not)."""
    f = sys._getframe(2)
    names = []
    while f is not None and f.f_code.co_filename.startswith(_PKG):
        path = f.f_code.co_filename[len(_PKG):].replace(os.sep, "/")
        if not path.startswith("_capture/"):
            names.append(f"{path}:{f.f_code.co_name}")
        f = f.f_back
    return tuple(names)


class Tracer:
    """Records the calling thread's calls while active (`with Tracer() as tr:`)."""

    def __init__(self):
        self.graph = Graph()
        self.ids = {}              # id(handle) -> value id
        self.handles = {}          # value id -> handle (keeps ids unique while tracing)
        self.fresh = set()         # values made by `empty` and not yet written
        self.depth = 0
        self.phase = "forward"
        self.parents = []          # ids of the composite nodes being decomposed
        self.random_pending = None
        self.tensors = {}          # placeholder name -> the tensor it was taken from
        self._n_const = 0

    # -- activation ---------------------------------------------------------------------
    def __enter__(self):
        from ..dispatch.loader import loaded_backends
        from ..ops import _checks
        self._prev = current()
        _TLS.tracer = self
        self._prev_check = (_checks.STATE.recorder, _checks.STATE.rewrap)
        _checks.STATE.recorder, _checks.STATE.rewrap = record_range_check, []
        with _lock:
            if _active[0] == 0:
                install()
            _active[0] += 1
        self._backends = {rt.name for rt in loaded_backends()}
        from ..autograd.grad_mode import STATE
        self.graph.grad_mode = STATE.enabled
        return self

    def __exit__(self, *exc):
        from ..dispatch.loader import loaded_backends
        new = sorted({rt.name for rt in loaded_backends()} - self._backends)
        if new:     # its kernels and memory calls were not wrapped: the graph misses them
            self.graph.breaks.append(GraphBreak(
                "device", f"backend {', '.join(new)} was first used inside the traced call "
                "(use a tensor on it once before)", "", len(self.graph.nodes)))
        from ..ops import _checks
        _TLS.tracer = self._prev
        _checks.STATE.recorder, _checks.STATE.rewrap = self._prev_check
        with _lock:
            _active[0] -= 1
            if _active[0] == 0:
                uninstall()
        return False

    # -- values -------------------------------------------------------------------------
    def _new(self, h, shape, dtype, strides, offset, device, base=None):
        vid = len(self.graph.values)
        self.graph.values[vid] = Value(vid, tuple(shape), dtype, tuple(strides), offset, device,
                                       base)
        self.ids[id(h)] = vid
        self.handles[vid] = h
        return vid

    def value_of(self, h, device="?"):
        """The value id of a handle; a handle never seen becomes a constant."""
        vid = self.ids.get(id(h))
        if vid is None:
            vid = self._constant(h, device)
        return vid

    def _constant(self, h, device, data=None):
        inside = data is not None           # from_host's: made by the call
        if data is None:
            bk = _backend_of_device(device)
            self.depth += 1
            try:
                data = np.array(bk.to_host(h), copy=True)
            finally:
                self.depth -= 1
        vid = self._new(h, data.shape, _dtype_name(data.dtype), contiguous_strides(data.shape), 0,
                        device)
        splat = data.size > 1 and bool(np.all(data == data.flat[0]))
        name = f"const{self._n_const}"
        self._n_const += 1
        self.graph.placeholders.append(Placeholder(vid, CONSTANT, name, data, h, splat,
                                                   user_frame()[1], inside))
        return vid

    def add_input(self, t, kind, name):
        """Register tensor t (and the storage it views) as a placeholder."""
        if id(t._h) in self.ids:
            return self.ids[id(t._h)]
        device = str(t._place.device)
        base = None
        if t._storage is not None:
            root = t._base
            sshape = root._shape if root is not None else (t._storage.size,)
            base = self.ids.get(id(t._storage))
            if base is None:
                base = self._new(t._storage, sshape, t._dtype.name, contiguous_strides(sshape), 0,
                                 device)
                self.graph.placeholders.append(Placeholder(base, kind, name + ".storage"))
        strides = t._stride if t._stride is not None else contiguous_strides(t._shape)
        vid = self._new(t._h, t._shape, t._dtype.name, strides, t._offset, device, base)
        self.graph.placeholders.append(Placeholder(vid, kind, name))
        self.tensors[name] = t
        return vid

    def _arg(self, x, device):
        if isinstance(x, Tensor):
            return self.value_of(x._h, str(x._place.device))
        if isinstance(x, _SCALARS) or isinstance(x, (tuple, list)):
            return Scalar(x)
        return self.value_of(x, device)

    # -- recording ----------------------------------------------------------------------
    def node(self, op, kind, inputs, outputs, params):
        inplace = False
        for o in outputs:
            if o in self.fresh:
                self.fresh.discard(o)
            elif op != "empty" and op != "as_strided":
                inplace = True
        n = Node(len(self.graph.nodes), op, kind, tuple(inputs), tuple(outputs), params,
                 self.phase, self.parents[-1] if self.parents else None, user_frame()[1], inplace)
        self.graph.nodes.append(n)
        return n

    def graph_break(self, reason, value=None, into="breaks"):
        op, source = user_frame()
        getattr(self.graph, into).append(GraphBreak(op or "?", reason, source,
                                                    len(self.graph.nodes), value,
                                                    _package_frames()))


# -- the wrappers -------------------------------------------------------------------------

# fn(sizes) -> what a backend receives: compile(dynamic=True) sets it to make its symbolic
# sizes plain ints (the graph records the symbolic ones; a backend's own arithmetic on
# sizes is no relation of the program's)
LOWER = [None]


def _low(x):
    f = LOWER[0]
    return x if f is None else f(x)


def _active_tracer():
    tr = getattr(_TLS, "tracer", None)
    if tr is None or tr.depth:
        return None
    return tr


def _kernel_wrapper(name, fn, device_type):
    op = OPS.get(name)
    n_out = op.n_out if op is not None else 1
    reads_out = name.endswith("_")          # scatter_: updates its output in place

    def traced(*handles, **params):
        tr = _active_tracer()
        if tr is None:
            return fn(*handles, **_low(params)) if LOWER[0] else fn(*handles, **params)
        if any(type(h) is list or type(h) is tuple for h in handles):
            # a multi-tensor kernel (an optimizer's fused step): lists are no graph values
            tr.graph_break(f"{name} takes lists of tensors (a multi-tensor kernel, as an "
                           f"optimizer's fused step): not captured")
            tr.depth += 1
            try:
                return fn(*handles, **params)
            finally:
                tr.depth -= 1
        dev = _device_of(handles, device_type)
        outs = [tr.value_of(h, dev) for h in handles[:n_out]]
        ins = [tr._arg(h, dev) for h in (handles if reads_out else handles[n_out:])]
        kp = {k: (Ref(tr.value_of(v, dev)) if not isinstance(v, _SCALARS + (tuple, list)) else v)
              for k, v in params.items()}
        tr.depth += 1
        try:
            r = fn(*handles, **_low(params))
        finally:
            tr.depth -= 1
        tr.node(name, KERNEL, ins, outs, kp)
        return r
    traced._dt_traced = fn
    return traced


def _device_of(handles, device_type):
    if device_type == "cpu":
        return "cpu"
    tr = current()
    for h in handles:
        vid = tr.ids.get(id(h))
        if vid is not None:
            return tr.graph.values[vid].device
    return f"{device_type}:0"


def _memory_wrappers(rt):
    bk = rt.backend
    name = rt.name
    orig = {m: getattr(bk, m) for m in ("empty", "from_host", "to_host", "as_strided", "copy_",
                                        "fill_")}

    def dev(index):
        return name if name in ("cpu", "meta") else f"{name}:{index}"

    def empty(shape, dtype, device):
        h = orig["empty"](_low(shape), dtype, device)
        tr = _active_tracer()
        if tr is not None:
            vid = tr._new(h, shape, dtype, contiguous_strides(tuple(shape)), 0, dev(device))
            tr.node("empty", MEMORY, (), (vid,), {"shape": tuple(shape), "dtype": dtype})
            tr.fresh.add(vid)
        return h

    def from_host(array, device, *a, **k):
        h = orig["from_host"](array, device, *a, **k)
        tr = _active_tracer()
        if tr is not None:
            if tr.random_pending:
                tr.graph_break(f"random values drawn on the host ({tr.random_pending}) would be "
                               f"frozen into the graph")
                tr.random_pending = None
            elif k.get("copy", a[0] if a else True) is False:
                # a replay would reuse this call's array (export bakes it, as torch.export)
                tr.graph_break("a tensor shares a numpy array made inside the call "
                               "(from_numpy): its values are the caller's, new at each call, "
                               "and would be frozen into the graph", into="shared_arrays")
            tr._constant(h, dev(device), np.array(array, copy=True))
        return h

    def to_host(handle):
        tr = _active_tracer()
        if tr is not None:
            tr.graph_break("the host needs a tensor's values (a data-dependent op)",
                           tr.ids.get(id(handle)))
        return orig["to_host"](handle)

    def as_strided(storage, shape, strides, offset):
        h = orig["as_strided"](storage, *_low((shape, strides, offset)))
        tr = _active_tracer()
        if tr is not None:
            src = tr.value_of(storage, dev(bk.device_index(storage)) if name != "cpu" else "cpu")
            sv = tr.graph.values[src]
            base = sv.base if sv.base is not None else src
            vid = tr._new(h, shape, sv.dtype, strides, offset, sv.device, base)
            tr.node("as_strided", MEMORY, (src,), (vid,),
                    {"size": tuple(shape), "stride": tuple(strides), "storage_offset": offset})
        return h

    def copy_(dst, src):
        tr = _active_tracer()
        if tr is None:
            return orig["copy_"](dst, src)
        d = "cpu" if name == "cpu" else dev(bk.device_index(dst))
        o, i = tr.value_of(dst, d), tr.value_of(src, d)
        tr.depth += 1
        try:
            orig["copy_"](dst, src)
        finally:
            tr.depth -= 1
        tr.node("copy_", MEMORY, (i,), (o,), {})

    def fill_(dst, value):
        tr = _active_tracer()
        if tr is None:
            return orig["fill_"](dst, value)
        o = tr.value_of(dst, "cpu" if name == "cpu" else dev(bk.device_index(dst)))
        tr.depth += 1
        try:
            orig["fill_"](dst, value)
        finally:
            tr.depth -= 1
        tr.node("fill_", MEMORY, (), (o,), {"value": value})

    return bk, {"empty": empty, "from_host": from_host, "to_host": to_host,
                "as_strided": as_strided, "copy_": copy_, "fill_": fill_}


def _decomp_wrapper(op, fn):
    def traced(*inputs, **params):
        tr = _active_tracer()
        if tr is None:
            return fn(*inputs, **params)
        dev = next((str(x._place.device) for x in inputs if isinstance(x, Tensor)), "cpu")
        ins = [tr._arg(x, dev) for x in inputs]
        ps = {k: (Ref(tr._arg(v, dev)) if isinstance(v, Tensor) else v) for k, v in params.items()}
        n = tr.node(op.name, COMPOSITE, ins, (), ps)
        tr.parents.append(n.id)
        try:
            r = fn(*inputs, **params)
        finally:
            tr.parents.pop()
        outs = r if isinstance(r, tuple) else (r,)
        n.outputs = tuple(tr._arg(o, dev) for o in outs if isinstance(o, Tensor))
        return r
    traced._dt_traced = fn
    return traced


def _fill_random_wrapper(fn):
    from ..ops import random_sampling

    def traced(self, draw, *args, generator=None):
        tr = _active_tracer()
        if tr is None:
            return fn(self, draw, *args, generator=generator)
        out = tr.value_of(self._h, str(self._place.device))
        tr.depth += 1
        try:
            r = fn(self, draw, *args, generator=generator)
        finally:
            tr.depth -= 1
        redraw = functools.partial(random_sampling.random_values, self._shape,
                                   random_sampling._memory_order(self), draw, args, generator)
        tr.node("random", RANDOM, (), (out,), {"draw": redraw, "dtype": self._dtype.name})
        return r
    traced._dt_traced = fn
    return traced


def _draw_wrapper(fn):
    def traced(generator, draw, *args):
        tr = _active_tracer()
        if tr is not None:
            tr.random_pending = user_frame()[0] or "a random op"
        return fn(generator, draw, *_low(args))
    traced._dt_traced = fn
    return traced


# -- install / uninstall ------------------------------------------------------------------

def install():
    """Swap in the wrappers (called with _lock held by the first tracer)."""
    from .. import _place, _run, _tensor
    from ..dispatch import resolve_everywhere
    from ..ops import random as R, random_sampling

    runtimes = resolve_everywhere()
    for rt in runtimes:
        saved = dict(rt.kernels)
        for k, fn in saved.items():
            rt.kernels[k] = _kernel_wrapper(k, fn, rt.name)
        _restore.append(lambda rt=rt, saved=saved: (rt.kernels.clear(), rt.kernels.update(saved)))
        bk, wrappers = _memory_wrappers(rt)
        had = {m: m in vars(bk) for m in wrappers}
        for m, w in wrappers.items():
            setattr(bk, m, w)
        _restore.append(lambda bk=bk, had=had: [delattr(bk, m) for m, h in had.items() if not h])
    for op in OPS.values():
        for b, fn in list(op.kernels.items()):
            if fn is not DECOMPOSE and not hasattr(fn, "_dt_traced"):
                op.kernels[b] = _kernel_wrapper(op.name, fn, b)
        if op.decomp is not None:
            op.decomp = _decomp_wrapper(op, op.decomp)
    for p in _place._places.values():
        p.empty = p.rt.backend.empty
    scalar, expanded = _run._scalar_cache, _run._expanded_cache
    _run._scalar_cache, _run._expanded_cache = {}, {}     # constants get recorded, not reused
    fill_random, draw = random_sampling._fill_random, R.draw
    random_sampling._fill_random = _fill_random_wrapper(fill_random)
    R.draw = _draw_wrapper(draw)
    engine_backward = _tensor._ENGINE_BACKWARD or _tensor._engine_backward()
    _tensor._ENGINE_BACKWARD = _backward_wrapper(engine_backward)
    for cls, step in _optimizer_steps():
        cls.step = _step_wrapper(step)
        _restore.append(lambda cls=cls, step=step: setattr(cls, "step", step))

    def undo():
        _run._scalar_cache, _run._expanded_cache = scalar, expanded
        random_sampling._fill_random, R.draw = fill_random, draw
        _tensor._ENGINE_BACKWARD = engine_backward
    _restore.append(undo)


def _optimizer_steps():
    """(class, its own step) of Optimizer and every subclass that defines one."""
    from ..optim.optimizer import Optimizer
    out, todo = [], [Optimizer]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if "step" in vars(cls):
            out.append((cls, vars(cls)["step"]))
    return out


OPTIMIZER_STEP = ("optimizer.step() inside the compiled call: its state lives in Python "
                  "(buffers made on the first step, step counts, per-group options) and "
                  "would be frozen into the graph")


def _step_wrapper(step):
    """An optimizer's step while tracing breaks the graph (OPTIMIZER_STEP)."""
    @functools.wraps(step)
    def traced_step(self, *args, **kwargs):
        tr = _active_tracer()
        if tr is not None:
            tr.graph_break(OPTIMIZER_STEP)
        return step(self, *args, **kwargs)
    return traced_step


def _backward_wrapper(backward):
    """Tensor.backward while tracing: a backward pass the traced call runs itself (a
    whole training step compiled) breaks the graph. Its .grad accumulations, and the
    optimizer step after it, write tensors the graph would have to own across calls."""
    def traced_backward(*args, **kwargs):
        tr = _active_tracer()
        if tr is not None and tr.phase == "forward":
            tr.graph_break("backward() inside the compiled call: compile the model or the "
                           "function computing the loss, and call backward() outside it")
        return backward(*args, **kwargs)
    return traced_backward


def uninstall():
    from .. import _place
    while _restore:
        _restore.pop()()
    for op in OPS.values():
        for b, fn in list(op.kernels.items()):
            inner = getattr(fn, "_dt_traced", None)
            if inner is not None:
                op.kernels[b] = inner
        inner = getattr(op.decomp, "_dt_traced", None)
        if inner is not None:
            op.decomp = inner
    for p in _place._places.values():
        p.empty = p.rt.backend.empty


def _backend_of_device(device):
    from .._place import place_of
    return place_of(device if device != "?" else "cpu").bk


def _dtype_name(npdt):
    from .. import _dtype as D
    return D.from_numpy_dtype(npdt).name
