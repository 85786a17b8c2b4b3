"""dispatchtorch.onnx: export a model as an ONNX file (torch.onnx.export's interface).

Needs the optional `onnx` package (`pip install dispatchtorch[onnx]`, which also
installs onnxruntime to run the result). See docs/export.md.
"""
from . import errors
from ._export import (DEFAULT_OPSET, SUPPORTED_OPSETS, TrainingMode, export,
                      is_in_onnx_export, select_model_mode_for_export)
from .errors import OnnxExporterError, UnsupportedOpError

__all__ = ["export", "is_in_onnx_export", "select_model_mode_for_export", "TrainingMode",
           "errors", "OnnxExporterError", "UnsupportedOpError", "DEFAULT_OPSET",
           "SUPPORTED_OPSETS"]
