"""matmul + ReLU's backward as one backend call in compiled graphs (the
("matmul", "threshold_backward") epilogue of _compile/epilogue.py, OpenCL's
kernels/matmul_relu_grad.py): equal to eager bit for bit (NaN, -0.0 and exact zeros
in the ReLU's result, partial blocks, the edge columns), fewer launches; not fused
where the product or the mask is read elsewhere, or the threshold is not 0; a backend
without the kernel (the CPU) replays the prims; OpenCL's fallback layouts equal eager.
The eager answer is computed independently with numpy float64 where the GEMM
rounding allows (the fused and unfused GEMM run the same kernel: bits are compared
against eager dispatchtorch)."""
import copy

import numpy as np
import pytest

import dispatchtorch as torch
from tests.compile.compile_helpers import DEVICES, _entries, _np, _opencl_ready

needs_opencl = pytest.mark.skipif(not _opencl_ready(), reason="no OpenCL device")


def _same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(np.atleast_1d(a).view(np.uint8), np.atleast_1d(b).view(np.uint8))


def _masked_product(a, b, h):
    return torch.where(h <= 0, 0.0, a @ b)


def _inputs(dev, M, K, N, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    h = np.maximum(rng.standard_normal((M, N)), 0).astype(dtype)   # a ReLU's result
    h.flat[::7] = np.nan          # NaN keeps the product (NaN <= 0 is false)
    h.flat[3::11] = -0.0          # -0.0 <= 0: zeroed
    return [torch.tensor(x, device=dev) for x in (a, b, h)], (a, b, h)


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("M,K,N,dtype", [(7, 40, 40, np.float32),     # 32 columns + 8 edge
                                         (13, 10, 512, np.float32),   # the MLP head's K
                                         (6, 33, 48, np.float64),
                                         (1, 5, 16, np.float32)])
def test_masked_product_equals_eager_bit_for_bit(dev, M, K, N, dtype):
    (a, b, h), (an, bn, hn) = _inputs(dev, M, K, N, dtype)
    cf = torch.compile(_masked_product)
    cf(a, b, h)
    got, want = _np(cf(a, b, h)), _np(_masked_product(a, b, h))
    _same_bits(got, want)
    ref = np.where(hn <= 0, 0.0, an.astype(np.float64) @ bn.astype(np.float64))
    np.testing.assert_allclose(got, ref, rtol=1e-4 if dtype == np.float32 else 1e-12,
                               atol=1e-4 if dtype == np.float32 else 1e-12)
    assert (np.signbit(got[hn <= 0]) == 0).all() and (got[hn <= 0] == 0).all()
    entry, = _entries(cf)
    fused = len(entry.forward.epilogues)
    assert fused == (0 if dev == "cpu" else 1)
    # eager: matmul, le, where; compiled: one launch on OpenCL, the matmul and one
    # fused (le, where) region on the CPU
    assert entry.launches() == (3, 1 if fused else 2)
    if fused:
        assert "matmul + threshold_backward epilogue" in entry.explain()


@needs_opencl
@pytest.mark.parametrize("case", ["product_returned", "mask_returned", "threshold", "other_zero"])
def test_not_fused_where_the_graph_forbids_it(case):
    (a, b, h), _ = _inputs("opencl", 8, 16, 32)

    def fn(a, b, h):
        p = a @ b
        m = h <= (0.5 if case == "threshold" else 0)
        out = torch.where(m, 1.0 if case == "other_zero" else 0.0, p)
        if case == "product_returned":
            return out, p
        if case == "mask_returned":
            return out, m
        return out

    cf = torch.compile(fn)
    cf(a, b, h)
    got, want = cf(a, b, h), fn(a, b, h)
    for x, y in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        _same_bits(_np(x), _np(y))
    entry, = _entries(cf)
    assert len(entry.forward.epilogues) == 0


@needs_opencl
def test_an_input_written_between_the_product_and_the_where_is_not_fused():
    (a, b, h), _ = _inputs("opencl", 8, 16, 32)

    def fn(a, b, h):
        p = a @ b
        m = h <= 0
        a.mul_(2.0)               # a changes after the product read it
        return torch.where(m, 0.0, p)

    a2 = a.clone()
    cf = torch.compile(fn)
    cf(a2.clone(), b, h)
    x1, x2 = a2.clone(), a2.clone()
    _same_bits(_np(cf(x1, b, h)), _np(fn(x2, b, h)))
    _same_bits(_np(x1), _np(x2))
    entry, = _entries(cf)
    assert len(entry.forward.epilogues) == 0


def _launched(monkeypatch):
    """The names of the OpenCL kernels launched from now on."""
    from dispatchtorch_opencl.device import Device
    names, launch = [], Device.launch

    def counted(self, kernel, *args):
        names.append(kernel.function_name)
        return launch(self, kernel, *args)
    monkeypatch.setattr(Device, "launch", counted)
    return names


@needs_opencl
@pytest.mark.parametrize("case,masked_in", [
    ("2d", "mmnn"), ("lead_dims", "mmnn"), ("packed", "mmmicro"), ("packed_edge", "mmmicro"),
    ("batched_b", None), ("strided_mask", None)])
def test_opencl_layouts_equal_eager(monkeypatch, case, masked_in):
    """Each layout equals eager bit for bit; the mask is in the GEMM kernel's store
    (the direct nn kernel, the packed micro-kernel: 2-D, or leading dims laid out as
    one with b shared) or, where neither takes it, one masking pass after the matmul."""
    from dispatchtorch_opencl.kernels import matmul_direct
    N = 45 if case == "packed_edge" else 48        # (45: partial micro-kernel blocks)
    (a, b, h), _ = _inputs("opencl", 9 if case != "lead_dims" else 12, 20, N)
    if case.startswith("packed"):
        monkeypatch.setattr(matmul_direct, "MAX_WORK", 16)     # past the direct kernels
    elif case == "lead_dims":
        a, h = a.reshape(3, 4, 20), h.reshape(3, 4, N)
    elif case == "batched_b":
        a, h = a.reshape(3, 3, 20), h.reshape(3, 3, N)
        b = torch.stack([b, b * 2.0, -b])
    elif case == "strided_mask":
        h = h.t().contiguous().t()                              # columns contiguous
    cf = torch.compile(_masked_product)
    cf(a, b, h)
    names = _launched(monkeypatch)
    got = _np(cf(a, b, h))
    monkeypatch.undo()
    _same_bits(got, _np(_masked_product(a, b, h)))
    entry, = _entries(cf)
    if case == "strided_mask":
        # the mask's comparison keeps h's column-major layout (PyTorch's TensorIterator
        # rule, docs/architecture.md), so its region runs through permuted views, which
        # the capture does not fuse: the matmul and the masking stay separate kernels
        assert len(entry.forward.epilogues) == 0
        return
    assert len(entry.forward.epilogues) == 1
    if masked_in is None:
        assert names[-1].startswith("ew_relu_grad_mask") and not any("mask" in n for n in names[:-1])
    else:
        assert [n for n in names if "mask" in n] == [n for n in names if n.startswith(masked_in)][-1:]
        assert names[-1].startswith(masked_in) and names[-1].endswith("mask")


@pytest.mark.parametrize("dev", DEVICES)
def test_mlp_backward_fuses_both_relu_gradients(dev):
    """The MLP of compile_bench (3 Linear, 2 ReLU): outputs and every gradient equal
    eager's bit for bit; on OpenCL the backward's two (le, where) regions are gone."""
    torch.manual_seed(0)
    nn = torch.nn
    m = nn.Sequential(nn.Linear(64, 96), nn.ReLU(), nn.Linear(96, 96), nn.ReLU(),
                      nn.Linear(96, 10)).to(dev)
    m2 = copy.deepcopy(m)
    cm = torch.compile(m2)
    x = torch.tensor(np.random.default_rng(1).standard_normal((33, 64)).astype(np.float32),
                     device=dev)
    y = torch.tensor(np.random.default_rng(2).integers(0, 10, 33), device=dev)

    def step(model, params):
        for p in params:
            p.grad = None
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        return [_np(loss)] + [_np(p.grad) for p in params]

    want = step(m, list(m.parameters()))
    step(cm, list(m2.parameters()))
    got = step(cm, list(m2.parameters()))
    for g, w in zip(got, want):
        _same_bits(g, w)
    entry, = _entries(cm._compiled)
    assert len(entry.backward.epilogues) == (0 if dev == "cpu" else 2)
    e, c = entry.launches()
    assert e - c == (4 if dev == "cpu" else 6)
