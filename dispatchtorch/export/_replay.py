"""Run a captured forward graph again on new inputs: the graph's kernels and memory
calls, in order, straight on the backend (no frontend, no autograd). This is what
`ExportedProgram.module()` runs; sizes of dynamic axes are bound per call."""
from __future__ import annotations

import numpy as np

from .. import _capture as C
from .._run import kernel_for, wrap
from .._tensor import Tensor
from ..dispatch import DECOMPOSE, OPS
from ._dynamic import specialize


def replay(graph, place, tensors):
    """The graph's outputs (tensors) for placeholder tensors {name: Tensor} on `place`."""
    bk = place.bk
    index = place.index
    env = {}
    for p in graph.placeholders:
        if p.kind == C.CONSTANT:
            env[p.value] = bk.from_host(np.ascontiguousarray(p.data), index)
        elif not p.name.endswith(".storage"):
            t = tensors[p.name]
            if t._storage is not None or t._offset:
                t = t.contiguous()
            env[p.value] = t._h
    for n in graph.prim_nodes("forward"):
        if n.op == "empty":
            env[n.outputs[0]] = bk.empty(tuple(n.params["shape"]), n.params["dtype"], index)
        elif n.op == "as_strided":
            p = n.params
            env[n.outputs[0]] = bk.as_strided(env[n.inputs[0]], tuple(p["size"]),
                                              tuple(p["stride"]), p["storage_offset"])
        elif n.op == "copy_":
            bk.copy_(env[n.outputs[0]], env[n.inputs[0]])
        elif n.op == "fill_":
            bk.fill_(env[n.outputs[0]], n.params["value"])
        elif n.kind == C.KERNEL:
            op = OPS[n.op]
            k = kernel_for(op, place)
            if k is DECOMPOSE:
                raise RuntimeError(f"replay: {place.type} has no kernel for {n.op}, which the "
                                   "captured graph called")
            ins = [a.value if isinstance(a, C.Scalar) else env[a] for a in n.inputs]
            params = {k_: (env[v.value] if isinstance(v, C.Ref) else v)
                      for k_, v in n.params.items() if not k_.startswith("_")}
            if n.op.endswith("_"):
                k(*ins, **params)
            else:
                k(*[env[o] for o in n.outputs], *ins, **params)
        else:
            raise RuntimeError(f"replay: cannot run a {n.kind} node ({n.op}) of an exported "
                               "graph")
    outs = []
    for vid in graph.outputs:
        v = graph.values[vid]
        h = bk.empty(tuple(v.shape), v.dtype, index)
        bk.copy_(h, env[vid])
        outs.append(wrap(h, tuple(v.shape), _dtype(v.dtype), place))
    return C.unflatten(graph.output_spec, outs)


def _dtype(name):
    from .. import _dtype as D
    return D.BY_NAME[name]


def bind(graph, symbols, inputs):
    """The graph specialised to the sizes of `inputs` ({position: Tensor}) along the
    dynamic axes `symbols` ({name: [(position, axis), ...]})."""
    if not symbols:
        return graph
    env = {}
    for name, where in symbols.items():
        sizes = {inputs[pos].shape[axis] for pos, axis in where}
        if len(sizes) != 1:
            raise RuntimeError(f"the axes of dynamic dim {name} have different sizes {sizes}")
        env[name] = sizes.pop()
    return specialize(graph, env)


__all__ = ["replay", "bind", "Tensor"]
