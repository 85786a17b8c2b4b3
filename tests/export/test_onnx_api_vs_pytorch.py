"""torch.onnx's small API around export (is_in_onnx_export, select_model_mode_for_export,
the error classes), side by side with PyTorch's."""
from __future__ import annotations

import pytest

import dispatchtorch as torch
import dispatchtorch.nn as nn

onnx = pytest.importorskip("onnx")


class Probe(nn.Module):
    """Records is_in_onnx_export() and the mode at each forward."""

    def __init__(self, lib):
        super().__init__()
        self.lib, self.seen = lib, []
        self.lin = lib.nn.Linear(3, 2)

    def forward(self, x):
        self.seen.append((self.lib.onnx.is_in_onnx_export(), self.training))
        return self.lin(x)


def test_is_in_onnx_export_is_true_only_inside_export(tmp_path):
    m = Probe(torch)
    m(torch.randn(2, 3))
    torch.onnx.export(m, (torch.randn(2, 3),), str(tmp_path / "m.onnx"))
    m(torch.randn(2, 3))
    assert [s[0] for s in m.seen] == [False, True, False]
    assert m.seen[1][1] is False and m.training      # exported in eval, restored after
    assert torch.onnx.is_in_onnx_export() is False


def test_is_in_onnx_export_is_reset_when_export_fails(tmp_path):
    class Bad(nn.Module):
        def forward(self, x):
            assert torch.onnx.is_in_onnx_export()
            raise ValueError("boom")
    with pytest.raises(ValueError, match="boom"):
        torch.onnx.export(Bad(), (torch.randn(2),), str(tmp_path / "b.onnx"))
    assert torch.onnx.is_in_onnx_export() is False


@pytest.mark.parametrize("mode", ["EVAL", "PRESERVE", "TRAINING"])
@pytest.mark.parametrize("start_training", [False, True])
def test_select_model_mode_for_export_as_pytorch(mode, start_training):
    pt = pytest.importorskip("torch")
    seen = []
    for lib, module in ((pt, pt.nn.Linear(2, 2)), (torch, nn.Linear(2, 2))):
        module.train(start_training)
        with lib.onnx.select_model_mode_for_export(module, getattr(lib.onnx.TrainingMode, mode)):
            inside = module.training
        seen.append((inside, module.training))
    assert seen[0] == seen[1]


def test_select_model_mode_for_export_refuses_a_plain_int():
    pt = pytest.importorskip("torch")
    with pytest.raises(TypeError) as theirs:
        with pt.onnx.select_model_mode_for_export(pt.nn.Linear(2, 2), 0):
            pass
    with pytest.raises(TypeError) as ours:
        with torch.onnx.select_model_mode_for_export(nn.Linear(2, 2), 0):
            pass
    assert str(ours.value) == str(theirs.value)


def test_error_classes_are_pytorchs_hierarchy(tmp_path):
    pt = pytest.importorskip("torch")
    for lib in (pt, torch):
        assert issubclass(lib.onnx.OnnxExporterError, RuntimeError)
        assert lib.onnx.errors.OnnxExporterError is lib.onnx.OnnxExporterError
        assert issubclass(lib.onnx.errors.UnsupportedOperatorError, lib.onnx.OnnxExporterError)

    class Bits(nn.Module):
        def forward(self, x):
            return (x * 7).long() & 5
    with pytest.raises(torch.onnx.errors.UnsupportedOperatorError, match="needs opset_version 18"):
        torch.onnx.export(Bits(), (torch.randn(4),), str(tmp_path / "m.onnx"))
