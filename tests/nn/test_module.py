"""nn.Module and the containers: registration, traversal, state dicts, modes,
conversion, hooks, printing."""
from __future__ import annotations

import copy
from collections import OrderedDict

import numpy as np
import pytest
from conftest import to_np

import dispatchtorch as dt
import dispatchtorch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)
        self.fc2 = nn.Linear(4, 2, bias=False)
        self.scale = nn.Parameter(dt.ones(1))
        self.register_buffer("steps", dt.zeros(1))
        self.register_buffer("cache", dt.zeros(2), persistent=False)

    def forward(self, x):
        return self.fc2(self.bn(self.fc1(x)).relu()) * self.scale


def test_registration_and_traversal():
    m = Net()
    assert [n for n, _ in m.named_parameters()] == [
        "scale", "fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "fc2.weight"]
    assert [n for n, _ in m.named_buffers()] == [
        "steps", "cache", "bn.running_mean", "bn.running_var", "bn.num_batches_tracked"]
    assert [n for n, _ in m.named_children()] == ["fc1", "bn", "fc2"]
    assert [n for n, _ in m.named_modules()] == ["", "fc1", "bn", "fc2"]
    assert len(list(m.parameters(recurse=False))) == 1
    assert isinstance(m.scale, nn.Parameter) and m.scale.requires_grad and m.scale.is_leaf
    assert m.get_submodule("fc1") is m.fc1 and m.get_parameter("fc1.bias") is m.fc1.bias
    assert m.fc2.bias is None


def test_shared_parameters_are_listed_once():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.named_modules())) == 3


def test_attribute_errors():
    m = nn.Module()
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        m.nope
    m.p = nn.Parameter(dt.zeros(1))
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'p'"):
        m.p = dt.zeros(1)
    with pytest.raises(KeyError, match="contain"):
        m.register_buffer("a.b", dt.zeros(1))
    with pytest.raises(TypeError, match="requires_grad|Parameter"):
        m.register_parameter("q", dt.zeros(1))
    del m.p
    assert list(m.parameters()) == []


def test_state_dict_contents_and_round_trip():
    m = Net()
    sd = m.state_dict()
    assert list(sd) == ["scale", "steps", "fc1.weight", "fc1.bias", "bn.weight", "bn.bias",
                        "bn.running_mean", "bn.running_var", "bn.num_batches_tracked",
                        "fc2.weight"]
    assert not any(v.requires_grad for v in sd.values())
    m2 = Net()
    result = m2.load_state_dict(sd)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert str(result) == "<All keys matched successfully>"
    for k, v in m2.state_dict().items():
        assert np.array_equal(to_np(v), to_np(sd[k])), k
    # loading copies values into the existing parameters (optimizers keep working)
    w = m2.fc1.weight
    m2.load_state_dict(Net().state_dict())
    assert m2.fc1.weight is w
    assert isinstance(sd, OrderedDict)


def test_state_dict_aliases_parameters_and_keep_vars():
    m = nn.Linear(2, 2)
    sd = m.state_dict()
    with dt.no_grad():
        m.weight.fill_(3.0)
    assert to_np(sd["weight"]).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert m.state_dict(keep_vars=True)["weight"] is m.weight


def test_load_state_dict_errors_name_the_keys():
    m = Net()
    sd = m.state_dict()
    del sd["fc1.bias"]
    sd["fc3.weight"] = dt.zeros(1)
    sd["fc2.weight"] = dt.zeros(5, 4)
    with pytest.raises(RuntimeError) as info:
        m.load_state_dict(sd)
    msg = str(info.value)
    assert msg.startswith("Error(s) in loading state_dict for Net:")
    assert 'Missing key(s) in state_dict: "fc1.bias"' in msg
    assert 'Unexpected key(s) in state_dict: "fc3.weight"' in msg
    assert "size mismatch for fc2.weight: copying a param with shape" in msg
    del sd["fc2.weight"]
    r = m.load_state_dict(sd, strict=False)
    assert r.missing_keys == ["fc1.bias", "fc2.weight"] and r.unexpected_keys == ["fc3.weight"]


def test_load_state_dict_of_another_model_fails_clearly():
    with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "0.weight"'):
        nn.Sequential(nn.Linear(3, 3)).load_state_dict(nn.Linear(3, 3).state_dict())


def test_load_state_dict_assign():
    m = nn.Linear(2, 2)
    new = {"weight": dt.ones(2, 2), "bias": dt.zeros(2)}
    m.load_state_dict(new, assign=True)
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
    assert to_np(m.weight).tolist() == [[1, 1], [1, 1]]


def test_train_eval_and_requires_grad():
    m = Net()
    assert m.training and m.bn.training
    m.eval()
    assert not m.training and not m.bn.training
    m.train()
    assert m.bn.training
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_zero_grad_and_apply():
    m = Net()
    m(dt.randn(5, 3)).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(not np.any(to_np(p.grad)) for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "BatchNorm1d", "Linear", "Net"]


