"""dispatchtorch.export: a model's forward as a graph of prims, saved code-free.

    ep = dispatchtorch.export.export(model, (x,), dynamic_shapes={"x": {0: Dim("batch")}})
    ep.module()(x2)                          # runs the graph again in dispatchtorch
    dispatchtorch.export.save(ep, "model.dtexport"); ep = dispatchtorch.export.load(...)

The graph is the one dispatchtorch.compile captures (dispatchtorch._capture); see
docs/export.md. dispatchtorch.onnx writes the same graph as an ONNX model.
"""
from ._dynamic import Dim
from ._export import ExportError, export
from ._format import load, save
from ._program import ExportedProgram, ExportGraphSignature, InputSpec

__all__ = ["export", "save", "load", "Dim", "ExportedProgram", "ExportGraphSignature",
           "InputSpec", "ExportError"]
