"""The backward engine: an iterative topological walk (no recursion, so a chain of
100,000 ops is fine), freeing saved values as it goes unless retain_graph."""
from __future__ import annotations

import threading

from .. import ops as _ops
from .._layout import contiguous_format
from .._output_strides import is_non_overlapping_and_dense
from .._run import wrap
from .._tensor import _SAME, Tensor
from .anomaly_mode import ANOMALY, check_gradients
from .grad_mode import STATE
from .graph import Node


_RUNNING = threading.local()     # .run: the backward pass this thread is running
_NONE = {}                       # go()'s capture maps when nothing is captured (never written)


def queue_callback(fn):
    """Run fn() once the backward pass now running has finished (PyTorch's
    `Variable._execution_engine.queue_callback`): DistributedDataParallel waits for
    its gradient all-reduces there."""
    run = getattr(_RUNNING, "run", None)
    if run is None:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    run.callbacks.append(fn)


def _edge_of(t, what):
    if t._grad_fn is not None:
        return (t._grad_fn, t._out_nr)
    if t._rg:
        return (t, 0)
    raise RuntimeError(f"element {what} of tensors does not require grad and does not have a grad_fn")


def _root_grads(outputs, grads, create_graph):
    if grads is None:
        grads = (None,) * len(outputs)
    elif isinstance(grads, Tensor) or not isinstance(grads, (list, tuple)):
        grads = (grads,)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad_tensors has {len(grads)} entries but there are {len(outputs)} outputs")
    out = []
    for i, (t, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not t._dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs "
                                   f"but got {t._dtype}")
            g = _ones_like(t)
        elif not isinstance(g, Tensor):
            g = _ops.full_like(t, g)
        elif g._shape != t._shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(g._shape)} "
                               f"and output[{i}] has a shape of {tuple(t._shape)}.")
        out.append(g)
    return out


