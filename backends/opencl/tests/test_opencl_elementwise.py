"""Every elementwise prim of the catalogue, every dtype it takes, against the CPU
reference: 0-d, empty, 1 and prime shapes, special values, non-contiguous and
broadcast inputs, strided outputs (in-place ops write through views), > 2**20
elements, and both launch schedules."""
from __future__ import annotations

import numpy as np
import pytest

from dispatchtorch.backend import PRIMS

from _helpers import FLOATS, INTS, NP, assert_close, check_gaps, out_handle, place, sample

from dispatchtorch_opencl.host_fallbacks import HOST_FALLBACK_PRIMS

# the elementwise prims with OpenCL kernels (the documented host fallbacks have none)
ELEMENTWISE = sorted(n for n, s in PRIMS.items()
                     if s.kind == "elementwise" and n not in HOST_FALLBACK_PRIMS)
ALL_DTYPES = ("bool", *INTS, *FLOATS)
CATEGORY = {"float": FLOATS, "numeric": INTS + FLOATS, "integral": ("bool",) + INTS,
            "integer": INTS, "all": ALL_DTYPES}
COMPARE = {"eq", "ne", "lt", "le", "gt", "ge"}
DOMAIN = {"log": "pos", "log2": "pos", "log10": "pos", "log1p": "pos", "sqrt": "pos",
          "asin": "unit", "acos": "unit", "atanh": "unit", "erfinv": "unit"}


def _takes(op, dtype):
    """The dtypes the frontend sends; shifts of bool have no reference result (numpy
    refuses them, and so does PyTorch)."""
    shift = op in ("bitwise_left_shift", "bitwise_right_shift")
    return dtype in CATEGORY[PRIMS[op].dtypes] and not (shift and dtype == "bool")


def arity(op):
    return 3 if op == "where" else PRIMS[op].signature.count(",")


def allowed(op, ocl):
    have = ocl.devices()[0].dtypes
    return [d for d in ALL_DTYPES if d in have and _takes(op, d)]


def inputs(op, dtype, shape, rng):
    """Operands inside the op's domain (integer divisors non-zero, exponents >= 0)."""
    if op == "where":
        return [rng.random(shape) < 0.5, sample(rng, shape, dtype), sample(rng, shape, dtype)]
    if op == "acosh":
        return [(1 + sample(rng, shape, dtype, "pos").astype(np.float64)).astype(NP[dtype])]
    if arity(op) == 1:
        return [sample(rng, shape, dtype, DOMAIN.get(op, "normal"))]
    a = sample(rng, shape, dtype)
    b = sample(rng, shape, dtype)
    if op in ("div", "fmod") and dtype in INTS:
        b = np.where(b == 0, 3, b).astype(NP[dtype])
    if op == "pow":
        if dtype in INTS:
            b = rng.integers(0, 5, shape).astype(NP[dtype])
        else:
            a = sample(rng, shape, dtype, "pos")
    if op in ("bitwise_left_shift", "bitwise_right_shift") and dtype != "bool":
        bits = 8 * np.dtype(NP[dtype]).itemsize
        b = rng.integers(0, bits + 3, shape).astype(NP[dtype])
    return [a, b]


def out_dtype(op, dtype):
    return "bool" if op in COMPARE else dtype


def run_both(ocl, cpu, op, ins, shape, dtype, layouts=None, out_layout="contig"):
    od = out_dtype(op, dtype)
    want = np.zeros(shape, NP[od])
    cpu.kernels[op](want, *ins)
    layouts = layouts or ["contig"] * len(ins)
    handle, storage = out_handle(ocl, shape, od, out_layout)
    ocl.kernels[op](handle, *[place(ocl, x, lay) for x, lay in zip(ins, layouts)])
    got = ocl.to_host(handle)
    if out_layout != "contig":
        check_gaps(ocl, storage, shape)
    return got, want, od


PAIRS = [(op, d) for op in ELEMENTWISE for d in ALL_DTYPES if _takes(op, d)]


