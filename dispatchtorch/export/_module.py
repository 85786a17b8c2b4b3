"""ExportedProgram.module(): the graph as a callable nn.Module."""
from __future__ import annotations

from .. import _capture as C
from .._tensor import Tensor
from ..nn.modules.module import Module
from ._replay import bind, replay


class ExportedModule(Module):
    """Runs the exported graph on each call. Static sizes must match the example's;
    dynamic ones must lie in their ranges."""

    def __init__(self, program):
        super().__init__()
        object.__setattr__(self, "_program", program)

    def forward(self, *args, **kwargs):
        ep = self._program
        leaves, _, _ = C.flatten((tuple(args), kwargs), "in")
        if len(leaves) != len(ep.input_names):
            raise TypeError(f"exported forward takes {len(ep.input_names)} tensor inputs, got "
                            f"{len(leaves)}")
        self._check(leaves)
        graph = bind(ep.graph, ep.dynamic, dict(enumerate(leaves)))
        tensors = dict(ep.state_dict)
        tensors.update(zip(ep.input_names, leaves))
        place = next((t._place for t in leaves if isinstance(t, Tensor)), None)
        if place is None:
            place = next(iter(ep.state_dict.values()))._place
        return replay(graph, place, tensors)

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
