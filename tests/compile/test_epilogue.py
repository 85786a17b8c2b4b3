"""linear + relu as one backend call in compiled graphs (_compile/epilogue.py,
Backend.fuse_epilogue): the MLP's outputs and gradients equal eager's bit for bit on
cpu and OpenCL (a NaN through the ReLUs included), two launches fewer, explain
names the epilogue; not fused where the linear's result is read elsewhere; OpenCL's
fallback (a layout its ReLU-storing kernel does not take) equals eager too."""
import copy

import numpy as np
import pytest

import dispatchtorch as torch
from tests.compile.compile_helpers import DEVICES, _entries, _np, _opencl_ready


def _mlp(dev):
    torch.manual_seed(0)
    nn = torch.nn
    return nn.Sequential(nn.Linear(24, 40), nn.ReLU(), nn.Linear(40, 40), nn.ReLU(),
                         nn.Linear(40, 10)).to(dev)


def _run(model, params, x):
    for p in params:
        p.grad = None
    out = model(x)
    out.square().sum().backward()
    return [_np(out)] + [_np(p.grad) for p in params]


def _same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))


@pytest.mark.parametrize("dev", DEVICES)
def test_mlp_with_fused_epilogues_equals_eager_bit_for_bit(dev):
    m = _mlp(dev)
    m2 = copy.deepcopy(m)
    cm = torch.compile(m2)
    xs = np.random.default_rng(0).standard_normal((7, 24)).astype(np.float32)
    xs[2, 0] = np.nan           # row 2 NaN through both ReLUs (relu(NaN) is NaN)
    x = torch.tensor(xs, device=dev)
    want = _run(m, list(m.parameters()), x)
    _run(cm, list(m2.parameters()), x)                 # captures
    got = _run(cm, list(m2.parameters()), x)
    for a, b in zip(got, want):
        _same_bits(a, b)
    assert np.isnan(got[0][2]).all() and not np.isnan(got[0][[0, 1, 3]]).any()
    entry, = _entries(cm._compiled)
    assert len(entry.forward.epilogues) == 2
    # 2 relu launches and 2 fused regions fewer; on OpenCL the 2 ReLU backwards are in
    # the input-gradient GEMMs' stores too (test_relu_grad_epilogue.py), the CPU
    # has no such kernel: its backward keeps the regions
    assert entry.launches() == ((17, 13) if dev == "cpu" else (17, 11))
    assert len(entry.backward.epilogues) == (0 if dev == "cpu" else 2)
    text = entry.explain()
    assert "2 fused epilogues" in text and text.count("linear + relu epilogue") == 2


@pytest.mark.parametrize("dev", DEVICES)
def test_a_linear_result_read_elsewhere_is_not_fused(dev):
    F = torch.nn.functional
    w, b = torch.randn(6, 5, device=dev), torch.randn(6, device=dev)

    def f(x):
        y = F.linear(x, w, b)
        return F.relu(y), y * 2.0           # y itself is read again

    def g(x):
        return F.relu(F.linear(x, w, b))

    x = torch.randn(4, 5, device=dev)
    for fn, fused in ((f, 0), (g, 1)):
        cf = torch.compile(fn)
        cf(x)
        got, want = cf(x), fn(x)
        for a, c in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            _same_bits(_np(a), _np(c))
        entry, = _entries(cf)
        assert len(entry.forward.epilogues) == fused


@pytest.mark.skipif(not _opencl_ready(), reason="no OpenCL device")
def test_opencl_epilogue_fallback_equals_eager(monkeypatch):
    from dispatchtorch_opencl.kernels import matmul_direct
    monkeypatch.setattr(matmul_direct, "MAX_WORK", 16)    # the packed kernels (their relu epilogue)
    F = torch.nn.functional
    w, b = torch.randn(6, 5, device="opencl"), torch.randn(6, device="opencl")
    x = torch.randn(4, 5, device="opencl")
    cf = torch.compile(lambda a: F.relu(F.linear(a, w, b)))
    cf(x)
    _same_bits(_np(cf(x)), _np(F.relu(F.linear(x, w, b))))
    entry, = _entries(cf)
    assert len(entry.forward.epilogues) == 1


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("shape,bias,dtype", [((2, 7, 20), True, "float32"),
                                              ((20,), False, "float64"),
                                              ((5, 20), False, "float32")])
def test_batched_unbiased_and_float64_epilogues_equal_eager(dev, shape, bias, dtype):
    F = torch.nn.functional
    dt = getattr(torch, dtype)
    w = torch.randn(33, 20, device=dev, dtype=dt)
    b = torch.randn(33, device=dev, dtype=dt) if bias else None
    x = torch.randn(*shape, device=dev, dtype=dt)
    cf = torch.compile(lambda a: F.relu(F.linear(a, w, b)))
    cf(x)
    _same_bits(_np(cf(x)).view(np.uint32), _np(F.relu(F.linear(x, w, b))).view(np.uint32))
    entry, = _entries(cf)
    assert len(entry.forward.epilogues) == 1
