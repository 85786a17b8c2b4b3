"""examples/export_onnx.py runs and its largest difference is within its tolerance."""
import os
import sys

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("sklearn")

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def test_export_onnx_example(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(EXAMPLES)
    import export_onnx
    worst = export_onnx.main(["--out", str(tmp_path), "--checkpoint", str(tmp_path / "none")])
    assert worst <= export_onnx.TOLERANCE
    assert sorted(os.listdir(tmp_path)) == ["digits_cnn.dtexport", "digits_cnn.onnx",
                                           "tiny_transformer.onnx"]
    sys.modules.pop("export_onnx", None)
