"""A compiled callable: guards per call signature, one captured and optimised entry
per signature, autograd through one node whose backward is the compiled backward."""
from __future__ import annotations

import os
import weakref
import warnings

from .._capture.capture import _input_name, flatten, module_tensors, trace, unflatten
from .. import _dtype as D
from .._capture.graph import BUFFER, CONSTANT, GRAD_OUTPUT, INPUT, PARAMETER, GraphBreak
from .._place import place_of
from .._run import make_view, storage_of, wrap
from .._shape import contiguous_strides
from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import STATE
from .errors import Unsupported
from .guards import HOOKS, ambient, global_hooks, hooked, module_states, python_reads, state_reader
from .program import Program

_REGISTRY = weakref.WeakSet()  # every live CompiledFunction, for reset()


_ARG_NAMES = [f"args[{i}]" for i in range(32)]
_UNREAD = object()
# the sizes a dynamic capture keeps lowered programs for (each holds its intermediates'
# buffers between calls); an older size is instantiated again when it comes back
_SIZES_KEPT = 16


def _aliasing(roots):
    """Which tensors share memory (their storages' ids): None when none do, else each
    one's first sharer. A graph captured for separate tensors, replayed on one tensor
    passed twice, would read what eager's in-place writes changed (or not) differently."""
    if len(set(roots)) == len(roots):
        return None
    return tuple(roots.index(r) for r in roots)


def _key_of(x):
    if isinstance(x, Tensor):
        return ("T", x._shape, x._dtype, x._place, x._rg, x._stride, x._offset)
    if isinstance(x, (int, float, bool, str, type(None))):
        return (type(x), x)
    if isinstance(x, (tuple, list)):
        return (type(x), tuple(_key_of(v) for v in x))
    if isinstance(x, dict):
        return (dict, tuple((k, _key_of(v)) for k, v in x.items()))
    return ("id", id(x))


