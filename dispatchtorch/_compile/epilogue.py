"""Epilogue fusion: a matmul-like kernel and the elementwise op applied to its result,
as one backend call (`Backend.fuse_epilogue`).

`linear(x, w, b)` then `relu` of its result (nn.Linear + nn.ReLU, every MLP layer):
eager writes the GEMM's output, reads it back for the ReLU and writes a second
buffer; fused, the backend applies the ReLU to the GEMM's output before it is stored
(OpenCL: in the direct GEMM kernel's store) or while it is in cache (CPU), and the
intermediate buffer is gone. Only where nothing else reads the linear's result (not
returned, not saved for the backward, no other user, no view of it): the graph is
what proves that, which eager cannot know.

In the backward, `matmul(g, W)` (a Linear's input gradient) then ReLU's derivative
rule `where(le(result, 0), 0, product)` ("threshold_backward", PyTorch's name):
the backend zeroes the product where the ReLU's result is <= 0 as it stores it, and
neither the product nor the comparison's mask is written. Where the backend has no
such kernel the comparison and the where stay, for the fusion pass to group.
"""
from __future__ import annotations

from dataclasses import replace

from .._capture.graph import KERNEL, Ref

FLOATS = ("float32", "float64")

# (producer op, epilogue op) pairs a backend may be asked for
PAIRS = frozenset({("linear", "relu"), ("matmul", "threshold_backward")})


def fuse_epilogues(nodes, values, keep, root, offer, literal=lambda v: None):
    """-> (nodes, {fused node id: (kernel, description)}). offer(op, epilogue, dtype,
    device) returns the backend's kernel(out, *inputs) or None; literal(v): the number
    value v always holds (a scalar constant, or a broadcast view of one), or None."""
    keep_roots = {root(v) for v in keep}
    fused = {}
    nodes = _fuse_relu_grads(nodes, values, keep, keep_roots, root, offer, literal, fused)
    return _fuse_relus(nodes, values, keep, keep_roots, root, offer, fused), fused


def _users(nodes, root):
    """{root value: [indices of the nodes reading it]} (a view reads nothing: its
    readers count)."""
    users = {}
    for i, n in enumerate(nodes):
        if n.op == "as_strided":
            continue
        for v in n.inputs:
            if isinstance(v, int):
                users.setdefault(root(v), []).append(i)
        for p in n.params.values():
            if isinstance(p, Ref):
                users.setdefault(root(p.value), []).append(i)
    return users


def _fuse_relus(nodes, values, keep, keep_roots, root, offer, fused):
    """linear + relu pairs as fused nodes (recorded in `fused`)."""
    users = _users(nodes, root)
    out, skip = [], set()
    for i, n in enumerate(nodes):
        if i in skip:
            continue
        j = _epilogue_of(nodes, i, values, keep, keep_roots, users, root)
        if j is None:
            out.append(n)
            continue
        e = nodes[j]
        v = values[n.outputs[0]]
        kernel = offer(n.op, e.op, v.dtype, v.device)
        if kernel is None:
            out.append(n)
            continue
        # the fused call runs where the epilogue ran (its output's allocation is before
        # it); only allocations, which touch no data, lie between the two
        f = replace(n, outputs=e.outputs)
        fused[f.id] = (kernel, _text(n.op, e.op, kernel))
        skip.add(j)
        out.extend(nodes[i + 1:j])
        skip.update(range(i + 1, j))
        out.append(f)
    return out


def _text(op, epilogue, kernel):
    return f"{op} + {epilogue} epilogue: {getattr(kernel, 'text', f'{op} then {epilogue} in place')}"