@pytest.mark.parametrize("op,dtype", PAIRS)
def test_values(ocl, cpu, rng, op, dtype):
    if dtype not in allowed(op, ocl):
        pytest.skip(f"opencl:0 does not support {dtype}")
    for shape in [(), (0,), (1,), (7, 13)]:
        ins = inputs(op, dtype, shape, rng)
        got, want, od = run_both(ocl, cpu, op, ins, shape, dtype)
        assert_close(got, want, od, what=f"{op} {dtype} {shape}")


SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.5, 1e-30, 1e30])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", [o for o in ELEMENTWISE if PRIMS[o].dtypes != "integral"])
def test_special_values(ocl, cpu, op, dtype):
    """NaN, infinities, signed zeros, halves (round half to even), huge and tiny."""
    if dtype not in allowed(op, ocl):
        pytest.skip(f"opencl:0 does not support {dtype}")
    with np.errstate(over="ignore"):
        x = SPECIAL.astype(NP[dtype])
    if op == "where":
        ins = [np.arange(x.size) % 2 == 0, x, x[::-1].copy()]
    elif arity(op) == 1:
        ins = [x]
    else:
        a, b = np.meshgrid(x, x)
        ins = [a.ravel().copy(), b.ravel().copy()]
    shape = ins[-1].shape
    with np.errstate(all="ignore"):
        got, want, od = run_both(ocl, cpu, op, ins, shape, dtype)
    assert_close(got, want, od, what=f"{op} {dtype} special values")


LAYOUTS = [("strided", "contig"), ("transposed", "strided"), ("broadcast", "contig"),
           ("contig", "strided")]


def _layout_dtypes(op, ocl):
    return [d for d in ("float32", "int32", "bool", "float16") if d in allowed(op, ocl)][:2]


@pytest.mark.parametrize("op", ELEMENTWISE)
def test_layouts(ocl, cpu, rng, op):
    """Non-contiguous and broadcast (stride 0) inputs, strided outputs; the gaps of a
    strided output stay untouched."""
    shape = (5, 11)
    for dtype in _layout_dtypes(op, ocl):
        for in_layout, out_layout in LAYOUTS:
            ins = inputs(op, dtype, shape, rng)
            if in_layout == "broadcast":
                ins = [np.broadcast_to(x[:1], shape).copy() for x in ins]
            layouts = [in_layout] * len(ins)
            layouts[0] = "contig" if len(ins) > 1 and in_layout != "broadcast" else layouts[0]
            got, want, od = run_both(ocl, cpu, op, ins, shape, dtype, layouts, out_layout)
            assert_close(got, want, od, what=f"{op} {dtype} in={in_layout} out={out_layout}")


def test_in_place_through_a_view(ocl, cpu, rng):
    """out aliases an input exactly (how the frontend runs x.add_(y) on a view)."""
    base = rng.standard_normal((6, 8)).astype(np.float32)
    other = rng.standard_normal((6, 4)).astype(np.float32)
    st = ocl.from_host(base, 0)
    view = ocl.as_strided(st, (6, 4), (8, 2), 1)
    ocl.kernels["add"](view, view, place(ocl, other))
    want = base.copy()
    want[:, 1::2] += other
    np.testing.assert_array_equal(ocl.to_host(st), want)


@pytest.mark.parametrize("op", ["add", "mul", "exp", "where", "lt", "bitwise_xor"])
def test_large(ocl, cpu, rng, op):
    """More than 2**20 elements, an odd count (the last chunk is partial)."""
    dtype = "int32" if op == "bitwise_xor" else "float32"
    shape = (2**20 + 3,)
    ins = inputs(op, dtype, shape, rng)
    got, want, od = run_both(ocl, cpu, op, ins, shape, dtype)
    assert_close(got, want, od, what=f"{op} large")


@pytest.mark.parametrize("op", ["add", "where", "exp", "div", "bitwise_left_shift"])
def test_schedules(ocl, cpu, rng, schedule, op):
    """The GPU-style grid schedule gives the same results as the CPU chunks."""
    dtype = "int16" if op == "bitwise_left_shift" else "float32"
    for shape in [(), (1,), (7, 13), (70001,)]:
        ins = inputs(op, dtype, shape, rng)
        got, want, od = run_both(ocl, cpu, op, ins, shape, dtype,
                                 ["transposed" if len(shape) == 2 else "contig"] * len(ins),
                                 "strided")
        assert_close(got, want, od, what=f"{op} {schedule} {shape}")