def test_dtype_conversion_keeps_parameter_objects():
    m = Net()
    w = m.fc1.weight
    m.double()
    assert m.fc1.weight is w and w.dtype is dt.float64 and m.bn.running_mean.dtype is dt.float64
    assert m.bn.num_batches_tracked.dtype is dt.int64
    m.half()
    assert w.dtype is dt.float16
    m.to(dt.float32)
    assert w.dtype is dt.float32 and isinstance(w, nn.Parameter) and w.requires_grad
    m.to("cpu")
    assert str(w.device) == "cpu"
    with pytest.raises(TypeError, match="floating point"):
        m.to(dt.int64)


def test_forward_hooks():
    m = nn.Linear(2, 2)
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append(out) or out + 1)
    y = m(dt.ones(1, 2))
    assert np.allclose(to_np(y), to_np(m.bias) + 1) and len(calls) == 1
    h1.remove()
    h2.remove()
    assert np.allclose(to_np(m(dt.zeros(1, 2))), to_np(m.bias))
    h3 = m.register_forward_pre_hook(lambda mod, args, kwargs: ((args[0] + 1,), kwargs),
                                     with_kwargs=True)
    assert np.allclose(to_np(m(dt.zeros(1, 2))), to_np(m(dt.ones(1, 2))) * 0 +
                       to_np(m.weight).sum(1) + to_np(m.bias))
    h3.remove()


def test_repr_matches_pytorch_layout():
    m = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(inplace=True),
                      nn.Sequential(nn.Flatten(), nn.Linear(4, 2, bias=False)))
    assert repr(m) == (
        "Sequential(\n"
        "  (0): Conv2d(1, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))\n"
        "  (1): ReLU(inplace=True)\n"
        "  (2): Sequential(\n"
        "    (0): Flatten(start_dim=1, end_dim=-1)\n"
        "    (1): Linear(in_features=4, out_features=2, bias=False)\n"
        "  )\n"
        ")")


def test_repr_matches_pytorch(torch):
    def build(m):
        return m.Sequential(m.Conv2d(2, 4, 3, stride=2, groups=2, bias=False),
                            m.BatchNorm2d(4), m.MaxPool2d(2), m.Dropout(0.1),
                            m.LayerNorm(8), m.Embedding(5, 3, padding_idx=0),
                            m.LSTM(3, 4, num_layers=2, batch_first=True), m.GELU(),
                            m.LeakyReLU(0.2), m.Softmax(dim=1), m.AdaptiveAvgPool2d(1),
                            m.GroupNorm(2, 4, bias=False), m.BatchNorm1d(3, affine=False),
                            m.LayerNorm(3, bias=False), m.RMSNorm(3), m.MultiheadAttention(4, 2),
                            m.TransformerEncoderLayer(4, 2, 8), m.Bilinear(2, 3, 4),
                            m.ConvTranspose2d(2, 3, 3, output_padding=1, stride=2),
                            m.Conv1d(2, 3, 3, padding="same", padding_mode="reflect"),
                            m.AvgPool2d(2), m.Hardtanh(), m.ELU(), m.Softplus(), m.Unflatten(1, (2, 2)))
    assert repr(build(nn)) == repr(build(torch.nn))


def test_containers():
    seq = nn.Sequential(OrderedDict(a=nn.Linear(2, 3), b=nn.ReLU()))
    assert seq.a is seq[0] and len(seq) == 2 and isinstance(seq[-1], nn.ReLU)
    assert isinstance(seq[:1], nn.Sequential) and len(seq[:1]) == 1
    seq.append(nn.Linear(3, 1))
    assert seq(dt.randn(4, 2)).shape == (4, 1)
    del seq[1]
    assert [type(x).__name__ for x in seq] == ["Linear", "Linear"]
    ml = nn.ModuleList([nn.Linear(1, 1) for _ in range(3)])
    ml.insert(1, nn.ReLU())
    assert isinstance(ml[1], nn.ReLU) and len(list(ml.parameters())) == 6
    md = nn.ModuleDict({"x": nn.Linear(1, 2)})
    md["y"] = nn.Tanh()
    assert list(md.keys()) == ["x", "y"] and "x" in md
    pl = nn.ParameterList([dt.ones(2), nn.Parameter(dt.zeros(1))])
    assert all(isinstance(p, nn.Parameter) for p in pl) and len(list(pl.parameters())) == 2
    pd = nn.ParameterDict({"a": dt.ones(1)})
    assert isinstance(pd["a"], nn.Parameter)
    holder = nn.Module()
    holder.layers = ml
    holder.params = pl
    assert len(list(holder.parameters())) == 8


def test_deepcopy_makes_independent_parameters():
    m = nn.Linear(2, 2)
    c = copy.deepcopy(m)
    assert isinstance(c.weight, nn.Parameter) and c.weight is not m.weight
    with dt.no_grad():
        c.weight.fill_(0)
    assert np.any(to_np(m.weight))


def test_buffer_class_registers_a_buffer():
    m = nn.Module()
    m.b = nn.Buffer(dt.ones(2), persistent=False)
    assert [n for n, _ in m.named_buffers()] == ["b"] and "b" not in m.state_dict()


def test_parameter_repr_and_requires_grad():
    p = nn.Parameter(dt.tensor([1.0, 2.0]))
    assert repr(p).startswith("Parameter containing:\ntensor([1., 2.], requires_grad=True)")
    assert not nn.Parameter(dt.zeros(1), requires_grad=False).requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(dt.tensor([1, 2]))
