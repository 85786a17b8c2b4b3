"""Each model exports to ONNX with a dynamic batch axis, passes the full ONNX check and
matches dispatchtorch's eager output under onnxruntime at two batch sizes; its
ExportedProgram.module() matches eager at both sizes, also after save/load."""
from __future__ import annotations

import io

import numpy as np
import pytest

import dispatchtorch as torch
from dispatchtorch.export import Dim

from export_models import MODELS

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

BATCHES = (2, 5)


def _input(x, batch):
    if x.dtype == torch.int64:
        return torch.randint(0, int(x.max()) + 1, (batch,) + tuple(x.shape[1:]))
    return torch.randn(batch, *x.shape[1:])


def _eager(model, x):
    with torch.no_grad():
        return model(x).numpy()


@pytest.fixture(scope="module", params=sorted(MODELS))
def case(request):
    torch.manual_seed(0)
    model, x = MODELS[request.param]()
    model.eval()
    return request.param, model, x


def test_onnx_matches_eager(case, tmp_path):
    name, model, x = case
    path = tmp_path / f"{name}.onnx"
    torch.onnx.export(model, (x,), str(path), input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    proto = onnx.load(str(path))
    onnx.checker.check_model(proto, full_check=True)
    assert proto.opset_import[0].version == 17
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert len(proto.graph.initializer) >= len(list(model.parameters()))
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for batch in BATCHES:
        xb = _input(x, batch)
        got, = sess.run(None, {"x": xb.numpy()})
        want = _eager(model, xb)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_exported_program_module_and_save_load(case):
    name, model, x = case
    ep = torch.export.export(model, (x,), dynamic_shapes=({0: Dim("batch")},))
    assert str(ep.graph.values[ep.graph.placeholder("args[0]").value].shape[0]) == "batch"
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    loaded = torch.export.load(buf.getvalue())
    assert set(loaded.state_dict) == set(ep.state_dict)
    for k, v in ep.state_dict.items():
        np.testing.assert_array_equal(loaded.state_dict[k].numpy(), v.numpy())
    for batch in BATCHES:
        xb = _input(x, batch)
        want = _eager(model, xb)
        np.testing.assert_allclose(ep.module()(xb).numpy(), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(loaded.module()(xb).numpy(), want, rtol=1e-5, atol=1e-6)


def test_transformer_dynamic_batch_and_sequence(tmp_path):
    """Batch and sequence length both dynamic: the positions (arange), the causal mask
    and the attention scores (heads * T * T) follow the input's shape."""
    torch.manual_seed(0)
    model, x = MODELS["tiny_transformer"]()
    model.eval()
    path = str(tmp_path / "tt.onnx")
    torch.onnx.export(model, (x,), path, input_names=["x"],
                      dynamic_axes={"x": {0: "batch", 1: "seq"}})
    onnx.checker.check_model(onnx.load(path), full_check=True)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    ep = torch.export.export(model, (x,), dynamic_shapes=({0: Dim("batch"), 1: Dim("seq")},))
    for b, t in ((1, 3), (4, 12)):
        xb = torch.randint(0, 30, (b, t))
        want = _eager(model, xb)
        np.testing.assert_allclose(sess.run(None, {"x": xb.numpy()})[0], want, rtol=1e-4,
                                   atol=1e-4)
        np.testing.assert_allclose(ep.module()(xb).numpy(), want, rtol=1e-5, atol=1e-6)
