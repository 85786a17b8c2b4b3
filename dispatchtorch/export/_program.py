"""ExportedProgram: a captured forward graph with its weights and signature."""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import _capture as C


@dataclass
class InputSpec:
    """One graph input: kind "input" (a user argument), "parameter", "buffer" or
    "constant"; name: "args[0]", "fc1.weight", "const3"."""
    kind: str
    name: str
    shape: tuple
    dtype: str


@dataclass
class ExportGraphSignature:
    inputs: list          # [InputSpec] in graph placeholder order
    outputs: list         # [(shape, dtype)] of the flattened outputs

    @property
    def user_inputs(self):
        return [s.name for s in self.inputs if s.kind == C.INPUT]

    @property
    def parameters(self):
        return [s.name for s in self.inputs if s.kind == C.PARAMETER]

    @property
    def buffers(self):
        return [s.name for s in self.inputs if s.kind == C.BUFFER]


@dataclass
class ExportedProgram:
    """What `dispatchtorch.export.export` returns (torch.export.ExportedProgram).

    graph: the forward graph of prims and whole composites (`_capture.Graph`), sizes
    along dynamic axes as SymInts; state_dict: the parameters and buffers by name;
    dynamic: {symbol: [(input position, axis), ...]}; range_constraints:
    {symbol: (min, max or None)}; input_names: the flattened user inputs by
    placeholder name, in call order."""
    graph: object
    state_dict: dict
    input_names: list
    dynamic: dict = field(default_factory=dict)
    range_constraints: dict = field(default_factory=dict)

    @property
    def graph_signature(self):
        g = self.graph
        ins = [InputSpec(p.kind, p.name, tuple(g.values[p.value].shape), g.values[p.value].dtype)
               for p in g.placeholders if not p.name.endswith(".storage")]
        outs = [(tuple(g.values[v].shape), g.values[v].dtype) for v in g.outputs]
        return ExportGraphSignature(ins, outs)

    @property
    def constants(self):
        return {p.name: p.data for p in self.graph.placeholders if p.kind == C.CONSTANT}

    def parameters(self):
        for name in self.graph_signature.parameters:
            yield self.state_dict[name]

    def buffers(self):
        for name in self.graph_signature.buffers:
            yield self.state_dict[name]

    def module(self):
        """An nn.Module whose forward runs this graph again in dispatchtorch."""
        from ._module import ExportedModule
        return ExportedModule(self)

    def __str__(self):
        return "ExportedProgram:\n" + self.graph.pretty(composites=False)
