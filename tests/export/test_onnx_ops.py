"""Ops and views through ONNX: strided views (permute, stepped slices, select,
diagonal, unfold, flip), in-place writes into views, casts, reductions, scans and the
composites, with a dynamic batch where the graph allows, checked against eager."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as torch
import dispatchtorch.nn as nn

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def _roundtrip(model, x, tmp_path, batches, dynamic=True, **kw):
    """Export, run under onnxruntime at each batch size and compare with eager."""
    path = str(tmp_path / "m.onnx")
    axes = {"x": {0: "batch"}} if dynamic else None
    torch.onnx.export(model, (x,), path, input_names=["x"], dynamic_axes=axes, **kw)
    proto = onnx.load(path)
    onnx.checker.check_model(proto, full_check=True)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for n in batches:
        xb = torch.randn(n, *x.shape[1:])
        with torch.no_grad():
            want = model(xb)
        want = want if isinstance(want, tuple) else (want,)
        got = sess.run(None, {"x": xb.numpy()})
        assert len(got) == len(want)
        for g, w in zip(got, want):
            w = w.numpy()
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    return proto


def _views_and_ops(x):
    a = x.permute(0, 2, 1)[:, ::2, 1:]                  # stepped slice of a permute
    b = x[:, 0] * 2.0 + x[:, -1].exp()                   # selects
    c = x.reshape(x.shape[0], -1).cumsum(1)[:, -3:]
    d = torch.where(x > 0, x, x * 0.1).amax(dim=1)
    e = (x * 4).int().remainder(3).float() + x.argmax(-1, keepdim=True)
    f = torch.cat([b, d], dim=1)
    g = x.transpose(1, 2).contiguous().view(x.shape[0], -1)[:, :5]
    h = x.clone()
    h[:, 1] = 0.5                                        # a write into a view
    i = x.clamp(-0.5, 0.5).abs().sqrt() + x.pow(2).log1p() - torch.atan2(x, x + 1)
    j = torch.bmm(x, x.transpose(1, 2)).softmax(-1).mean(-1)
    k = x.unfold(2, 2, 1).sum(-1) + x.flip(1)[..., 1:] + x[:, torch.tensor([2, 0, 1, 3])][..., :4]
    return a.sum((1, 2)), f, c, e, g, h, i, j, k


def test_views_ops_dynamic_batch(tmp_path):
    torch.manual_seed(0)
    proto = _roundtrip(Fn(_views_and_ops), torch.randn(3, 4, 5), tmp_path, (2, 6))
    ops = {n.op_type for n in proto.graph.node}
    assert {"Slice", "Transpose", "Concat", "CumSum", "ArgMax", "Where", "Pad"} <= ops


def test_static_views_gather(tmp_path):
    torch.manual_seed(0)
    fn = Fn(lambda x: (x.diagonal(dim1=1, dim2=2), x.diagonal(1, 1, 2).exp()))
    proto = _roundtrip(fn, torch.randn(3, 4, 4), tmp_path, (3,), dynamic=False)
    assert "Gather" in {n.op_type for n in proto.graph.node}


def test_composites(tmp_path):
    torch.manual_seed(0)
    m = nn.Sequential(nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1), nn.GroupNorm(1, 3),
                      nn.ReLU6(), nn.MaxPool2d(2, ceil_mode=True), nn.Flatten(),
                      nn.Linear(75, 6), nn.RMSNorm(6), nn.LeakyReLU(0.1), nn.ELU(),
                      nn.Softplus(), nn.Hardtanh(), nn.LogSoftmax(-1)).eval()
    proto = _roundtrip(m, torch.randn(2, 2, 5, 5), tmp_path, (2, 3))
    assert {"ConvTranspose", "MaxPool", "LogSoftmax"} <= {n.op_type for n in proto.graph.node}


@pytest.mark.parametrize("opset", [18, 20, 21])
def test_other_opsets(tmp_path, opset):
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(6, 6), nn.LayerNorm(6), nn.GELU(), nn.Linear(6, 2),
                      nn.Softmax(-1)).eval()
    fn = Fn(lambda x: (m(x), x.sum(-1), x.amax(0)))
    proto = _roundtrip(fn, torch.randn(3, 6), tmp_path, (2, 4), opset_version=opset)
    assert proto.opset_import[0].version == opset
    assert ("Gelu" in {n.op_type for n in proto.graph.node}) == (opset >= 20)


def test_params_as_inputs_and_no_folding(tmp_path):
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 3), nn.Tanh()).eval()
    path = str(tmp_path / "m.onnx")
    x = torch.randn(5, 4)
    torch.onnx.export(m, x, path, input_names=["x"], output_names=["y"], export_params=False,
                      do_constant_folding=False)
    proto = onnx.load(path)
    onnx.checker.check_model(proto, full_check=True)
    names = [i.name for i in proto.graph.input]
    assert names[0] == "x" and len(names) == 3 and not proto.graph.initializer
    assert [o.name for o in proto.graph.output] == ["y"]
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feed = {"x": x.numpy(), names[1]: m[0].weight.detach().numpy(),
            names[2]: m[0].bias.detach().numpy()}
    with torch.no_grad():
        np.testing.assert_allclose(sess.run(None, feed)[0], m(x).numpy(), rtol=1e-5, atol=1e-6)


_FLOAT_FNS = [
    torch.exp, torch.exp2, torch.expm1, torch.log1p, torch.sin, torch.cos, torch.tan,
    torch.atan, torch.sinh, torch.cosh, torch.tanh, torch.asinh, torch.erf, torch.erfc,
    torch.floor, torch.ceil, torch.round, torch.trunc, torch.neg, torch.abs, torch.sign,
    torch.sigmoid, torch.relu, torch.reciprocal, torch.isnan,
    lambda x: torch.log(x.abs() + 1), lambda x: torch.log2(x.abs() + 1),
    lambda x: torch.log10(x.abs() + 1), lambda x: torch.sqrt(x.abs()),
    lambda x: torch.rsqrt(x.abs() + 1), lambda x: torch.asin(x.clamp(-0.9, 0.9)),
    lambda x: torch.acos(x.clamp(-0.9, 0.9)), lambda x: torch.atanh(x.clamp(-0.9, 0.9)),
    lambda x: torch.acosh(x.abs() + 1), lambda x: torch.fmod(x, 0.3),
    lambda x: torch.maximum(x, x.flip(1)), lambda x: torch.minimum(x, 0.1 * x),
    lambda x: x / (x.abs() + 1), lambda x: x - 3, lambda x: x ** 3,
    lambda x: (x > 0) & (x < 0.5), lambda x: (x >= 0) | (x <= -0.5), lambda x: (x > 0) ^ (x > 0.2),
    lambda x: ~(x > 0), lambda x: torch.logical_not(x > 0), lambda x: x != x.flip(1),
    lambda x: x == x.round(), lambda x: torch.where(x > 0, 1.0, x),
    lambda x: x.prod(-1), lambda x: x.amin(-1), lambda x: x.argmin(-1), lambda x: x.mean(0),
]


def test_elementwise_sweep(tmp_path):
    torch.manual_seed(0)
    fn = Fn(lambda x: tuple(f(x) for f in _FLOAT_FNS))
    _roundtrip(fn, torch.randn(4, 6), tmp_path, (3, 5))


def test_integer_ops(tmp_path):
    fn = Fn(lambda x: ((x * 7).long() & 5, (x * 7).long() | 2, (x * 7).long() ^ 3,
                       ~(x * 7).long(), (x * 7).int() // 2, (x * 7).long() % 3,
                       (x * 7).long().cumsum(-1), (x * 7).long().sum(-1), (x * 7).int().abs()))
    torch.manual_seed(0)
    _roundtrip(fn, torch.randn(4, 6), tmp_path, (3, 5), opset_version=18)
    with pytest.raises(torch.onnx.UnsupportedOpError, match="Bitwise.*opset_version 18.*called at"):
        torch.onnx.export(fn, (torch.randn(4, 6),), str(tmp_path / "m17.onnx"))


def _rest_of_prims(x):
    seq = torch.tensor([[-1.0, 0.0, 0.5]]).expand(x.shape[0], 3)
    idx = (x.abs() * 3).long().clamp(0, 7)               # indices computed from values
    return (x.cumprod(1), *x.cummax(1), *torch.cummin(x, 1), *x.sort(1),
            *torch.sort(x, 1, descending=True),
            torch.searchsorted(seq, x[:, :4].contiguous()),
            torch.searchsorted(seq, x[:, :4].round().contiguous(), right=True),
            (x * 20).long() << 2, (x * 20).long() >> 1, (x * 20).int() >> (x.abs() * 3).int(),
            torch.zeros(x.shape[0], 8).scatter(1, idx, x),
            torch.zeros(x.shape[0], 8).scatter_add(1, idx, x),
            x.gather(1, x.argmax(1, keepdim=True)),
            torch.erfinv(x.clamp(-0.999, 0.999)))


def test_remaining_prims(tmp_path):
    """Scans (as reductions over a triangle), sort (TopK), searchsorted, shifts,
    scatter and erfinv (a polynomial approximation, float32 accuracy)."""
    torch.manual_seed(0)
    proto = _roundtrip(Fn(_rest_of_prims), torch.randn(3, 6), tmp_path, (2, 5),
                       opset_version=18)
    assert {"TopK", "ScatterElements", "ArgMax"} <= {n.op_type for n in proto.graph.node}