class CompiledFunction:
    """What dispatchtorch.compile returns for a function (OptimizedModule wraps one)."""

    def __init__(self, fn, *, module=None, fullgraph=False, backend="inductor", options=None,
                 dynamic=None):
        self.fn = fn
        self.dynamic = dynamic
        self.dynamic_entries = []      # [DynamicEntry]: symbolic captures (dynamic.py)
        self.auto_dims = {}            # dynamic=None: {input name: dims seen changing}
        self.first_shapes = None       # dynamic=None: the first capture's input shapes
        self.n_captures = 0
        self.first_inputs = None       # {input name: (shape, dtype, place, requires_grad)}
        self.recompiles = []           # why each capture after the first came
        self.sized = []                # cache keys a dynamic capture was instantiated for
        self.module = module
        self.fullgraph = fullgraph
        self.fuse = backend not in ("eager", "aot_eager")
        self.options = dict(options or {})
        self.options.setdefault("fusion", self.fuse)
        self.cache = {}
        self.patched_children = []
        self._accessors = None
        self._modules = ()
        self._readers = ()
        self._reads = _UNREAD           # guards.python_reads(fn), taken at the first call
        self.lifted = {}               # {"closed[i]": tensor}: see _capture/capture.py
        _REGISTRY.add(self)

    def _named(self):
        """{name: (tensor, kind)} of the module's parameters and buffers, read through
        accessors found once (a reassigned parameter is seen; call reset() after adding
        modules or parameters), then the tensors requiring grad that a capture found the
        function reading from elsewhere (lifted: their gradients flow as a parameter's)."""
        if self.module is None:
            return {n: (t, PARAMETER) for n, t in self.lifted.items()} if self.lifted else {}
        acc = self._accessors
        if acc is None:
            acc, seen = [], set()
            for name, (t, kind) in module_tensors(self.module).items():
                if id(t) in seen:
                    continue
                seen.add(id(t))
                owner, _, attr = name.rpartition(".")
                m = self.module.get_submodule(owner) if owner else self.module
                store = m._parameters if kind == PARAMETER else m._buffers
                acc.append((name, store, attr, kind))
            self._accessors = acc
            self._modules = list(self.module.modules())
            self._readers = [state_reader(m) for m in self._modules]
        named = {}
        for name, store, attr, kind in acc:
            t = store.get(attr)
            if t is not None:
                named[name] = (t, kind)
        for n, t in self.lifted.items():
            named[n] = (t, PARAMETER)
        return named

    def _python(self):
        """The plain values the function's Python may read (guards.python_reads)."""
        r = self._reads
        if r is _UNREAD:
            r = self._reads = python_reads(self.fn) if self.module is None else None
        return r() if r is not None else None

    def _signature(self, args, kwargs, named):
        if not kwargs and not named:
            key = [STATE.enabled, ambient(), self._python()]
            roots = []
            for a in args:
                if type(a) is Tensor:
                    key.append((a._shape, a._dtype, a._place, a._rg, a._stride, a._offset))
                    s = a._storage
                    roots.append(id(a._h if s is None else s))
                else:
                    key.append(_key_of(a))
            key.append(_aliasing(roots))
            return tuple(key)
        return (_key_of(args), _key_of(kwargs)) + self._rest(named, args, kwargs)

    def _rest(self, named, args, kwargs):
        """The signature's part that is not the arguments: grad mode, autocast, the
        submodules' plain attributes (training flags among them), the parameters and
        buffers."""
        if self.module is None:
            train = ()
        else:
            try:
                train = (module_states(self._readers), global_hooks())
            except KeyError:                  # an attribute deleted: read the names again
                self._readers = [state_reader(m) for m in self._modules]
                train = (module_states(self._readers), global_hooks())
        params = tuple((n, id(t), t._shape, t._dtype, t._place, t._rg) for n, (t, _) in named.items())
        leaves = flatten((args, kwargs))[0] + [t for t, _ in named.values()]
        alias = _aliasing([id(storage_of(t)) for t in leaves])
        return (STATE.enabled, ambient(), self._python(), train, params, alias)

    def __call__(self, *args, **kwargs):
        named = self._named()
        key = self._signature(args, kwargs, named)
        entry = self.cache.get(key)
        if entry is None and self.dynamic_entries:
            entry = self._dynamic_hit(args, kwargs, named)
            if entry is not None:
                self.cache[key] = entry
                self.sized.append(key)          # sizes met: the oldest are let go
                if len(self.sized) > _SIZES_KEPT:
                    self.cache.pop(self.sized.pop(0), None)
        if entry is None:
            from .._dynamo import config
            if self.n_captures >= config.cache_size_limit:
                warnings.warn(f"compile: {getattr(self.fn, '__qualname__', self.fn)} was captured "
                              f"for {config.cache_size_limit} signatures (cache_size_limit); running new "
                              f"ones eagerly", RuntimeWarning, stacklevel=2)
                return self.fn(*args, **kwargs)
            lifted = len(self.lifted)
            entry, out = self._capture(args, kwargs, named)
            if len(self.lifted) != lifted:        # the guards include the lifted tensors
                key = self._signature(args, kwargs, self._named())
            self.cache[key] = entry
            return out
        if type(entry) is EagerEntry:
            return self.fn(*args, **kwargs)
        return entry.run(args, kwargs, named)

    def _dynamic_hit(self, args, kwargs, named):
        """The Entry of a dynamic capture matching this call at its sizes, or None."""
        from .dynamic import input_leaves, masked_key, sizes_of
        leaves = input_leaves(args, kwargs)
        rest = self._rest(named, args, kwargs)
        for de in self.dynamic_entries:
            if masked_key(args, kwargs, leaves, de.dims, rest) == de.key:
                e = de.entry_for(sizes_of(leaves, de.env.sources))
                if e is not None:
                    return e
        return None

    def _dynamic_dims(self, args, kwargs):
        """{input name: dims} this capture makes symbolic (dynamic.dims_for)."""
        if self.dynamic is False:
            return None, {}
        from .dynamic import dims_for, input_leaves
        leaves = input_leaves(args, kwargs)
        if self.dynamic is None:           # automatic dynamic: the dims that changed
            shapes = {n: t._shape for n, t in leaves}
            if self.first_shapes is None:
                self.first_shapes = shapes
            for n, shape in shapes.items():
                old = self.first_shapes.get(n)
                if old is not None and len(old) == len(shape) and old != shape:
                    ch = {d for d, (a, b) in enumerate(zip(old, shape)) if a != b}
                    self.auto_dims[n] = tuple(sorted(set(self.auto_dims.get(n, ())) | ch))
        return leaves, dims_for(self.dynamic, leaves, self.auto_dims)

    def _why(self, args, kwargs):
        """Why this call captures again (the first one: None): the guards a dynamic
        capture failed, or the inputs whose rank, dtype, device, requires_grad or
        (specialised) sizes changed."""
        if not self.n_captures:
            return None
        from .dynamic import input_leaves
        for de in self.dynamic_entries:
            if de.failed and de.failed[-1][0] is not None:
                sizes, failed = de.failed[-1]
                de.failed[-1] = (None, failed)
                return f"sizes {list(sizes)} failed guard(s) {'; '.join(failed)}"
        now = {n: (t._shape, t._dtype, t._place, t._rg) for n, t in input_leaves(args, kwargs)}
        first = self.first_inputs or {}
        diffs = [f"{n}: {_describe(first[n])} -> {_describe(v)}" for n, v in now.items()
                 if n in first and first[n] != v]
        return "; ".join(diffs) or "the signature changed (a non-tensor argument, grad mode, " \
            "autocast, the default dtype, a training flag or a parameter)"

    def _capture(self, args, kwargs, named):
        need_grad = STATE.enabled and (
            any(t._rg for t in flatten((args, kwargs))[0]) or any(t._rg for t, _ in named.values()))
        why = self._why(args, kwargs)
        if why is not None:
            self.recompiles.append(why)
            if os.environ.get("DISPATCHTORCH_COMPILE_DEBUG") or \
                    "recompiles" in os.environ.get("TORCH_LOGS", ""):
                print(f"compile: {getattr(self.fn, '__qualname__', self.fn)} captures again: {why}")
        else:
            from .dynamic import input_leaves
            self.first_inputs = {n: (t._shape, t._dtype, t._place, t._rg)
                                 for n, t in input_leaves(args, kwargs)}
        self.n_captures += 1
        leaves, dims = self._dynamic_dims(args, kwargs)
        if dims:
            from .dynamic import (DynamicEntry, ShapeEnv, check_marks, concretize, masked_key,
                                  symbolic_inputs)
            key = masked_key(args, kwargs, leaves, dims, self._rest(named, args, kwargs))
            env = ShapeEnv()
            with symbolic_inputs(env, leaves, dims):
                graph, out = trace(self.fn, args, kwargs, named=named, backward=need_grad,
                                   lift=len(self.lifted))
            concretize(out)
            need_grad = self._after_trace(graph, need_grad)
            if graph.lifted:
                key = masked_key(args, kwargs, leaves, dims,
                                 self._rest(self._named(), args, kwargs))
            if not graph.breaks and not graph.shared_arrays:
                de = DynamicEntry(graph, env, dims, key,
                                  lambda g: Entry(g, self.options, need_grad))
                check_marks(de, leaves)
                entry = de.entry_for(env.values)
                self.dynamic_entries.append(de)
                if os.environ.get("DISPATCHTORCH_COMPILE_DEBUG"):
                    print(de.describe() + "\n" + entry.explain())
                return entry, out
        else:
            graph, out = trace(self.fn, args, kwargs, named=named, backward=need_grad,
                               lift=len(self.lifted))
            need_grad = self._after_trace(graph, need_grad)
        if graph.shared_arrays:         # breaks for a replay (export keeps them as constants)
            graph.breaks = sorted(graph.breaks + graph.shared_arrays, key=lambda b: b.at_node)
        if graph.breaks:
            b = graph.breaks[0]
            if self.fullgraph:
                raise Unsupported(f"compile(fullgraph=True): {b.op} breaks the graph at {b.source}: "
                                  f"{b.reason}")
            self._compile_children()
            return EagerEntry(graph), out
        entry = Entry(graph, self.options, need_grad)
        if os.environ.get("DISPATCHTORCH_COMPILE_DEBUG"):
            print(entry.explain())
        return entry, out

    def _after_trace(self, graph, need_grad):
        """Keep the tensors the trace lifted (bound, and guarded, on every later call:
        they require grad, so the backward is needed); break the graph of a module with
        hooks. Returns need_grad."""
        if self.module is not None and hooked(self._modules):
            graph.breaks.insert(0, GraphBreak("hooks", HOOKS, "", 0))
        if graph.lifted:
            self.lifted.update(graph.lifted)
            return True
        return need_grad

    def _compile_children(self):
        """A module whose forward breaks the graph runs eagerly; its children are
        compiled one by one, so the parts without a break still run compiled."""
        mod = self.module
        if mod is None or self.patched_children:
            return
        for _, child in mod.named_children():
            if "forward" in vars(child) or not list(child.parameters()) and not list(child.children()):
                continue
            cf = CompiledFunction(child.forward, module=child, backend="eager" if not self.fuse
                                  else "inductor", options=self.options, dynamic=self.dynamic)
            child.forward = cf
            self.patched_children.append(child)

    def reset(self):
        self.cache.clear()
        self.dynamic_entries = []
        self.auto_dims, self.first_shapes, self.n_captures = {}, None, 0
        self.first_inputs, self.recompiles, self.sized = None, [], []
        self._accessors = None
        self._reads = _UNREAD
        self.lifted = {}
        for child in self.patched_children:
            vars(child).pop("forward", None)
        self.patched_children = []

    def explain(self):
        """The captured graphs, passes and generated kernels of every signature."""
        parts = [f"{self.n_captures} captures"] + [f"captured again: {r}" for r in self.recompiles]
        for de in self.dynamic_entries:
            parts.append(de.describe())
        for i, e in enumerate(self.cache.values()):
            parts.append(f"=== signature {i}")
            parts.append(e.explain())
        return "\n".join(parts)


