"""dispatchtorch.onnx: export a model as an ONNX file (torch.onnx.export's interface).

Needs the optional `onnx` package (`pip install dispatchtorch[onnx]`, which also
installs onnxruntime to run the result). See docs/export.md.
"""
from ._convert import UnsupportedOpError
from ._export import DEFAULT_OPSET, SUPPORTED_OPSETS, TrainingMode, export

__all__ = ["export", "TrainingMode", "UnsupportedOpError", "DEFAULT_OPSET", "SUPPORTED_OPSETS"]
