"""ExportedProgram.module(): the graph as a callable nn.Module, run by the compiler's
runner (dispatchtorch._compile: the graph's prims straight on the backend, fused where
the backend can) once per set of dynamic sizes."""
from __future__ import annotations

import numpy as np

from .. import _capture as C
from .._tensor import Tensor
from ..nn.modules.module import Module
from ._dynamic import specialize


class ExportedModule(Module):
    """Runs the exported graph on each call. Static sizes must match the example's;
    dynamic ones must lie in their ranges. The weights are its parameters and buffers
    under their original names (submodules as in the exported model), so
    state_dict() / load_state_dict() work as on the original."""

    def __init__(self, program):
        super().__init__()
        object.__setattr__(self, "_program", program)
        object.__setattr__(self, "_entries", {})      # dynamic sizes -> compiled Entry
        from ..nn.parameter import Parameter
        kinds = {p.name: p.kind for p in program.graph.placeholders}
        for name, t in program.state_dict.items():
            *path, leaf = name.split(".")
            owner = self
            for part in path:
                if part not in owner._modules:
                    owner.add_module(part, Module())
                owner = owner._modules[part]
            if kinds.get(name) == C.PARAMETER:
                owner.register_parameter(leaf, Parameter(t, requires_grad=False))
            else:
                owner.register_buffer(leaf, t)

    def forward(self, *args, **kwargs):
        ep = self._program
        leaves, _, _ = C.flatten((tuple(args), kwargs), "in")
        if len(leaves) != len(ep.input_names):
            raise TypeError(f"exported forward takes {len(ep.input_names)} tensor inputs, got "
                            f"{len(leaves)}")
        self._check(leaves)
        env = {name: leaves[where[0][0]].shape[where[0][1]] for name, where in ep.dynamic.items()}
        key = tuple(sorted(env.items()))
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = _entry(ep.graph if not env else specialize(ep.graph, env))
        named = {n: (t, None) for n, t in self.named_parameters()}
        named.update((n, (t, None)) for n, t in self.named_buffers())
        return entry.run(tuple(_contiguous(a) for a in args),
                         {k: _contiguous(v) for k, v in kwargs.items()}, named)

    def _check(self, leaves):
        ep = self._program
        g = ep.graph
        dyn = {(pos, axis): name for name, where in ep.dynamic.items() for pos, axis in where}
        for pos, (name, t) in enumerate(zip(ep.input_names, leaves)):
            want = g.values[g.placeholder(name).value]
            if not isinstance(t, Tensor) or t.dim() != len(want.shape) or t.dtype.name != want.dtype:
                raise RuntimeError(f"exported forward: input {name} must be a {want.dtype} tensor "
                                   f"with {len(want.shape)} dims, got "
                                   f"{getattr(t, 'dtype', type(t).__name__)} "
                                   f"{tuple(getattr(t, 'shape', ()))}")
            for axis, (n, w) in enumerate(zip(t.shape, want.shape)):
                sym = dyn.get((pos, axis))
                if sym is None:
                    if n != int(w):
                        raise RuntimeError(f"exported forward: input {name} dim {axis} must be "
                                           f"{int(w)} (static when exported), got {n}")
                    continue
                lo, hi = ep.range_constraints.get(sym, (0, None))
                if n < max(lo, 1) or (hi is not None and n > hi):
                    raise RuntimeError(f"exported forward: input {name} dim {axis} ({sym}) "
                                       f"must be in [{max(lo, 1)}, {hi}], got {n}")


def _contiguous(x):
    return x.contiguous() if isinstance(x, Tensor) and not x.is_contiguous() else x


def _entry(graph):
    """The compiler's runner for graph, its constants uploaded to their devices."""
    from .._compile.compiled import Entry
    from .._place import place_of
    for p in graph.placeholders:
        if p.kind == C.CONSTANT:
            place = place_of(graph.values[p.value].device)
            p.handle = place.bk.from_host(np.ascontiguousarray(p.data), place.index)
    return Entry(graph, {}, False)
