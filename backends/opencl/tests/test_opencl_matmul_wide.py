"""The CPU matmul kernels' 512-bit forms (PoCL on AVX-512: the nn kernel's 16-lane
blocks, the packed micro-kernel's 8x16 block with its bias and ReLU epilogue, "nt"
products sent to the packed kernels) and 256-bit forms (6-row nn and packed float32
blocks) against numpy in float64, on any CPU device: the device's vector widths are
set for each test, so both forms run everywhere."""
from __future__ import annotations

import numpy as np
import pytest

from _helpers import assert_close, place, sample
from dispatchtorch_opencl.kernels import linear as L
from dispatchtorch_opencl.kernels import matmul as MM


@pytest.fixture(params=[8, 16], ids=["256-bit", "512-bit"])
def width(request, device, monkeypatch):
    """The device's float32 vector width as the kernels read it (float64: half)."""
    if not device.loop:
        pytest.skip("the CPU kernels only")
    monkeypatch.setattr(device, "vector_width", {"float32": request.param,
                                                 "float64": request.param // 2})
    return request.param


def _launched(device, monkeypatch):
    names = []
    real = type(device).launch

    def launch(self, kernel, *a):
        names.append(kernel.function_name)
        return real(self, kernel, *a)
    monkeypatch.setattr(type(device), "launch", launch)
    return names


def _relu(v):
    return np.where((v > 0) | np.isnan(v), v, 0.0)


# rows past an 8-row block, columns past a 16/32-lane block, k = 1, one row
SHAPES = [(13, 7, 37), (8, 16, 32), (1, 1, 17), (21, 40, 70), (3, 33, 16)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["nn", "nt", "tn"])
def test_products_equal_float64(ocl, width, rng, dtype, layout):
    for m, k, n in SHAPES:
        a = sample(rng, (m, k), dtype)
        b = sample(rng, (k, n), dtype)
        out = ocl.empty((m, n), dtype, 0)
        la, lb = {"nn": ("contig", "contig"), "nt": ("contig", "transposed"),
                  "tn": ("transposed", "contig")}[layout]
        ocl.kernels["matmul"](out, place(ocl, a, la), place(ocl, b, lb))
        want = a.astype(np.float64) @ b
        tol = 1e-4 if dtype == "float32" else 1e-10
        assert_close(ocl.to_host(out), want, dtype, rtol=tol, atol=tol,
                     what=f"matmul {dtype} {m}x{k}x{n} {layout} width {width}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_packed_bias_and_relu_epilogues(ocl, width, rng, monkeypatch, dtype):
    """linear and linear + relu through the packed micro-kernel (the direct kernels
    switched off): bias added and NaN kept through the ReLU, -0.0 and negatives to +0."""
    from dispatchtorch_opencl.kernels import matmul_direct
    monkeypatch.setattr(matmul_direct, "MAX_WORK", 0)
    names = _launched(ocl.device(0), monkeypatch)
    for m, k, n in SHAPES:
        x = sample(rng, (m, k), dtype)
        x[0, 0] = np.nan                       # row 0 NaN through the product and the ReLU
        w = sample(rng, (n, k), dtype)
        bias = sample(rng, (n,), dtype)
        want = x.astype(np.float64) @ w.T.astype(np.float64) + bias
        for relu in (False, True):
            out = ocl.empty((m, n), dtype, 0)
            names.clear()
            (L.linear_relu if relu else L.linear)(out, place(ocl, x), place(ocl, w), place(ocl, bias))
            assert [s for s in names if s.startswith("mmmicro")] == \
                [f"mmmicro_{dtype}_bias{'_relu' if relu else ''}"], names
            assert len(names) == 3, names          # two packs and the product: no add, no relu
            got = ocl.to_host(out)
            exp = _relu(want) if relu else want
            tol = 1e-4 if dtype == "float32" else 1e-10
            assert_close(got, exp, dtype, rtol=tol, atol=tol,
                         what=f"linear{'+relu' if relu else ''} {dtype} {m}x{k}x{n} width {width}")
            if relu:
                assert not np.signbit(got[~np.isnan(got)]).any()       # no -0.0 left


def test_relu_epilogue_of_negative_zero(ocl, width, monkeypatch):
    """A product of -0.0 (and a negative value) rectified to +0.0, as eager's relu gives."""
    from dispatchtorch_opencl.kernels import matmul_direct
    monkeypatch.setattr(matmul_direct, "MAX_WORK", 0)
    x = np.array([[-0.0], [1.0]], np.float32)
    w = np.array([[1.0], [-1.0]], np.float32)
    out = ocl.empty((2, 2), "float32", 0)
    L.linear_relu(out, place(ocl, x), place(ocl, w), None)
    got = ocl.to_host(out)
    assert (got == 0).sum() == 3 and got[1, 0] == 1 and not np.signbit(got).any()


def test_wide_devices_route_nt_products(ocl, device, rng, monkeypatch):
    """On 512-bit devices a Linear forward's "nt" product runs on the packed kernels
    (with the bias in their store); a narrow one (N < 16) and long dot products stay in
    the direct nt kernel; a (B, T, K) input is one (B*T, K) product."""
    if not device.loop:
        pytest.skip("the CPU kernels only")
    monkeypatch.setattr(device, "vector_width", {"float32": 16, "float64": 8})
    names = _launched(device, monkeypatch)
    for lead, k, n, want in [((20,), 24, 40, "mmmicro_float32_bias"),
                             ((20,), 24, 10, "mmnt_float32_1_bias"),
                             ((3, 7), 24, 40, "mmmicro_float32_bias"),
                             ((4,), 2048, 40, "mmnt_float32_1_bias")]:
        x = sample(rng, lead + (k,), "float32")
        w = sample(rng, (n, k), "float32")
        bias = sample(rng, (n,), "float32")
        out = ocl.empty(lead + (n,), "float32", 0)
        names.clear()
        L.linear(out, place(ocl, x), place(ocl, w), place(ocl, bias))
        assert names[-1] == want, (lead, k, n, names)
        if want.startswith("mmmicro"):
            # both operands' rows contiguous along k: the packs' vector-load form
            assert names[:2] == ["mmpack_a_float32_1_rows", "mmpack_b_float32_1_rows"], names
        assert_close(ocl.to_host(out), x.astype(np.float64) @ w.T + bias, "float32",
                     rtol=1e-4, atol=1e-4, what=f"linear {lead} {k} {n}")
    monkeypatch.setattr(device, "vector_width", {"float32": 8, "float64": 4})
    # 256-bit devices: float32 on the packed 6x16 block (a narrow b direct), float64 direct
    for n, dtype, want in [(10, "float32", ["mmnt_float32_1"]),
                           (40, "float32", ["mmpack_a_float32_1_rows", "mmpack_b_float32_1_rows",
                                            "mmmicro_float32"]),
                           (40, "float64", ["mmnt_float64_1"])]:
        x, w = sample(rng, (20, 24), dtype), sample(rng, (n, 24), dtype)
        out = ocl.empty((20, n), dtype, 0)
        names.clear()
        L.linear(out, place(ocl, x), place(ocl, w), None)
        assert names == want, (n, dtype, names)
        tol = 1e-4 if dtype == "float32" else 1e-10
        assert_close(ocl.to_host(out), x.astype(np.float64) @ w.T, dtype, rtol=tol, atol=tol,
                     what=f"linear 20x{n}x24 {dtype} 256-bit")


def test_linear_of_strided_lead_dims(ocl, width, rng):
    """Lead dims that are not one run of memory (a transposed (B, T) view) stay a
    batched product, and still equal numpy."""
    x = sample(rng, (5, 3, 24), "float32")
    h = ocl.as_strided(place(ocl, x), (3, 5, 24), (24, 72, 1), 0)       # x.transpose(0, 1)
    w, bias = sample(rng, (40, 24), "float32"), sample(rng, (40,), "float32")
    out = ocl.empty((3, 5, 40), "float32", 0)
    L.linear(out, h, place(ocl, w), place(ocl, bias))
    want = x.transpose(1, 0, 2).astype(np.float64) @ w.T + bias
    assert_close(ocl.to_host(out), want, "float32", rtol=1e-4, atol=1e-4, what="strided lead")
