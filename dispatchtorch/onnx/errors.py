"""torch.onnx.errors: the exception classes scripts catch around torch.onnx.export."""
from __future__ import annotations


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter: the base class of every exporter error."""


class UnsupportedOperatorError(OnnxExporterError):
    """An op of the captured graph with no ONNX form at the requested opset. PyTorch
    builds its message from (name, version, supported_version); this exporter's
    message names the op, the opset and where the op was called, so it takes it whole."""


UnsupportedOpError = UnsupportedOperatorError     # this package's earlier name
