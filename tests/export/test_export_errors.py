"""What cannot be exported says why, naming the op and the model's line."""
from __future__ import annotations

import io
import sys

import numpy as np
import pytest

import dispatchtorch as torch
import dispatchtorch.nn as nn
from dispatchtorch.export import Dim, ExportError

onnx = pytest.importorskip("onnx")


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def _line_of(text):
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def test_unmapped_op_names_op_and_line(monkeypatch):
    from dispatchtorch.onnx import _ops
    monkeypatch.delitem(_ops.OPS, "erfinv")          # as an op without an ONNX form
    m = Fn(lambda x: x.erfinv() + 1)
    with pytest.raises(torch.onnx.UnsupportedOpError,
                       match=rf"'erfinv'.*test_export_errors.py:{_line_of('x.erfinv() + 1')}"):
        torch.onnx.export(m, (torch.rand(2, 3),), io.BytesIO())


def test_op_without_a_form_for_these_arguments_names_its_line():
    m = Fn(lambda x: x.cumprod(1))
    with pytest.raises(torch.onnx.UnsupportedOpError,
                       match=rf"cumprod.*dynamic axis.*:{_line_of('x.cumprod(1))')}"):
        torch.onnx.export(m, (torch.rand(2, 3),), io.BytesIO(), input_names=["x"],
                          dynamic_axes={"x": [1]})


def test_float_control_flow_is_refused():
    m = Fn(lambda x: x * 2 if x.sum() > 0 else x)
    with pytest.raises(ExportError, match=rf"control flow at .*:{_line_of('if x.sum() > 0')}"):
        torch.export.export(m, (torch.randn(2, 3),))


def test_data_dependent_shape_is_refused():
    with pytest.raises(ExportError, match="nonzero"):
        torch.export.export(Fn(lambda x: x[x > 0]), (torch.randn(2, 3),))


def test_training_dropout_is_refused_but_onnx_exports_in_eval():
    m = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    with pytest.raises(ExportError, match="eval"):
        torch.export.export(m, (torch.randn(2, 3),))
    buf = io.BytesIO()
    torch.onnx.export(m, (torch.randn(2, 3),), buf)      # torch.onnx exports in eval mode
    assert m.training
    assert "Dropout" not in {n.op_type for n in onnx.load_from_string(buf.getvalue()).graph.node}


def test_bad_arguments():
    m = nn.Linear(4, 2)
    x = torch.randn(3, 4)
    with pytest.raises(ValueError, match="opset_version 13"):
        torch.onnx.export(m, (x,), io.BytesIO(), opset_version=13)
    with pytest.raises(ValueError, match="at least 2"):
        torch.export.export(m, (torch.randn(1, 4),), dynamic_shapes={"input": {0: Dim("b")}})
    with pytest.raises(ValueError, match=r"\['inp'\]"):
        torch.export.export(m, (x,), dynamic_shapes={"inp": {0: Dim("b")}})
    with pytest.raises(ValueError, match="neither input_names nor output_names"):
        torch.onnx.export(m, (x,), io.BytesIO(), input_names=["x"], dynamic_axes={"z": [0]})
    with pytest.raises(TypeError, match="tuple"):
        torch.export.export(m, x)
    ep = torch.export.export(m, (x,))
    with pytest.raises(RuntimeError, match="dim 0 must be 3"):
        ep.module()(torch.randn(5, 4))


def test_constants_that_follow_a_dynamic_axis(tmp_path):
    """arange(n), fills and counts of a dynamic size are computed from it; other
    constants that change with it cannot be exported."""
    ort = pytest.importorskip("onnxruntime")
    m = Fn(lambda x: (x + torch.arange(x.shape[1]) + torch.zeros(x.shape[1]),
                      x.mean(1), x.var(0)))
    path = str(tmp_path / "m.onnx")
    torch.onnx.export(m, (torch.randn(3, 4),), path, input_names=["x"],
                      dynamic_axes={"x": {0: "b", 1: "n"}})
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    ep = torch.export.export(m, (torch.randn(3, 4),), dynamic_shapes=({0: Dim("b"), 1: Dim("n")},))
    for shape in ((2, 7), (5, 3)):
        x = torch.randn(*shape)
        want = [w.numpy() for w in m(x)]
        for got in (sess.run(None, {"x": x.numpy()}), [g.numpy() for g in ep.module()(x)]):
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    m = Fn(lambda x: x * torch.linspace(0, 1, x.shape[1]))
    with pytest.raises(ExportError, match="constant depends on a dynamic size"):
        torch.export.export(m, (torch.randn(2, 3),), dynamic_shapes=({1: Dim("n")},))


def test_without_onnx_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match=r"pip install onnx onnxruntime.*dispatchtorch\[onnx\]"):
        torch.onnx.export(nn.Linear(2, 2), (torch.randn(2, 2),), io.BytesIO())


def test_load_refuses_other_files(tmp_path):
    path = tmp_path / "ck.pt"
    torch.save({"w": torch.ones(2)}, path)
    with pytest.raises(torch.serialization.CheckpointError, match="not an exported program"):
        torch.export.load(path)


def test_signature_and_kwargs():
    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)
            self.register_buffer("shift", torch.ones(2))

        def forward(self, x, *, scale):
            return {"y": self.fc(x) * scale + self.shift, "x": x.sum(-1)}

    torch.manual_seed(0)
    m = Two()
    x, s = torch.randn(4, 3), torch.tensor(2.0)
    ep = torch.export.export(m, (x,), {"scale": s}, dynamic_shapes={"x": {0: Dim("batch")}})
    sig = ep.graph_signature
    assert sig.user_inputs == ["args[0]", "kwargs['scale']"]
    assert sig.parameters == ["fc.weight", "fc.bias"] and sig.buffers == ["shift"]
    x2 = torch.randn(6, 3)
    mod = ep.module()
    assert set(mod.state_dict()) == {"fc.weight", "fc.bias", "shift"}
    assert [n for n, _ in mod.named_parameters()] == ["fc.weight", "fc.bias"]
    got = mod(x2, scale=s)
    want = m(x2, scale=s)
    assert set(got) == {"y", "x"}
    np.testing.assert_allclose(got["y"].numpy(), want["y"].detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(got["x"].numpy(), want["x"].numpy(), rtol=1e-6)


def test_training_modes_and_verbose(capsys):
    from dispatchtorch.onnx import TrainingMode
    m = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5)).eval()
    with pytest.raises(ExportError, match="random"):
        torch.onnx.export(m, (torch.randn(2, 3),), io.BytesIO(), training=TrainingMode.TRAINING)
    assert not m.training                              # the mode is restored
    bn = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))      # in training mode
    with pytest.raises(torch.onnx.UnsupportedOpError, match="batch_norm"):
        torch.onnx.export(bn, (torch.randn(4, 3),), io.BytesIO(), training=TrainingMode.PRESERVE)
    torch.onnx.export(bn, (torch.randn(4, 3),), io.BytesIO(), verbose=True)
    assert bn.training and "dispatchtorch (" in capsys.readouterr().out
