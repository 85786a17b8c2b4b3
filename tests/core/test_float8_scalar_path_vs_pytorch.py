"""float8 in the binary arithmetic ops, against PyTorch 2.13: mul runs tensor by tensor but
refuses a CPU scalar second operand (a number, a 0-d tensor, anything broadcast from one
element: TensorIterator's is_scalar), naming the kernel of the path taken, as div,
floor/trunc division and remainder do; comparisons and promotion refusals unchanged."""
import warnings

import pytest
import torch

import dispatchtorch as dt

FLOAT8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"]


def _t(lib, name, *shape):
    return lib.ones(shape).to(getattr(lib, name))


CASES = {
    "x * 2": lambda L, n: _t(L, n, 3) * 2, "2 * x": lambda L, n: 2 * _t(L, n, 3),
    "x * 2.5": lambda L, n: _t(L, n, 3) * 2.5, "x * True": lambda L, n: _t(L, n, 3) * True,
    "x * x": lambda L, n: _t(L, n, 3) * _t(L, n, 3),
    "x * 0-d": lambda L, n: _t(L, n, 3) * _t(L, n),
    "0-d * x": lambda L, n: _t(L, n) * _t(L, n, 3),
    "0-d * 0-d": lambda L, n: _t(L, n) * _t(L, n),
    "x * [1]": lambda L, n: _t(L, n, 3) * _t(L, n, 1),
    "[1] * x": lambda L, n: _t(L, n, 1) * _t(L, n, 3),
    "x(3,1) * [1]": lambda L, n: _t(L, n, 3, 1) * _t(L, n, 1),
    "x(3,1) * (1,3)": lambda L, n: _t(L, n, 3, 1) * _t(L, n, 1, 3),
    "x * expanded": lambda L, n: _t(L, n, 3) * _t(L, n, 1).expand(3),
    "empty * [1]": lambda L, n: _t(L, n, 0) * _t(L, n, 1),
    "x * int64 0-d": lambda L, n: _t(L, n, 3) * L.tensor(2),
    "mul(True, x)": lambda L, n: L.mul(True, _t(L, n, 3)),
    "mul_(2)": lambda L, n: _t(L, n, 3).mul_(2),
    "mul_(x)": lambda L, n: _t(L, n, 3).mul_(_t(L, n, 3)),
    "mul out=": lambda L, n: L.mul(_t(L, n, 3), 2, out=_t(L, n, 3)),
    "x * float32": lambda L, n: _t(L, n, 3) * L.ones(3),
    "x + 1": lambda L, n: _t(L, n, 3) + 1, "1 - x": lambda L, n: 1 - _t(L, n, 3),
    "add alpha": lambda L, n: L.add(_t(L, n, 3), _t(L, n, 3), alpha=2),
    "sub alpha": lambda L, n: L.sub(_t(L, n, 3), 2, alpha=2),
    "x / 2": lambda L, n: _t(L, n, 3) / 2, "x / x": lambda L, n: _t(L, n, 3) / _t(L, n, 3),
    "2 / x": lambda L, n: 2 / _t(L, n, 3), "div_(2)": lambda L, n: _t(L, n, 3).div_(2),
    "x // 2": lambda L, n: _t(L, n, 3) // 2, "x // x": lambda L, n: _t(L, n, 3) // _t(L, n, 3),
    "floor_divide_(2)": lambda L, n: _t(L, n, 3).floor_divide_(2),
    "div floor": lambda L, n: L.div(_t(L, n, 3), 2, rounding_mode="floor"),
    "div trunc": lambda L, n: L.div(_t(L, n, 3), 2, rounding_mode="trunc"),
    "div trunc x": lambda L, n: L.div(_t(L, n, 3), _t(L, n, 3), rounding_mode="trunc"),
    "x % 2": lambda L, n: _t(L, n, 3) % 2, "x % x": lambda L, n: _t(L, n, 3) % _t(L, n, 3),
    "x == 1": lambda L, n: _t(L, n, 3) == 1, "x != x": lambda L, n: _t(L, n, 3) != _t(L, n, 3),
    "x < 1": lambda L, n: _t(L, n, 3) < 1, "x >= x": lambda L, n: _t(L, n, 3) >= _t(L, n, 3),
}


def _outcome(lib, fn, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn(lib, name)
        except Exception as e:                 # noqa: BLE001 - class and message compared
            return type(e).__name__, str(e)
    return str(r.dtype).split(".")[-1], r.float().tolist()


@pytest.mark.parametrize("name", FLOAT8)
@pytest.mark.parametrize("case", CASES)
def test_as_pytorch(case, name):
    assert _outcome(dt, CASES[case], name) == _outcome(torch, CASES[case], name)


def test_the_scalar_path_is_refused_and_the_tensor_path_runs():
    x = _t(dt, "float8_e4m3fn", 3)
    assert (x * x).float().tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(NotImplementedError,
                       match="\"mul_cpu_reduced_float\" not implemented for 'Float8_e4m3fn'"):
        x * 2