def _ones_like(t):
    place = t._place
    h = place.empty(t._shape, t._dtype.name, place.index)
    place.bk.fill_(h, 1.0)
    return wrap(h, t._shape, t._dtype, place)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(tensors)/d(leaf) into every reachable leaf's .grad."""
    tensors = (tensors,) if isinstance(tensors, Tensor) else tuple(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    edges = [_edge_of(t, i) for i, t in enumerate(tensors)]
    grads = _root_grads(tensors, grad_tensors, create_graph)
    only = None
    if inputs is not None:
        inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
        if not inputs:
            raise RuntimeError("backward: 'inputs' argument to backward() cannot be empty.")
        only = {id(t) for t in inputs}
    _Run(edges, grads, retain_graph, create_graph, accumulate=True, only=only,
         capture=[_edge_of(t, i) for i, t in enumerate(inputs)] if inputs else None).go()


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of outputs with respect to inputs, without touching any .grad."""
    outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                             allow_unused, materialize_grads)
    single = isinstance(inputs, Tensor)
    inputs = (inputs,) if single else tuple(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(f"One of the differentiated Tensors (input {i}) does not require grad")
    edges = [_edge_of(t, i) for i, t in enumerate(outputs)]
    grads = _root_grads(outputs, grad_outputs, create_graph)
    run = _Run(edges, grads, retain_graph, create_graph, accumulate=False, only=None,
               capture=[_edge_of(t, i) for i, t in enumerate(inputs)])
    results = run.go()
    for i, r in enumerate(results):
        if r is None:
            if materialize_grads:
                results[i] = _ops.zeros_like(inputs[i])
            elif not allow_unused:
                raise RuntimeError(f"One of the differentiated Tensors (input {i}) appears to not have "
                                   f"been used in the graph. Set allow_unused=True if this is the "
                                   f"desired behavior.")
    return tuple(results)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """is_grads_batched: one backward pass per row of the grad_outputs' first dimension,
    stacked. PyTorch vmaps the backward; the rows' results are the same."""
    grads = (grad_outputs,) if isinstance(grad_outputs, Tensor) else tuple(grad_outputs or ())
    if len(grads) != len(outputs) or not all(isinstance(g, Tensor) for g in grads):
        raise RuntimeError("grad: is_grads_batched=True needs one batched Tensor in grad_outputs "
                           f"per output ({len(outputs)}), got {len(grads)} entries")
    sizes = {g._shape[0] if g._shape else None for g in grads}
    if len(sizes) != 1 or None in sizes:
        raise RuntimeError("grad: with is_grads_batched=True every grad_output needs the same "
                           f"leading batch dimension, got shapes {[tuple(g._shape) for g in grads]}")
    n = sizes.pop()
    if n == 0:
        raise RuntimeError("grad: is_grads_batched=True with a batch of 0 grad_outputs")
    keep = create_graph if retain_graph is None else retain_graph
    rows = [grad(outputs, inputs, [g[b] for g in grads], retain_graph=True if b < n - 1 else keep,
                 create_graph=create_graph, allow_unused=allow_unused,
                 materialize_grads=materialize_grads) for b in range(n)]
    return tuple(None if col[0] is None else _ops.stack(col) for col in zip(*rows))


class _Run:
    """One backward pass."""

    def __init__(self, edges, grads, retain, create, accumulate, only, capture):
        self.edges, self.grads = edges, grads
        self.retain, self.create = retain, create
        self.accumulate, self.only = accumulate, only
        self.capture = capture
        self.handed = {id(g) for g in grads}   # tensors someone else holds: clone before keeping
        self.results = [None] * len(capture) if capture else None
        self.callbacks = []

    def go(self):
        deps, nodes = self._count()
        needed = self._needed(nodes) if self.capture is not None and not self.accumulate else None
        cap_nodes, cap_leaves = _NONE, _NONE       # shared empty dicts: only read when no capture
        if self.capture:
            cap_nodes, cap_leaves = {}, {}
        for slot, (target, nr) in enumerate(self.capture or ()):
            if isinstance(target, Node):
                cap_nodes.setdefault(id(target), []).append((nr, slot))
            else:
                cap_leaves.setdefault(id(target), []).append(slot)
        buffers, leaf_buf = {}, {}
        ready = []
        for (target, nr), g in zip(self.edges, self.grads):
            self._add(target, nr, g, buffers, leaf_buf)
        for target, _ in self.edges:
            key = id(target)
            if deps.get(key, 0) == 0:
                if isinstance(target, Node):
                    if target not in ready:
                        ready.append(target)
                elif key in leaf_buf:
                    self._finish_leaf(target, leaf_buf.pop(key), cap_leaves)
        prev = STATE.enabled
        STATE.enabled = self.create
        outer, _RUNNING.run = getattr(_RUNNING, "run", None), self
        try:
            while ready:
                node = ready.pop()
                nid = id(node)
                outs = buffers.pop(nid, None)
                if outs is None:
                    outs = [None] * node.n_out
                if node.pre_hooks or node.retains or nid in cap_nodes:
                    self._pre(node, outs, cap_nodes)
                if needed is not None and nid not in needed:
                    continue
                grads_in = self._apply(node, outs)
                edges = node.next
                for i in range(len(edges)):
                    e = edges[i]
                    if e is None:
                        continue
                    target, nr = e
                    key = id(target)
                    is_node = isinstance(target, Node)
                    gi = grads_in[i] if grads_in is not None else None
                    if gi is not None:
                        if is_node:
                            buf = buffers.get(key)
                            if buf is None:
                                buf = buffers[key] = [None] * target.n_out
                            old = buf[nr]
                            buf[nr] = gi if old is None else old + gi
                        else:
                            old = leaf_buf.get(key)
                            leaf_buf[key] = gi if old is None else old + gi
                    left = deps[key] = deps[key] - 1
                    if left == 0:
                        if is_node:
                            ready.append(target)
                        elif key in leaf_buf:
                            self._finish_leaf(target, leaf_buf.pop(key), cap_leaves)
        finally:
            STATE.enabled = prev
            _RUNNING.run = outer
        while self.callbacks:
            self.callbacks.pop(0)()
        return self.results

    def _count(self):
        deps, seen = {}, set()
        stack = []
        for t, _ in self.edges:        # two roots on one node (std_mean's std and mean):
            if isinstance(t, Node) and id(t) not in seen:   # count its edges once
                seen.add(id(t))
                stack.append(t)
        nodes = []
        while stack:
            n = stack.pop()
            nodes.append(n)
            for e in n.next:
                if e is None:
                    continue
                t = e[0]
                key = id(t)
                deps[key] = deps.get(key, 0) + 1
                if isinstance(t, Node) and key not in seen:
                    seen.add(key)
                    stack.append(t)
        return deps, nodes

    def _needed(self, nodes):
        """Nodes on a path to a captured input: the rest need not run."""
        targets = {id(t) for t, _ in self.capture}
        needed = set()
        # nodes are in discovery order; iterate to a fixpoint over the reversed order
        changed = True
        while changed:
            changed = False
            for n in reversed(nodes):
                key = id(n)
                if key in needed:
                    continue
                if key in targets or any(e is not None and (id(e[0]) in needed or id(e[0]) in targets)
                                         for e in n.next):
                    needed.add(key)
                    changed = True
        return needed

    @staticmethod
    def _add(target, nr, g, buffers, leaf_buf):
        if g is None:
            return
        key = id(target)
        if isinstance(target, Node):
            buf = buffers.get(key)
            if buf is None:
                buf = buffers[key] = [None] * target.n_out
            buf[nr] = g if buf[nr] is None else buf[nr] + g
        else:
            old = leaf_buf.get(key)
            leaf_buf[key] = g if old is None else old + g

    def _pre(self, node, outs, cap_nodes):
        if node.pre_hooks:
            for nr, hooks in node.pre_hooks.items():
                for h in list(hooks):
                    if outs[nr] is not None:
                        r = h(outs[nr])
                        if r is not None:
                            outs[nr] = r
        if node.retains:
            for nr, ref in node.retains.items():
                t = ref()
                if t is not None and outs[nr] is not None:
                    self._keep_grad(t, outs[nr])
        for nr, slot in cap_nodes.get(id(node), ()):
            self.results[slot] = outs[nr]
            if outs[nr] is not None:
                self.handed.add(id(outs[nr]))

    def _apply(self, node, outs):
        if node.n_out == 1:
            g = outs[0]
            if g is None:
                return None
        elif all(g is None for g in outs):
            return None
        else:
            g = tuple(outs)
        saved = node.unpack_saved(self.retain)
        grads = node.rule(g, *saved)
        if not isinstance(grads, tuple):
            grads = (grads,)
        if len(grads) != len(node.next):
            raise RuntimeError(f"{node.name()} returned {len(grads)} gradients but the op has "
                               f"{len(node.next)} differentiable inputs")
        fixed = []
        for gi, e, meta in zip(grads, node.next, node.in_meta):
            if gi is not None and e is not None:
                shape, dt = meta
                if gi._shape != shape:
                    gi = _ops.sum_to(gi, shape, node.op_name)
                if gi._dtype is not dt and not (isinstance(e[0], Tensor) and
                                                e[0]._grad_dt is not _SAME):
                    gi = gi.to(dt)      # a leaf with grad_dtype set: _finish_leaf casts
            fixed.append(gi)
        if node.hooks:
            for h in node.hooks:
                r = h(tuple(fixed), tuple(outs))
                if r is not None:
                    fixed = list(r)
        if ANOMALY.enabled and ANOMALY.check_nan:
            check_gradients(node, fixed)
        return fixed

    def _finish_leaf(self, t, g, cap_leaves):
        if not (cap_leaves and id(t) in cap_leaves) and (
                not self.accumulate or (self.only is not None and id(t) not in self.only)):
            return      # as PyTorch: a leaf backward does not reach runs none of its hooks
        if t._grad_dt is not _SAME:
            g = _to_grad_dtype(t, g)
        if t._hooks:
            for h in t._hooks:
                r = h(g)
                if r is not None:
                    g = r
        if cap_leaves:
            for slot in cap_leaves.get(id(t), ()):
                self.results[slot] = g
                self.handed.add(id(g))
        if self.accumulate and (self.only is None or id(t) in self.only):
            self._keep_grad(t, g)

    def _keep_grad(self, t, g):
        if not self.create and (g._grad_fn is not None or g._rg):
            g = g.detach()
        if t._grad is None:
            if (t._stride is not None or g._stride is not None) and not _obeys_layout(g, t):
                g = _laid_out_like(g if self.create else g.detach(), t)
            elif id(g) in self.handed or g._storage is not None:
                g = g.clone() if self.create else g.detach().clone()
            self.handed.add(id(g))
            t._grad = g
        elif self.create:
            t._grad = t._grad + g
        elif not STATE.enabled:
            t._grad.add_(g)
        else:
            STATE.enabled = False
            try:
                t._grad.add_(g)
            finally:
                STATE.enabled = True
        if t._post_acc_hooks:
            self._post_accumulate(t)

    def _post_accumulate(self, t):
        """Tensor.register_post_accumulate_grad_hook's hooks, with grad mode as backward
        has it (create_graph), also for a leaf that backward started from."""
        prev = STATE.enabled
        STATE.enabled = self.create
        try:
            for h in list(t._post_acc_hooks):
                r = h(t)
                if r is None or r is t:         # `p.add_(...)` hands p back: accepted, as there
                    continue
                if not isinstance(r, Tensor):
                    raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")
        finally:
            STATE.enabled = prev


def _to_grad_dtype(t, g):
    """A leaf's gradient in its grad_dtype (None: as it came), as PyTorch's engine casts
    incoming gradients, before the leaf's hooks."""
    want = t._grad_dt
    if want is None or g._dtype is want:
        return g
    if not want.is_grad:
        raise RuntimeError(f"the grad_dtype {want} of a leaf is not a floating point or "
                           f"complex dtype: its gradient cannot be cast to it")
    return g.to(want)


def _obeys_layout(g, t):
    """PyTorch's AccumulateGrad layout contract: a first .grad has a dense leaf's strides
    (over the dims of size > 1), else is C-contiguous."""
    if t._stride is None or not is_non_overlapping_and_dense(t._shape, t._stride):
        return g.is_contiguous()
    return all(n < 2 or a == b for n, a, b in zip(t._shape, g.stride(), t._stride))


def _laid_out_like(g, t):
    """g copied into the layout the contract gives t's .grad (utils::clone_obey_contract)."""
    if t._stride is None or not is_non_overlapping_and_dense(t._shape, t._stride):
        return g.clone(memory_format=contiguous_format)
    return _ops.empty_like(t, dtype=g._dtype, device=g.device).copy_(g)