@pytest.mark.parametrize("op", ["div", "fmod"])
def test_integer_division_by_zero(ocl, op):
    a = place(ocl, np.array([4, 5, 6], np.int32))
    b = place(ocl, np.array([1, 0, 2], np.int32))
    out = ocl.empty((3,), "int32", 0)
    with pytest.raises(ZeroDivisionError):
        ocl.kernels[op](out, a, b)


def test_integer_edge_cases(ocl, cpu):
    """Wrapping: INT_MIN / -1, abs and neg of the minimum, shifts past the width."""
    for dt in ("int8", "int32", "int64"):
        info = np.iinfo(NP[dt])
        a = np.array([info.min, info.min, info.max, -7, 7, -1], NP[dt])
        b = np.array([-1, 1, -1, 2, -2, 3], NP[dt])
        for op in ("div", "fmod", "mul", "add", "sub"):
            got, want, _ = run_both(ocl, cpu, op, [a, b], a.shape, dt)
            np.testing.assert_array_equal(got, want, err_msg=f"{op} {dt}")
        for op in ("neg", "abs"):
            with np.errstate(all="ignore"):
                got, want, _ = run_both(ocl, cpu, op, [a], a.shape, dt)
            np.testing.assert_array_equal(got, want, err_msg=f"{op} {dt}")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_tanh_saturates_exactly(ocl, dtype):
    """tanh of large |x| is exactly +-1 (the vector builtin alone gives 1 - ulp, and
    then 1 + tanh(x) - as in gelu - would not be 0)."""
    if dtype not in ocl.devices()[0].dtypes:
        pytest.skip(f"opencl:0 does not support {dtype}")
    big = [25.0] if dtype == "float64" else [12.0, 25.0]        # tanh rounds to 1 there
    x = np.array([-np.inf, -1e30, *(-v for v in big), *big, 1e30, np.inf] * 3, NP[dtype])
    out = ocl.empty(x.shape, dtype, 0)
    ocl.kernels["tanh"](out, place(ocl, x))
    np.testing.assert_array_equal(ocl.to_host(out), np.sign(x))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32", "int8"])
def test_fused_relu(ocl, rng, dtype):
    """relu has a kernel of its own; it keeps NaN, as PyTorch's does."""
    op = "relu"
    if dtype not in ocl.devices()[0].dtypes:
        pytest.skip(f"opencl:0 does not support {dtype}")
    x = sample(rng, (7, 13), dtype)
    if dtype in FLOATS:
        x.reshape(-1)[:5] = [np.nan, np.inf, -np.inf, 100.0, -100.0]
    xf = x.astype(np.float64)
    with np.errstate(all="ignore"):
        want = np.where(np.isnan(xf), np.nan, np.maximum(xf, 0))
    out = ocl.empty(x.shape, dtype, 0)
    ocl.kernels[op](out, place(ocl, x, "transposed"))
    assert_close(ocl.to_host(out), want.astype(NP[dtype]), dtype, what=f"{op} {dtype}")


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("op", ["sin", "cos", "tan", "exp", "log1p", "atan", "erf"])
def test_vector_lanes_are_independent(ocl, cpu, op, dtype):
    """Math builtins run eight elements per call; a huge element must not spoil a tiny
    one in the same vector (PoCL's vector sin did: sin(-1e-7) next to 1e10)."""
    big = 1e4 if dtype == "float16" else 1e10
    x = np.array([big, -1e-7, 1e-7, 0.5, 1e-30, 3.0, -np.inf, 2.0] * 3, np.float64)
    x = np.where(np.isfinite(x) | (op != "log1p"), x, 1.0).astype(NP[dtype])
    with np.errstate(all="ignore"):
        got, want, od = run_both(ocl, cpu, op, [x], x.shape, dtype)
    assert_close(got, want, od, what=f"{op} {dtype} mixed lanes")
