"""Every elementwise op of the core against numpy computed in float64."""
import numpy as np
import pytest
import scipy.special

import dispatchtorch as torch

RNG = np.random.default_rng(1234)


def _domain(name):
    if name in ("log", "log2", "log10", "sqrt", "rsqrt"):
        return 0.1, 5.0
    if name in ("asin", "acos", "atanh", "erfinv"):
        return -0.95, 0.95
    if name == "acosh":
        return 1.05, 5.0
    if name == "log1p":
        return -0.9, 5.0
    return -3.0, 3.0


UNARY = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "erf": scipy.special.erf, "erfc": scipy.special.erfc,
    "erfinv": scipy.special.erfinv, "neg": np.negative, "abs": np.abs,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "relu": lambda x: np.maximum(x, 0),
    "rsqrt": lambda x: 1 / np.sqrt(x), "reciprocal": lambda x: 1 / x, "square": np.square,
    "sign": np.sign, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "round": np.round,
}
TOL = {torch.float32: 2e-6, torch.float64: 1e-12}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float(name, dtype):
    lo, hi = _domain(name)
    x = RNG.uniform(lo, hi, size=(5, 7)).astype(dtype.np)
    if name == "reciprocal":
        x[np.abs(x) < 0.1] = 0.5
    t = torch.tensor(x)
    out = getattr(torch, name)(t)
    assert out.dtype is dtype and out.shape == (5, 7)
    expected = UNARY[name](x.astype(np.float64))
    np.testing.assert_allclose(out.numpy().astype(np.float64), expected, rtol=TOL[dtype] * 4,
                               atol=TOL[dtype])


@pytest.mark.parametrize("name", ["exp", "sqrt", "sin", "tanh"])
def test_unary_non_contiguous_and_0d(name):
    x = RNG.uniform(0.1, 2, size=(4, 6))
    t = torch.tensor(x)
    np.testing.assert_allclose(getattr(torch, name)(t.T).numpy(), UNARY[name](x.T), rtol=1e-12)
    np.testing.assert_allclose(getattr(torch, name)(t[:, ::2]).numpy(), UNARY[name](x[:, ::2]),
                               rtol=1e-12)
    z = getattr(torch, name)(torch.tensor(0.5, dtype=torch.float64))
    assert z.shape == () and z.item() == pytest.approx(float(UNARY[name](0.5)), rel=1e-12)


def test_unary_on_integers_promotes_to_float():
    x = torch.tensor([1, 4, 9])
    r = torch.sqrt(x)
    assert r.dtype is torch.float32 and r.tolist() == [1.0, 2.0, 3.0]
    assert torch.abs(torch.tensor([-3, 2])).tolist() == [3, 2]
    assert torch.neg(torch.tensor([1], dtype=torch.int8)).dtype is torch.int8


BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "maximum": np.maximum, "minimum": np.minimum, "atan2": np.arctan2, "pow": np.power,
    "fmod": np.fmod, "remainder": np.mod,
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_float_with_broadcasting(name, dtype):
    a = RNG.uniform(0.5, 3, size=(4, 1, 3)).astype(dtype.np)
    b = RNG.uniform(0.5, 3, size=(5, 1)).astype(dtype.np)
    if name in ("sub", "fmod", "remainder", "atan2"):
        a -= 1.7
        b -= 1.2
        b[np.abs(b) < 0.1] = 0.3
    out = getattr(torch, name)(torch.tensor(a), torch.tensor(b))
    expected = BINARY[name](a.astype(np.float64), b.astype(np.float64))
    assert out.shape == (4, 5, 3) and out.dtype is dtype
    np.testing.assert_allclose(out.numpy(), expected, rtol=TOL[dtype] * 8, atol=TOL[dtype] * 8)


INT_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum,
    "minimum": np.minimum, "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor, "floor_divide": np.floor_divide, "remainder": np.mod,
    "fmod": np.fmod,
}


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8])
@pytest.mark.parametrize("name", sorted(INT_BINARY))
def test_binary_integers_exact(name, dtype):
    lo = 0 if dtype is torch.uint8 else -20
    a = RNG.integers(lo, 20, size=(6, 5)).astype(dtype.np)
    b = RNG.integers(1, 9, size=(5,)).astype(dtype.np)
    if dtype is not torch.uint8:
        b[::2] *= -1
    out = getattr(torch, name)(torch.tensor(a), torch.tensor(b))
    assert out.dtype is dtype
    np.testing.assert_array_equal(out.numpy(), INT_BINARY[name](a, b))