def _describe(sig):
    shape, dt, place, rg = sig
    return f"{dt.name}{list(shape)} {place.device}" + (" requires_grad" if rg else "")


class EagerEntry:
    """A signature that broke the graph: it runs eagerly (the graph is kept for explain)."""

    def __init__(self, graph):
        self.graph = graph

    def explain(self):
        b = self.graph.breaks[0]
        return (f"graph break: {b.op} at {b.source}: {b.reason}; runs eagerly\n"
                + self.graph.pretty())


class Entry:
    """One signature's compiled forward (and backward when grads are needed)."""

    def __init__(self, graph, options, need_grad):
        self.graph = graph
        g = graph
        self.by_name = {p.name: p for p in g.placeholders}
        self.inputs = [p for p in g.placeholders if p.kind in (INPUT, PARAMETER, BUFFER)]
        provided = {p.value for p in g.placeholders}
        self.outputs = list(g.outputs)
        out_keep = []
        for v in self.outputs:
            out_keep.append(v)
            b = g.values[v].base
            if b is not None:
                out_keep.append(b)
        self.differentiable = need_grad and bool(g.grad_inputs)
        self.saved = []
        if self.differentiable:
            grad_keep = [v for _, v in g.grad_inputs if v is not None]
            grad_keep += [g.values[v].base for v in grad_keep if g.values[v].base is not None]
            fwd_values = {o for n in g.forward_nodes() for o in n.outputs}
            # the backward may read any forward value: find which after its own passes
            probe = Program(g, "backward", grad_keep, provided | fwd_values, options)
            used = set()
            for st in probe.steps:
                used.update(st[1])
            self.saved = sorted(v for v in used if v in fwd_values and v not in provided)
            self.backward = probe
            self.grad_keep = grad_keep
        self.forward = Program(g, "forward", out_keep + self.saved, provided, options)
        self.n_out = len(self.outputs)
        self.out_keep = out_keep
        self.constants = [p for p in g.placeholders if p.kind == CONSTANT]
        self.order = [p.name for p in self.inputs if not p.name.endswith(".storage")]
        self.function = _function_for(self, self.order) if self.differentiable else None
        # per placeholder: (value id, constant handle | None, tensor name, its storage?)
        written = set()
        for n in g.nodes:
            if n.op not in ("empty", "as_strided"):
                for o in n.outputs:
                    b = g.values[o].base
                    written.add(o if b is None else b)
        self.binders = []
        for p in g.placeholders:
            if p.kind == GRAD_OUTPUT:
                continue
            const = None
            if p.kind == CONSTANT:
                # a constant the call made from host data and writes into starts from its
                # captured values each call; one from before the call (a closure's, a
                # global's tensor) is written where it lives, as eager writes it
                const = _Fresh(p, g.values[p.value].device) if p.value in written and p.inside \
                    else p.handle
            self.binders.append((p.value, const, p.name[:-8] if p.name.endswith(".storage")
                                 else p.name, p.name.endswith(".storage")))
        self.out_names = {p.value: p.name for p in self.inputs}
        self.makers = [self._maker(v) for v in self.outputs]
        self.single = g.output_spec == ("T", 0)

    # -- binding -------------------------------------------------------------------------
    def _tensors(self, args, kwargs, named):
        if not kwargs and all(type(a) is Tensor for a in args):
            ts = {_ARG_NAMES[i] if i < len(_ARG_NAMES) else f"args[{i}]": a
                  for i, a in enumerate(args)}
        else:
            leaves, _, names = flatten((tuple(args), kwargs), "in")
            ts = {_input_name(n): t for t, n in zip(leaves, names)}
        for n, (t, _) in named.items():
            ts.setdefault(n, t)
        return ts

    def _bindings(self, ts):
        b = []
        for vid, const, name, is_storage in self.binders:
            if const is not None:
                b.append((vid, const() if type(const) is _Fresh else const))
            elif is_storage:
                b.append((vid, storage_of(ts[name])))
            else:
                b.append((vid, ts[name]._h))
        return b

    def _maker(self, vid):
        """fn(env_out, tensors by name) -> the output tensor for value vid."""
        name = self.out_names.get(vid)
        if name is not None:
            return lambda env, ts: ts[name]          # an input returned (in place, as is)
        v = self.graph.values[vid]
        place, dt = place_of(v.device), D.BY_NAME[v.dtype]
        if v.base is None:
            shape = v.shape
            return lambda env, ts: wrap(env[vid], shape, dt, place)
        bname = self.out_names.get(v.base)
        bv = self.graph.values[v.base]
        size, stride, off, bshape = v.shape, v.strides, v.offset, bv.shape
        base = v.base

        def view(env, ts):
            b = ts[bname] if bname is not None else wrap(env[base], bshape, dt, place)
            return make_view(b, size, stride, off)
        return view

    def _wrap(self, vid, env_out, ts):
        return self._maker(vid)(env_out, ts)

    # -- running -------------------------------------------------------------------------
    def run(self, args, kwargs, named):
        ts = self._tensors(args, kwargs, named)
        if self.differentiable:
            outs = self.function.apply(*[ts[n] for n in self.order])
            outs = outs if isinstance(outs, tuple) else (outs,)
        else:
            outs = self._forward(ts)[0]
        if self.single:
            return outs[0]
        return unflatten(self.graph.output_spec, list(outs))

    def _forward(self, ts):
        handles = self.forward.run(self._bindings(ts))
        env_out = dict(zip(self.forward.keep, handles))
        outs = tuple(m(env_out, ts) for m in self.makers)
        saved = [env_out[v] for v in self.saved]
        return outs, saved

    def _backward(self, ts, saved, grads):
        g = self.graph
        b = self._bindings(ts)
        b += list(zip(self.saved, saved))
        targets = g.grad_targets
        for i, tv in enumerate(targets):
            p = self.by_name[f"grad[{i}]"]
            gr = grads[self.outputs.index(tv)]
            v = g.values[p.value]
            if gr is None:
                from ..ops import zeros
                gr = zeros(v.shape, dtype=v.dtype, device=v.device)
            elif gr._offset or (gr._stride is not None
                                and tuple(gr._stride) != contiguous_strides(gr._shape)):
                # (a contiguous view at offset 0, reshape's backward of a loss on
                # out.reshape(-1, C), holds the graph's layout: bound as it is)
                from ..ops.memory import clone
                gr = clone(gr)
            b.append((p.value, gr._h))
        handles = self.backward.run(b)
        env_out = dict(zip(self.backward.keep, handles))
        result = {}
        for name, vid in g.grad_inputs:
            result[name] = None if vid is None else self._wrap(vid, env_out, ts)
        return result

    def explain(self):
        lines = [self.graph.pretty(), "forward: " + self.forward.describe()]
        if self.differentiable:
            lines.append("backward: " + self.backward.describe()
                         + f"; {len(self.saved)} values saved for it")
        srcs = self.forward.sources + (self.backward.sources if self.differentiable else [])
        for i, s in enumerate(srcs):
            lines.append(f"--- generated kernel {i}\n{s}")
        return "\n".join(lines)

    def launches(self):
        """(eager kernel launches, compiled kernel launches) per call, forward + backward."""
        e, c = self.forward.n_eager_kernels, self.forward.n_kernels
        if self.differentiable:
            e += self.backward.n_eager_kernels
            c += self.backward.n_kernels
        return e, c


class _Fresh:
    """A constant's captured values as a new handle (for constants the graph writes)."""

    def __init__(self, p, device):
        import numpy as np
        place = place_of(device)
        self.data = np.ascontiguousarray(p.data)
        self.from_host, self.index = place.bk.from_host, place.index

    def __call__(self):
        return self.from_host(self.data, self.index)


def _function_for(entry, order):
    """The autograd Function running the compiled forward as one node."""

    class CompiledGraph(Function):
        @staticmethod
        def forward(ctx, *ts):
            named = dict(zip(order, ts))
            outs, saved = entry._forward(named)
            ctx.named, ctx.saved = named, saved
            return outs if len(outs) != 1 else outs[0]

        @staticmethod
        def backward(ctx, *grads):
            if STATE.enabled:       # the engine enables recording for create_graph=True only
                raise NotImplementedError(
                    "compile: double backward (create_graph=True) through a compiled graph is "
                    "not supported: its backward runs the captured kernels without recording; "
                    "run that part eagerly (torch.compile(..., disable=True))")
            got = entry._backward(ctx.named, ctx.saved, grads)
            return tuple(got.get(n) if t._rg else None for n, t in zip(order, ctx.named.values()))

    return CompiledGraph
