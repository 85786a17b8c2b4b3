"""Epilogue fusion: a matmul-like kernel and the elementwise op applied to its result,
as one backend call (`Backend.fuse_epilogue`).

`linear(x, w, b)` then `relu` of its result (nn.Linear + nn.ReLU, every MLP layer):
eager writes the GEMM's output, reads it back for the ReLU and writes a second
buffer; fused, the backend applies the ReLU to the GEMM's output before it is stored
(OpenCL: in the direct GEMM kernel's store) or while it is in cache (CPU), and the
intermediate buffer is gone. Only where nothing else reads the linear's result (not
returned, not saved for the backward, no other user, no view of it): the graph is
what proves that, which eager cannot know.
"""
from __future__ import annotations

from dataclasses import replace

from .._capture.graph import KERNEL, Ref

# (producer op, epilogue op) pairs a backend may be asked for
PAIRS = frozenset({("linear", "relu")})


def fuse_epilogues(nodes, values, keep, root, offer):
    """-> (nodes, {fused node id: (kernel, description)}). offer(op, epilogue, dtype,
    device) returns the backend's kernel(out, *inputs) or None."""
    keep_roots = {root(v) for v in keep}
    users = {}
    for i, n in enumerate(nodes):
        for v in n.inputs:
            if isinstance(v, int):
                users.setdefault(root(v), []).append(i)
        for p in n.params.values():
            if isinstance(p, Ref):
                users.setdefault(root(p.value), []).append(i)
    fused, out, skip = {}, [], set()
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
        fused[f.id] = (kernel, f"{n.op} + {e.op} epilogue: "
                               f"{getattr(kernel, 'text', f'{n.op} then {e.op} in place')}")
        skip.add(j)
        out.extend(nodes[i + 1:j])
        skip.update(range(i + 1, j))
        out.append(f)
    return out, fused


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