def test_integer_division_modes():
    a = torch.tensor([7, -7, 7, -7])
    b = torch.tensor([2, 2, -2, -2])
    assert torch.div(a, b).tolist() == [3.5, -3.5, -3.5, 3.5]
    assert torch.div(a, b, rounding_mode="trunc").tolist() == [3, -3, -3, 3]
    assert torch.div(a, b, rounding_mode="floor").tolist() == [3, -4, -4, 3]
    assert (a // b).tolist() == [3, -4, -4, 3]
    assert (a % b).tolist() == [1, 1, -1, -1]
    assert torch.fmod(a, b).tolist() == [1, -1, 1, -1]
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        torch.div(a, torch.zeros(4, dtype=torch.int64), rounding_mode="trunc")


def test_float_floor_divide_matches_python():
    a = [7.5, -7.5, 7.5, -7.5, 1.0, -0.0]
    b = [2.0, 2.0, -2.0, -2.0, 0.1, 3.0]
    out = torch.floor_divide(torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64))
    assert out.tolist() == [x // y for x, y in zip(a, b)]


@pytest.mark.parametrize("op,fn", [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                                   ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)])
def test_comparisons_with_nan(op, fn):
    a = np.array([1.0, np.nan, 3.0, -np.inf, 2.0])
    b = np.array([1.0, np.nan, 2.0, -np.inf, np.nan])
    out = getattr(torch, op)(torch.tensor(a), torch.tensor(b))
    assert out.dtype is torch.bool
    np.testing.assert_array_equal(out.numpy(), fn(a, b))


def test_maximum_minimum_propagate_nan():
    a = torch.tensor([1.0, float("nan"), 3.0])
    b = torch.tensor([float("nan"), 0.0, 1.0])
    assert np.isnan(torch.maximum(a, b).numpy()[:2]).all()
    assert torch.minimum(a, b)[2].item() == 1.0


def test_where_and_clamp():
    x = np.array([-2.0, -0.5, 0.0, 0.5, 2.0, np.nan])
    t = torch.tensor(x)
    np.testing.assert_array_equal(torch.where(t > 0, t, 0.0).numpy(), np.where(x > 0, x, 0.0))
    np.testing.assert_array_equal(torch.clamp(t, -1, 1).numpy(), np.clip(x, -1, 1))
    np.testing.assert_array_equal(t.clamp(min=0).numpy(), np.maximum(x, 0))
    lo, hi = torch.tensor([-1.0] * 6, dtype=torch.float64), torch.tensor([0.1] * 6, dtype=torch.float64)
    np.testing.assert_array_equal(torch.clamp(t, lo, hi).numpy(), np.clip(x, -1, 0.1))


def test_bool_arithmetic_follows_pytorch():
    a = torch.tensor([True, False, True])
    b = torch.tensor([True, True, False])
    assert (a + b).tolist() == [True, True, True] and (a + b).dtype is torch.bool
    assert (a * b).tolist() == [True, False, False]
    assert (a & b).tolist() == [True, False, False] and (~a).tolist() == [False, True, False]
    with pytest.raises(RuntimeError, match="Subtraction"):
        a - b
    with pytest.raises(RuntimeError, match="Negation"):
        -a


def test_low_precision_computes_in_float32():
    x = np.array([1.0, 2.0, 3.0001, 1e-3], dtype=np.float32)
    for dt in (torch.float16, torch.bfloat16):
        t = torch.tensor(x).to(dt)
        out = torch.exp(t)
        assert out.dtype is dt
        ref = np.exp(t.float().numpy().astype(np.float64))
        np.testing.assert_allclose(out.float().numpy(), ref, rtol=1e-2)


def test_integer_pow_and_negative_exponent_error():
    assert torch.pow(torch.tensor([2, 3]), 3).tolist() == [8, 27]
    with pytest.raises(RuntimeError, match="negative integer powers"):
        torch.pow(torch.tensor([2]), -1)
    assert (2 ** torch.tensor([1.0, 2.0])).tolist() == [2.0, 4.0]