def _fuse_relu_grads(nodes, values, keep, keep_roots, root, offer, literal, fused):
    """matmul(a, b) read only by `where(le(h, 0), 0, product)` (the `le` read only by
    the where): one node matmul(a, b, h) writing the where's output, where the where
    ran (recorded in `fused`)."""
    users = _users(nodes, root)
    producer = {o: i for i, n in enumerate(nodes) for o in n.outputs}
    drop, at = set(), {}
    for i, n in enumerate(nodes):
        if n.op != "matmul" or i in drop:
            continue
        m = _relu_grad_of(nodes, i, values, keep, keep_roots, users, root, producer, literal)
        if m is None:
            continue
        j, k, h = m
        v = values[n.outputs[0]]
        kernel = offer("matmul", "threshold_backward", v.dtype, v.device)
        if kernel is None:
            continue
        f = replace(n, inputs=n.inputs + (h,), outputs=nodes[j].outputs)
        fused[f.id] = (kernel, _text("matmul", "threshold_backward", kernel))
        drop.update((i, k))
        at[j] = f
    return [at.get(j, n) for j, n in enumerate(nodes) if j not in drop]


def _relu_grad_of(nodes, i, values, keep, keep_roots, users, root, producer, literal):
    """(index of the where, index of the le, the ReLU's result h) of the ReLU backward
    fusing into the matmul nodes[i], or None."""
    n = nodes[i]
    if n.kind != KERNEL or n.inplace or n.params or len(n.outputs) != 1 or len(n.inputs) != 2:
        return None
    v = n.outputs[0]
    mv = values[v]
    if mv.base is not None or v in keep or root(v) in keep_roots or mv.dtype not in FLOATS:
        return None
    readers = users.get(v, [])
    if len(readers) != 1:
        return None
    j = readers[0]
    e = nodes[j]
    if e.op != "where" or e.kind != KERNEL or e.inplace or e.params or len(e.outputs) != 1 \
            or len(e.inputs) != 3:
        return None
    cond, zero, g = e.inputs
    if not all(isinstance(x, int) for x in e.inputs) or not _same_view(values, g, v) \
            or literal(zero) != 0 or root(cond) == v or root(zero) == v:
        return None
    w = values[e.outputs[0]]
    if w.base is not None or w.dtype != mv.dtype or tuple(w.shape) != tuple(mv.shape):
        return None
    k = producer.get(cond)
    if k is None or k >= j:
        return None
    le = nodes[k]
    if le.op != "le" or le.kind != KERNEL or le.inplace or le.params or len(le.inputs) != 2 \
            or values[cond].base is not None or cond in keep or root(cond) in keep_roots \
            or users.get(cond, []) != [j]:
        return None
    h, z = le.inputs
    if not isinstance(h, int) or literal(z) != 0:
        return None
    hv = values[h]
    if hv.dtype != mv.dtype or tuple(hv.shape) != tuple(mv.shape):
        return None
    # the fused call reads a, b (from i) and h (from k) where the where ran: nothing in
    # between may write them
    read = {root(x) for x in n.inputs if isinstance(x, int)} | {root(h)}
    for q in range(min(i, k) + 1, j):
        if q in (i, k) or nodes[q].op in ("as_strided", "empty"):
            continue
        if any(root(o) in read for o in nodes[q].outputs):
            return None
    return j, k, h


def _same_view(values, x, v):
    """Whether x is v, or a view of v with v's own geometry (element for element)."""
    if x == v:
        return True
    a, b = values[x], values[v]
    return a.base == v and tuple(a.shape) == tuple(b.shape) and \
        tuple(a.strides) == tuple(b.strides) and a.offset == b.offset


def _epilogue_of(nodes, i, values, keep, keep_roots, users, root):
    """The index of the node fusing into nodes[i] as its epilogue, or None."""
    n = nodes[i]
    if n.kind != KERNEL or n.inplace or len(n.outputs) != 1 or n.params:
        return None
    v = n.outputs[0]
    if values[v].base is not None or v in keep or root(v) in keep_roots:
        return None
    j = i + 1
    while j < len(nodes) and nodes[j].op == "empty":
        j += 1
    if j == len(nodes):
        return None
    e = nodes[j]
    if (n.op, e.op) not in PAIRS or e.kind != KERNEL or e.inplace or e.params \
            or e.inputs != (v,) or len(e.outputs) != 1:
        return None
    w = values[e.outputs[0]]
    if w.base is not None or w.dtype != values[v].dtype or tuple(w.shape) != tuple(values[v].shape):
        return None
    if users.get(root(v), []) != [j]:        # the epilogue is its result's only reader
        return None
    return j
